// Filters: every element with data-item is shown only if it passes every control.
(function () {
  "use strict";
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-item]"));
  var counter = document.getElementById("shown-count");
  function control(name) { return document.querySelector('[data-filter="' + name + '"]'); }
  function checkedOutcomes() {
    var boxes = document.querySelectorAll('input[data-filter="outcome"]');
    if (!boxes.length) { return null; }
    var chosen = {};
    Array.prototype.forEach.call(boxes, function (box) { chosen[box.value] = box.checked; });
    return chosen;
  }
  function apply() {
    var outcomes = checkedOutcomes();
    var family = control("family") ? control("family").value : "";
    var type = control("type") ? control("type").value : "";
    var text = control("text") ? control("text").value.trim().toLowerCase() : "";
    var disagree = control("disagree") ? control("disagree").checked : false;
    var shown = 0;
    items.forEach(function (item) {
      var d = item.dataset;
      var visible = (!outcomes || outcomes[d.outcome]) &&
        (!family || d.family === family) && (!type || d.type === type) &&
        (!text || item.textContent.toLowerCase().indexOf(text) >= 0) &&
        (!disagree || d.disagree === "yes");
      item.hidden = !visible;
      if (visible) { shown += 1; }
    });
    if (counter) { counter.textContent = String(shown); }
  }
  function reset() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-filter]"), function (el) {
      if (el.type === "checkbox") { el.checked = el.dataset.filter === "outcome"; } else { el.value = ""; }
    });
    apply();
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-filter]"), function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  var resetButton = document.getElementById("reset-filters");
  if (resetButton) { resetButton.addEventListener("click", reset); }
  // A link to a question hidden by the filters shows it again.
  window.addEventListener("hashchange", function () {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && target.hidden) { reset(); target.scrollIntoView(); }
  });
  apply();
}());
