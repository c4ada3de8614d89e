"""The text a question-shape helper is proposed with: its catalogue docstring, the admitted step
helpers it builds on, each as a call (`built_on`), and how its parameters choose among them.

The API agent implements from this text alone; which helpers it names decides what the samples
compose (asked for `_find_related` with the four relation conventions in one docstring, it wrote
depth comparisons for left and right in all 13 samples while `_objects_left_of` was admitted).
"""

from __future__ import annotations

from collections.abc import Sequence

from api_store import FunctionRecord
from omni3d_bench.relations import ATTRIBUTES, RELATIONS
from vadar.library.coverage import Step, covering
from vadar.library.shape_helpers import (ASKED_HOW, ATTRIBUTE_HOW, CHAIN_WALK, HEIGHT_HOW, RELATION_HOW, WALK,
                                         ShapeHelper, shape_helper)
from vadar.programs.call_signatures import Kind, annotation_kind, return_annotation
from vadar.programs.helper_calls import list_parameters, parameter_names


_BUILDS_ON = {"relation": ("relation",), "attribute": ("same", "attribute"), "shared": ("same",)}
"""The step kinds (`coverage.Step`) a parameter of a shape helper's signature says it composes, in the
order `_chosen_by` prefers them when two cover as many values. The
`asked` attribute builds on no reader: each is one `vqa` call, which the hint writes for every value;
offered the four readers and the four `_same_` helpers, no sample of a CLEVR build's
`_attribute_of_same` found the object, and those that ran returned a reader's dict or `asked` itself."""


def built_on(helper: ShapeHelper, library: Sequence[FunctionRecord]) -> str:
    """A sentence naming the admitted step helpers the shape helper composes, each as a call, for its
    docstring: the API agent asked for `_find_related` with the four relation conventions in one
    docstring wrote depth comparisons for left and right in all 13 samples, while `_objects_left_of`
    was admitted."""
    signatures = {f.name: f.signature for f in library}
    blocks = _blocks(helper, library)
    named = [f"`{names[0]}({', '.join(parameter_names(names[0], signatures.get(names[0], '()')))})` "
             f"({step.kind} {step.value})" for step, names in blocks]
    if not named:
        return ""
    return (f" Build it on the library's helpers, which are checked right: {', '.join(named)}; call them "
            "instead of comparing boxes or depths yourself." + _chosen_by(helper, blocks, signatures))


def _chosen_by(helper: ShapeHelper, blocks: Sequence[tuple[Step, list[str]]], signatures: dict[str, str]) -> str:
    """How to pick the step helper a string parameter names, as a dict from its values to the
    helpers: asked for `_attribute_of_related(image, attribute, description, relation, reference)`
    with the four relation helpers named, the API agent wrote if/elif ladders cut off at the token
    limit in 5 of 6 samples, and the sixth called them on the wrong boxes. Where the helpers cover
    only some values, the dict's `.get` finds none for the others, which the docstring's hint does:
    offered only `_size_of_object` without the hint, all 16 samples of a CLEVR build's
    `_attribute_of_related` read every attribute with it and never read `attribute`."""
    parameters = parameter_names(helper.name, helper.signature)
    sentences = []
    for parameter in parameters:
        # `_blocks` holds no comparison for a helper that compares none, and no reader for one that only reads
        present = [k for k in _BUILDS_ON.get(parameter, ()) if any(step.kind == k for step, _ in blocks)]
        if not present:
            continue
        # the kind its helpers do for the most values (readers for all four beat one `_same_size`)
        missing, kind = min(((_missing(blocks, k), k) for k in present), key=lambda pair: len(pair[0]))
        pairs = [(step.value, names[0]) for step, names in blocks if step.kind == kind]
        chosen = ", ".join(f"'{value}': {name}" for value, name in pairs)
        call, keep = _relation_call(parameter, parameters, [name for _, name in pairs], signatures,
                                    annotation_kind(return_annotation(helper.signature)))
        compared = _comparison(kind, parameters) if parameter in ("attribute", "shared") else None
        if not missing and len(pairs) >= 2 and compared is not None:
            picked, then = compared
            sentences.append(f" Pick the one `{parameter}` names with a dict, `{picked} = {{{chosen}}}[{parameter}]`, "
                             f"then {then}.")
        elif not missing and len(pairs) >= 2:
            sentences.append(f" Pick the one `{parameter}` names with a dict: `{{{chosen}}}[{parameter}]{call}`.{keep}")
        elif missing:
            others = ", ".join(repr(value) for value in missing)
            sentences.append(f" Pick the one `{parameter}` names with `{{{chosen}}}.get({parameter})`"
                             f"{f', called as `picked{call}`' if call else ''}; for {others}, which none of them does, "
                             f"do it as said above.{keep}")
    return "".join(sentences)


def _comparison(kind: str, parameters: Sequence[str]) -> tuple[str, str] | None:
    """The name for the picked step helper and how to compare two objects with it, for a
    helper that compares two objects' attribute: shown the dict alone, 3 of the 9 replies of a
    100-question CLEVR build's `_count_same_attribute` compared the objects by calling
    `_count_same_attribute` itself (refused as recursion) and 4 called a name never defined; the one
    admitted in another build had put the dict in a variable and called it on both boxes. The other
    objects are told by `same_object`: a 30-question CLEVR build's `_count_same_attribute` skipped the
    reference by `box != reference`, which a detector's second reading of it passes."""
    pair = (("first", "second") if {"first", "second"} <= set(parameters)
            else ("other", "reference") if "reference" in parameters else None)
    if pair is None:
        return None
    one, two = pair
    test = f"same(image, {one}, {two})" if kind == "same" else f"read(image, {one}) == read(image, {two})"
    if one == "first":
        how = f"compare `{test}`"
    elif {"asked", "description"} <= set(parameters):
        how = _FOUND_BY_SHARED.format(test=test)
    else:
        how = f"test each other object of `loc(image, description)`, `not same_object(image, other, reference)`, with `{test}`"
    return ("same" if kind == "same" else "read"), how


_FOUND_BY_SHARED = ("the object is the first `other` of `loc(image, description)` with `not same_object(image, other, "
                    "reference) and {test}`: return `vqa(image, f'What {{asked}} is this object?', other)`")
"""Which object a helper reading the `asked` attribute of a match reads, and the read written out:
told to "test each other object", the samples of a CLEVR build's `_attribute_of_same` copied a loop
over `loc` and never assigned the picked helper, or called themselves; written out the same way,
`_attribute_of_related` had its first sample right by ground truth."""


_KEEP_DESCRIBED = (" It returns every object in that relation: keep those `description` matches, "
                   "`[b for b in related if any(same_object(image, b, m) for m in loc(image, description))]`.")


_USE_OF_RELATED = {Kind.NUMBER: "the answer is how many there are, `len(related)`",
                   Kind.BOOL: "the answer is whether there is any, `len(related) > 0`",
                   Kind.BOX: "the object is the first of them, `related[0]`",
                   Kind.STRING: "the object is the first of them, `related[0]`: return "
                                "`vqa(image, f'What {attribute} is this object?', related[0])`"}
"""How the boxes a picked relation helper returns answer the shape helper, by what it returns: 2 of the 4
samples of a CLEVR build's `_attribute_of_related` compared each box's attribute with `description`, and
the one `_count_related` sample that picked right returned the boxes it should have counted. Told to
"return its `attribute`", all 7 replies of two seeds' `_attribute_of_related` searches returned `boxes[0][attribute]`."""


def _relation_call(parameter: str, parameters: Sequence[str], names: Sequence[str],
                   signatures: dict[str, str], returns: Kind | None) -> tuple[str, str]:
    """The arguments a picked relation helper takes from the shape helper's own, and how its result
    meets `description`. Helpers that choose among candidates take `(image, reference,
    loc(image, description))`: shown the dict alone, 11 samples of a CLEVR build's
    `_attribute_of_related` passed the `description` string as the candidates, or a dict never
    defined. Helpers of the reference alone take `(image, reference)`, and their objects are kept
    where `description` matches: offered three such helpers, none of the first 14 samples of another
    build's `_attribute_of_related` called `loc(image, description)` (they read the reference's own
    attribute, returned a relation's list, or compared an attribute with the description)."""
    if parameter != "relation" or not {"description", "reference"} <= set(parameters):
        return "", ""
    shapes = [(parameter_names(name, signatures.get(name, "()")), list_parameters(name, signatures.get(name, "()")))
              for name in names]
    if all(_chooses_among_candidates(name, signatures.get(name, "()")) for name in names):
        use = _USE_OF_RELATED.get(returns) if returns is not None else None
        return "(image, reference, loc(image, description))", (
            f" Call it `related`: those boxes already match `description`, so {use}." if use else "")
    if all(len(names_) == 2 and not lists for names_, lists in shapes):
        return "(image, reference)", _KEEP_DESCRIBED
    return "", ""


_VALUES_OF = {"relation": RELATIONS, "attribute": ATTRIBUTES, "same": ATTRIBUTES}
"""Every value a step kind takes: a hint of how the modules do a step stays until helpers do them all."""


def _missing(blocks: Sequence[tuple[Step, list[str]]], kind: str) -> list[str]:
    """The values of `kind` no admitted step helper does."""
    covered = {step.value for step, _ in blocks if step.kind == kind}
    return [value for value in _VALUES_OF.get(kind, ()) if value not in covered]


def _blocks(helper: ShapeHelper, library: Sequence[FunctionRecord]) -> list[tuple[Step, list[str]]]:
    """The steps the shape helper composes that admitted helpers cover, with their names."""
    parameters = parameter_names(helper.name, helper.signature)
    kinds = {kind for parameter in parameters for kind in _BUILDS_ON.get(parameter, ())}
    if "same" not in helper.name.split("_"):
        # reading an attribute is not comparing two objects' attributes: offered `_same_color` and the
        # rest as its building blocks, a build's `_attribute_of` returned `_same_color(image, box, box)
        # and "white"`, admitted on 1 right program of 5, then retired
        kinds.discard("same")
        # nor is an attribute reader a block worth a pick: each is one `vqa` call, which the hint does for
        # every value in one line. Offered `_size_of_object` alone, 16 samples of a 100-question CLEVR
        # build's `_attribute_of_related` branched on `attribute`, read the reference, and never called
        # the relation helpers the same docstring named
        kinds.discard("attribute")
    blocks = []
    for step, names in sorted(covering(library).items()):
        steps = [name for name in names if shape_helper(name) is None]  # a shape helper is no step
        if steps and (step.kind in kinds or step.label in helper.steps):
            blocks.append((step, steps))
    return blocks


def proposed_docstring(helper: ShapeHelper, library: Sequence[FunctionRecord]) -> str:
    """The catalogue docstring with the step helpers to build on; the hint of how the modules do a
    step is left out where admitted helpers do it for every value (the first `_find_related` sample
    offered both followed the hint, box centres for left, and called none of the four relation
    helpers), and kept, with the values it is for, where they do it for some."""
    docstring = helper.docstring
    if helper.chained:
        return docstring.replace(CHAIN_WALK, chain_walk(library) or CHAIN_WALK)
    twin = counted_by(helper, library)
    if twin:  # one call of an admitted count answers it: no hint of how to do the steps
        for how in (RELATION_HOW, ATTRIBUTE_HOW, ASKED_HOW, HEIGHT_HOW):
            docstring = docstring.replace(how, "")
        return docstring + twin
    blocks = _blocks(helper, library)
    if not _missing(blocks, "relation"):  # a value no helper does keeps the hint
        docstring = docstring.replace(RELATION_HOW, "")
    if not _missing(blocks, "attribute"):  # comparing helpers read no attribute: with only them it stays
        docstring = docstring.replace(ATTRIBUTE_HOW, "").replace(ASKED_HOW, "")
    if any(step.label == "measure:height" for step, _ in blocks):
        docstring = docstring.replace(HEIGHT_HOW, "")
    return docstring + built_on(helper, library)


def _chooses_among_candidates(name: str, signature: str) -> bool:
    """A relation helper of the form `(image, reference, candidates: list)`: it keeps the candidates in
    its relation, so its result already matches what the candidates were found for."""
    parameters = parameter_names(name, signature)
    return len(parameters) == 3 and list_parameters(name, signature) == parameters[2:]


def chain_walk(library: Sequence[FunctionRecord]) -> str | None:
    """`_objects_along`'s walk on the admitted relation helpers, where one that chooses among candidates
    (`_objects_left_of(image, bbox, candidates)`) does each of the four relations; else None. Asked to
    write the relation test inside the walk, all 4 samples of a CLEVR build's search left it out."""
    signatures = {f.name: f.signature for f in library}
    picks = {}
    for step, names in covering(library).items():
        if step.kind != "relation":
            continue
        for name in names:
            if shape_helper(name) is None and _chooses_among_candidates(name, signatures.get(name, "()")):
                picks.setdefault(step.value, name)
    if set(picks) != set(RELATIONS):
        return None
    pick = ", ".join(f"'{relation}': {picks[relation]}" for relation in RELATIONS)
    return (WALK + " on the library's relation helpers, which are checked right: `pick = {" + pick + "}`; "
            "`found = loc(image, chain[-1])[0]`, then for each `i` in `range(len(chain) - 2, 0, -2)`: `word = next(w for "
            "w in pick if w in chain[i])` (programs copy the question's 'to the left of'), `boxes = pick[word](image, "
            "found, loc(image, chain[i - 1]))`; return [] when `boxes` is empty, else `found = boxes[0]`; after the "
            "walk, return `boxes` (every box, not one).")


def counted_by(helper: ShapeHelper, library: Sequence[FunctionRecord]) -> str:
    """For a question-shape helper asking whether any object is so (`_exists_same_attribute`), the
    sentence building it on its admitted count twin (`_count_same_attribute`, the same parameters):
    the 4 samples of a 100-question CLEVR build's `_exists_same_attribute`, offered the `_same_`
    helpers with their dict and `_count_same_attribute` admitted in the batch before, skipped the
    objects that share the attribute and answered True for the others (2) or failed to run (2); the
    one admitted in another build returned `_count_same_attribute(...) > 0`."""
    if not helper.name.startswith("_exists_"):
        return ""
    twin = shape_helper("_count_" + helper.name.removeprefix("_exists_"))
    admitted = twin is not None and any(f.name == twin.name and f.signature == twin.signature for f in library)
    if not admitted or parameter_names(twin.name, twin.signature) != parameter_names(helper.name, helper.signature):
        return ""
    arguments = ", ".join(parameter_names(helper.name, helper.signature))
    return (f" Build it on the library's `{twin.name}`, which is checked right: it is "
            f"`{twin.name}({arguments}) > 0`.")
