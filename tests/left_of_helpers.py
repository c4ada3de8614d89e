"""Two implementations of `_objects_left_of` the library tests share: one ground truth confirms, one it refutes."""

STUB = '```python\ndef _objects_left_of(image: Image, reference: BBox) -> list[BBox]:\n    """Objects left of the reference object."""\n```'
# Left as CLEVR defines it (camera-frame x, not the box centre), so its ground-truth check passes.
RIGHT = ("def _objects_left_of(image, reference):\n"
         "    x = ((reference[0] + reference[2]) / 2 - image.width / 2) * depth(image, reference)\n"
         "    return [b for b in loc(image, 'objects') if ((b[0] + b[2]) / 2 - image.width / 2) * depth(image, b) < x\n"
         "            and not same_object(image, b, reference)]\n")
# Runs, passes its test call, and is wrong: it compares depth, not x.
WRONG = ("def _objects_left_of(image, reference):\n"
         "    d = depth(image, reference)\n"
         "    return [b for b in loc(image, 'objects') if depth(image, b) < d]\n")
