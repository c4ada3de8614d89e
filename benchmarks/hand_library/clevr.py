# A small, correct helper library for CLEVR questions, written by hand: the headroom a learned
# library chases. Load it with `vadar library add benchmarks/hand_library/clevr.py`.
# These run in the sandbox like generated code: modules, built-ins and math only.


def _camera_x(image: Image, bbox: BBox) -> float:
    """The object's horizontal position in the camera frame, up to a positive factor: larger is
    further right. Use it to compare left and right (it corrects the box centre for depth)."""
    return ((bbox[0] + bbox[2]) / 2 - image.width / 2) * depth(image, bbox)


def _objects_left_of(image: Image, reference: BBox) -> list[BBox]:
    """Every other object left of the object in `reference` (from the camera's view)."""
    x = _camera_x(image, reference)
    return [b for b in loc(image, "objects") if not same_object(image, b, reference) and _camera_x(image, b) < x]


def _objects_right_of(image: Image, reference: BBox) -> list[BBox]:
    """Every other object right of the object in `reference` (from the camera's view)."""
    x = _camera_x(image, reference)
    return [b for b in loc(image, "objects") if not same_object(image, b, reference) and _camera_x(image, b) > x]


def _objects_in_front_of(image: Image, reference: BBox) -> list[BBox]:
    """Every other object closer to the camera than the object in `reference` (smaller depth)."""
    d = depth(image, reference)
    return [b for b in loc(image, "objects") if not same_object(image, b, reference) and depth(image, b) < d]


def _objects_behind(image: Image, reference: BBox) -> list[BBox]:
    """Every other object farther from the camera than the object in `reference` (larger depth)."""
    d = depth(image, reference)
    return [b for b in loc(image, "objects") if not same_object(image, b, reference) and depth(image, b) > d]


def _attribute(image: Image, bbox: BBox, attribute: str) -> str:
    """The object's `attribute`: "color", "shape", "material" or "size"; returns e.g. "red"."""
    questions = {"color": "What color is this object?", "shape": "What shape is this object?",
                 "material": "What material is this object made of?", "size": "What size is this object?"}
    return vqa(image, questions[attribute], bbox)


def _same_attribute_as(image: Image, reference: BBox, attribute: str) -> list[BBox]:
    """Every other object with the same `attribute` ("color", "shape", "material", "size") as the
    object in `reference`."""
    value = _attribute(image, reference, attribute)
    return [b for b in loc(image, "objects")
            if not same_object(image, b, reference) and _attribute(image, b, attribute) == value]


def _only(image: Image, object_prompt: str) -> BBox:
    """The single object matching `object_prompt` (e.g. "red sphere"); an error if there is not
    exactly one."""
    boxes = loc(image, object_prompt)
    if len(boxes) != 1:
        raise ValueError(f"expected one {object_prompt}, found {len(boxes)}")
    return boxes[0]


def _matching(image: Image, boxes: list[BBox], object_prompt: str) -> list[BBox]:
    """The boxes of `boxes` whose objects match `object_prompt` (e.g. "large metal things")."""
    wanted = loc(image, object_prompt)
    return [b for b in boxes if any(same_object(image, b, w) for w in wanted)]
