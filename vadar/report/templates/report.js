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
// Pictures: each label is set beside its box, never over it, away from the other labels (with a
// leader line when it sits apart); a label with no free place stays listed under the picture.
// A click on a picture opens it large.
(function () {
  "use strict";
  var GAP = 3;
  var SVG = "http://www.w3.org/2000/svg";
  function rect(x0, y0, w, h) { return { x0: x0, y0: y0, x1: x0 + w, y1: y0 + h }; }
  function grown(r, by) { return { x0: r.x0 - by, y0: r.y0 - by, x1: r.x1 + by, y1: r.y1 + by }; }
  function overlap(a, b) {
    var w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
    return w > 0 && h > 0 ? w * h : 0;
  }
  function apart(a, b) {
    var dx = Math.max(0, a.x0 - b.x1, b.x0 - a.x1), dy = Math.max(0, a.y0 - b.y1, b.y0 - a.y1);
    return Math.sqrt(dx * dx + dy * dy);
  }
  function clamp(v, lo, hi) { return Math.min(Math.max(v, lo), Math.max(lo, hi)); }
  function candidates(box, w, h, width, height) {
    var out = [], xs = [box.x0, box.x1 - w, (box.x0 + box.x1 - w) / 2], ys = [box.y0, box.y1 - h, (box.y0 + box.y1 - h) / 2];
    for (var ring = 0; ring < 4; ring++) {
      var d = GAP + ring * (h + GAP);
      xs.forEach(function (x) { out.push([x, box.y0 - h - d], [x, box.y1 + d]); });
      ys.forEach(function (y) { out.push([box.x1 + d, y], [box.x0 - w - d, y]); });
    }
    for (var y = 0; y <= height - h; y += Math.max(4, h / 2)) {
      for (var x = 0; x <= width - w; x += Math.max(8, w / 4)) { out.push([x, y]); }
    }
    return out.map(function (c) { return rect(clamp(c[0], 0, width - w), clamp(c[1], 0, height - h), w, h); });
  }
  function leader(svg, label, box, color) {
    var cx = (label.x0 + label.x1) / 2, cy = (label.y0 + label.y1) / 2;
    var bx = clamp(cx, box.x0, box.x1), by = clamp(cy, box.y0, box.y1);
    var line = document.createElementNS(SVG, "line");
    line.setAttribute("x1", clamp(bx, label.x0, label.x1)); line.setAttribute("y1", clamp(by, label.y0, label.y1));
    line.setAttribute("x2", bx); line.setAttribute("y2", by);
    line.setAttribute("stroke", color); line.setAttribute("stroke-width", "2");
    svg.appendChild(line);
  }
  function layout(fig) {
    var stage = fig.querySelector(".stage"), marks = fig.querySelector(".marks"), list = fig.querySelector("ol.labels");
    if (!stage || !marks) { return; }
    if (!list) { fig.dataset.laidOut = String(stage.clientWidth); return; }
    var labels = Array.prototype.slice.call(fig.querySelectorAll("li.label"));
    labels.forEach(function (li) { li.style.left = ""; li.style.top = ""; list.appendChild(li); });
    Array.prototype.forEach.call(marks.querySelectorAll("svg.leaders"), function (old) { old.remove(); });
    var width = stage.clientWidth, height = stage.clientHeight;
    if (!width || !height) { return; }
    var boxes = {};
    Array.prototype.forEach.call(marks.querySelectorAll(".box"), function (b) {
      boxes[b.dataset.mark] = rect(b.offsetLeft, b.offsetTop, b.offsetWidth, b.offsetHeight);
    });
    function size(li) { var b = boxes[li.dataset.mark]; return b ? (b.x1 - b.x0) * (b.y1 - b.y0) : 0; }
    labels.sort(function (a, b) { return size(a) - size(b); });  // small objects choose first
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "leaders"); svg.setAttribute("width", width); svg.setAttribute("height", height);
    marks.appendChild(svg);
    var placed = [];
    labels.forEach(function (li) {
      var own = boxes[li.dataset.mark];
      if (!own) { return; }
      marks.appendChild(li);
      var w = li.offsetWidth, h = li.offsetHeight, best = null, bestCost = Infinity;
      if (w <= width && h <= height) {
        candidates(own, w, h, width, height).forEach(function (c) {
          if (overlap(c, grown(own, 1)) || placed.some(function (p) { return overlap(c, grown(p, 1)); })) { return; }
          var covered = 0;
          Object.keys(boxes).forEach(function (k) { if (k !== li.dataset.mark) { covered += overlap(c, boxes[k]); } });
          var cost = apart(c, own) + (covered ? 40 + 1000 * covered / (w * h) : 0);
          if (cost < bestCost) { best = c; bestCost = cost; }
        });
      }
      if (!best) { list.appendChild(li); return; }
      li.style.left = best.x0 + "px"; li.style.top = best.y0 + "px";
      placed.push(best);
      if (apart(best, own) > GAP + 2) { leader(svg, best, own, li.style.backgroundColor); }
    });
    list.hidden = !list.children.length;
    fig.dataset.laidOut = String(width);
  }
  var pending = [];
  function schedule(fig) {
    if (pending.indexOf(fig) < 0) { pending.push(fig); }
    window.requestAnimationFrame(function () { pending.splice(0).forEach(layout); });
  }
  var watcher = window.ResizeObserver ? new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { schedule(entry.target.closest("figure.pic")); });
  }) : null;
  function watch(fig) {
    var stage = fig.querySelector(".stage");
    if (watcher && stage) { watcher.observe(stage); } else { schedule(fig); }
  }
  function hover(event, on) {
    var target = event.target.closest ? event.target.closest("[data-mark]") : null;
    var fig = target ? target.closest("figure.pic") : null;
    if (!fig) { return; }
    Array.prototype.forEach.call(fig.querySelectorAll('[data-mark="' + target.dataset.mark + '"]'), function (el) {
      el.classList.toggle("hot", on);
    });
  }
  document.addEventListener("mouseover", function (event) { hover(event, true); });
  document.addEventListener("mouseout", function (event) { hover(event, false); });
  var dialog = null;
  function zoom(fig) {
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.className = "zoom";
      dialog.addEventListener("click", function () { dialog.close(); });
      document.body.appendChild(dialog);
    }
    var copy = fig.cloneNode(true), img = copy.querySelector("img");
    img.removeAttribute("loading");
    var ratio = (Number(img.getAttribute("width")) || 4) / (Number(img.getAttribute("height")) || 3);
    copy.style.width = "min(94vw, " + (90 * ratio).toFixed(2) + "vh, " + Math.max(900, img.getAttribute("width")) + "px)";
    dialog.replaceChildren(copy);
    dialog.showModal();
    if (window.parent !== window) {
      // A frame grown to its page has no window of its own to centre in: open beside the picture.
      dialog.style.position = "absolute";
      dialog.style.margin = "0 auto";
      dialog.style.top = Math.max(0, window.scrollY + fig.getBoundingClientRect().top - 8) + "px";
    }
    watch(copy);
  }
  document.addEventListener("click", function (event) {
    var stage = event.target.closest ? event.target.closest(".stage") : null;
    if (stage && !stage.closest("dialog")) { zoom(stage.closest("figure.pic")); }
  });
  document.addEventListener("keydown", function (event) {
    var stage = event.target.closest ? event.target.closest(".stage") : null;
    if (stage && !stage.closest("dialog") && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      zoom(stage.closest("figure.pic"));
    }
  });
  Array.prototype.forEach.call(document.querySelectorAll("figure.pic"), watch);
}());
// Inside a frame (a notebook's output): the page tells its parent how high it is, so the frame
// can grow to it, and in-page links stay in the page. A frame made from `srcdoc` takes the host
// page's address as its base, so `#questions` would load the host page into the frame.
(function () {
  "use strict";
  function samePage(link) {
    var here = location.href.split("#")[0], there = link.href.split("#")[0];
    return there === here;
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href^='#']") : null;
    if (!link || samePage(link) || event.defaultPrevented) { return; }
    event.preventDefault();
    var id = decodeURIComponent(link.getAttribute("href").slice(1));
    var target = id ? document.getElementById(id) : document.body;
    if (!target) { return; }
    if (target.hidden) {
      var reset = document.getElementById("reset-filters");
      if (reset) { reset.click(); }
      // the page grew: once the frame has grown with it, bring the target into view again
      window.addEventListener("resize", function () { target.scrollIntoView(); }, { once: true });
    }
    target.scrollIntoView();
  });
  if (window.parent === window) { return; }
  var last = 0;
  function report() {
    var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height !== last) {
      last = height;
      window.parent.postMessage({ vadarPageHeight: height }, "*");
    }
  }
  if (window.ResizeObserver) { new ResizeObserver(report).observe(document.documentElement); }
  window.addEventListener("load", report);
  report();
}());
