# The question-shape helpers of `vadar/library/shape_helpers.py`, written by hand and correct for
# CLEVR: the headroom of helpers one level up, when their bodies are right. They build on the
# step helpers of clevr.py; load that first:
#   vadar library add benchmarks/hand_library/clevr.py
#   vadar library add benchmarks/hand_library/clevr_shapes.py


def _related_boxes(image: Image, relation: str, reference: BBox) -> list[BBox]:
    """Every other object `relation` ('left', 'right', 'front' or 'behind') of the object in `reference`."""
    if relation == "left":
        return _objects_left_of(image, reference)
    if relation == "right":
        return _objects_right_of(image, reference)
    if relation == "front":
        return _objects_in_front_of(image, reference)
    if relation == "behind":
        return _objects_behind(image, reference)
    raise ValueError(f"relation must be 'left', 'right', 'front' or 'behind', not {relation!r}")


def _find_related(image: Image, description: str, relation: str, reference: BBox) -> BBox:
    """The box of the object matching `description` that is `relation` ('left', 'right', 'front' or
    'behind', as seen from the camera) of the object in `reference`; never the reference itself."""
    found = _matching(image, _related_boxes(image, relation, reference), description)
    if not found:
        raise ValueError(f"no {description} {relation} of the reference")
    return found[0]


def _is_related(image: Image, box: BBox, relation: str, reference: BBox) -> bool:
    """Whether the object in `box` is `relation` ('left', 'right', 'front' or 'behind') of the object in `reference`."""
    return any(same_object(image, b, box) for b in _related_boxes(image, relation, reference))


def _count_related(image: Image, description: str, relation: str, reference: BBox) -> int:
    """How many objects matching `description` are `relation` ('left', 'right', 'front' or 'behind')
    of the object in `reference`; the reference itself is never counted."""
    return len(_matching(image, _related_boxes(image, relation, reference), description))


def _exists_related(image: Image, description: str, relation: str, reference: BBox) -> bool:
    """Whether any object matching `description` is `relation` ('left', 'right', 'front' or 'behind')
    of the object in `reference` (the reference itself never counts)."""
    return _count_related(image, description, relation, reference) > 0


def _attribute_of(image: Image, attribute: str, box: BBox) -> str:
    """The `attribute` ('color', 'shape', 'material' or 'size') of the object in `box`, as one word."""
    return _attribute(image, box, attribute)


def _attribute_of_related(image: Image, attribute: str, description: str, relation: str, reference: BBox) -> str:
    """The `attribute` ('color', 'shape', 'material' or 'size') of the object matching `description`
    that is `relation` ('left', 'right', 'front' or 'behind') of the object in `reference`."""
    return _attribute(image, _find_related(image, description, relation, reference), attribute)


def _same_attribute(image: Image, attribute: str, first: BBox, second: BBox) -> bool:
    """Whether the objects in `first` and `second` have the same `attribute` ('color', 'shape', 'material' or 'size')."""
    return _attribute(image, first, attribute) == _attribute(image, second, attribute)


def _count_same_attribute(image: Image, attribute: str, description: str, reference: BBox) -> int:
    """How many objects matching `description`, other than the one in `reference`, have the same
    `attribute` ('color', 'shape', 'material' or 'size') as the object in `reference`."""
    return len(_matching(image, _same_attribute_as(image, reference, attribute), description))


def _exists_same_attribute(image: Image, attribute: str, description: str, reference: BBox) -> bool:
    """Whether any object matching `description`, other than the one in `reference`, has the same
    `attribute` ('color', 'shape', 'material' or 'size') as the object in `reference`."""
    return _count_same_attribute(image, attribute, description, reference) > 0


def _attribute_of_same(image: Image, asked: str, description: str, shared: str, reference: BBox) -> str:
    """The `asked` attribute ('color', 'shape', 'material' or 'size') of the object matching
    `description`, other than the one in `reference`, that has the same `shared` attribute as the
    object in `reference`."""
    found = _matching(image, _same_attribute_as(image, reference, shared), description)
    if not found:
        raise ValueError(f"no other {description} with the same {shared}")
    return _attribute(image, found[0], asked)


def _count_either(image: Image, first: str, second: str) -> int:
    """How many objects match `first` or `second` (or both), each object counted once."""
    counted = loc(image, first)
    for box in loc(image, second):
        if not any(same_object(image, box, other) for other in counted):
            counted.append(box)
    return len(counted)


def _compare_counts(image: Image, first: str, second: str, order: str) -> bool:
    """Whether the number of objects matching `first` is 'more', 'fewer' or 'equal' (`order`)
    compared with the number matching `second`."""
    a, b = len(loc(image, first)), len(loc(image, second))
    if order == "more":
        return a > b
    if order == "fewer":
        return a < b
    if order == "equal":
        return a == b
    raise ValueError(f"order must be 'more', 'fewer' or 'equal', not {order!r}")
