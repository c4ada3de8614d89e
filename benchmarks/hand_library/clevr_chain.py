# `_objects_along` of `vadar/library/shape_helpers.py`, written by hand as its catalogue docstring
# says: the headroom of a chain helper, when its body is right. It stands alone (modules only):
#   vadar library add benchmarks/hand_library/clevr_chain.py


def _objects_along(image: Image, chain: list[str]) -> list[BBox]:
    """The boxes of the objects a chain of relations picks, `chain` written in the question's order: a
    noun phrase, a relation ('left', 'right', 'front' or 'behind', as seen from the camera), a noun
    phrase, ..., a noun phrase. "the cubes left of the sphere that is behind the red cylinder" is
    ['cubes', 'left', 'sphere', 'behind', 'red cylinder']."""
    found = loc(image, chain[-1])[0]
    boxes = [found]
    for i in range(len(chain) - 2, 0, -2):
        relation = chain[i].lower()
        kept = []
        for box in loc(image, chain[i - 1]):
            if same_object(image, box, found):
                continue
            if "left" in relation:
                holds = box[0] + box[2] < found[0] + found[2]
            elif "right" in relation:
                holds = box[0] + box[2] > found[0] + found[2]
            elif "front" in relation:
                holds = depth(image, box) < depth(image, found)
            elif "behind" in relation:
                holds = depth(image, box) > depth(image, found)
            else:
                raise ValueError(f"a relation is 'left', 'right', 'front' or 'behind', not {chain[i]!r}")
            if holds:
                kept.append(box)
        boxes = kept
        if not boxes:
            return []
        found = boxes[0]
    return boxes
