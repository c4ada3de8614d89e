from dataclasses import dataclass

from vadar.programs.api_text import composes_helpers, function_stub, render_api
from vadar.prompts import render, template_names
from base_modules.module import PREDEFINED_MODULES


@dataclass
class Fn:
    name: str
    signature: str
    docstring: str


def test_predefined_api_is_rendered_from_module_code():
    text = render_api()
    for spec in PREDEFINED_MODULES:
        assert f"def {spec.name}(" in text
        # the docstring the LLM reads is the spec class's own docstring
        first_line = spec.forward.__doc__.strip().splitlines()[0]
        assert first_line in text
    assert "def loc(image: Image, object_prompt: str) -> list[BBox]:" in text
    assert "Library functions" not in text  # no library yet


def test_library_functions_follow_modules_in_given_order():
    lib = [
        Fn("_leftmost", "(boxes: list[BBox]) -> BBox", "Return the box with the smallest x_min."),
        Fn("_count", "def _count(image: Image, prompt: str) -> int:", "Count objects."),
    ]
    text = render_api(lib)
    assert text.index("def get_2D_object_size(") < text.index("def _leftmost(")
    assert text.index("def _leftmost(") < text.index("def _count(")
    assert "def _count(image: Image, prompt: str) -> int:\n" in text
    compile(text, "<api>", "exec")  # the stubs are valid Python


def test_function_stub_indents_multiline_docstrings():
    stub = function_stub("_f", "(x: int) -> int", "Line one.\n\nLine two.")
    assert stub == 'def _f(x: int) -> int:\n    """\n    Line one.\n\n    Line two.\n    """'


def test_prompt_templates_load_by_name():
    assert {"program_system", "program_question", "program_retry"} <= set(template_names())
    text = render("program_question", question="How many cubes?")
    assert text == "Question: How many cubes?\nWrite the program.\n"


@dataclass
class CodedFn(Fn):
    code: str


WRAPPER = '''def _count_same_attribute_in_image(image: Image, object_prompt: str, attribute: str, description: str) -> int:
    """Count the number of objects in the image that match the given attribute and description."""
    obj = loc(image, object_prompt)[0]
    result = _count_same_attribute(image, attribute, description, obj)
    return result
'''


def test_a_helper_that_only_wraps_another_is_shown_with_the_call_it_makes():
    # a distilled helper whose name reads as "count what matches the prompt": programs counted
    # green blocks with it, though it counts the objects sharing an attribute with the first one
    wrapper = CodedFn("_count_same_attribute_in_image", "(image: Image, object_prompt: str, attribute: str, "
                      "description: str) -> int", "Count the number of objects.", WRAPPER)
    text = render_api([wrapper])
    assert ("Count the number of objects. Returns "
            "`_count_same_attribute(image, attribute, description, loc(image, object_prompt)[0])`.") in text
    # a loop, a body calling no helper or module, or a docstring that already says it: shown as written
    for code in ('def _h(image, p):\n    """H."""\n    n = 0\n    for b in loc(image, p):\n        n += _f(b)\n    return n\n',
                 'def _h(image, p):\n    """H."""\n    return abs(p[0] - p[2])\n'):
        assert "H. Returns" not in render_api([CodedFn("_h", "(image: Image, p: str) -> int", "H.", code)])
    said = CodedFn("_w", "(image: Image) -> int", "Returns `_g(image)`.", 'def _w(image):\n    return _g(image)\n')
    assert render_api([said]).count("_g(image)") == 1


def test_a_helper_whose_body_is_one_module_call_is_shown_with_it():
    # a confirmed helper whose docstring said "in image pixels" of a `vqa` reading: a program read a
    # material with it; the call it makes says what it returns
    size = CodedFn("_size_of_object", "(image: Image, bbox: BBox) -> str", "The size of the object in image pixels.",
                   'def _size_of_object(image, bbox):\n    """The size."""\n    return vqa(image, "What size is this object?", bbox)\n')
    assert ("The size of the object in image pixels. Returns `vqa(image, 'What size is this object?', bbox)`."
            in render_api([size]))
    height = CodedFn("_height_of_object", "(image: Image, bbox: BBox) -> float", "The height in metres.",
                     'def _height_of_object(image, bbox):\n    d = depth(image, bbox)\n'
                     '    return (bbox[3] - bbox[1]) * d / image.focal_length\n')
    assert "Returns `(bbox[3] - bbox[1]) * depth(image, bbox) / image.focal_length`." in render_api([height])


def test_a_docstring_that_writes_an_implemented_helper_as_a_call_asks_for_a_composition():
    implemented = {"_objects_left_of", "_count_same_attribute"}
    assert composes_helpers("Build it on `_objects_left_of(image, bbox, candidates)` (relation left).", implemented)
    assert composes_helpers("it is `_count_same_attribute(image, a, d, r) > 0`.", implemented)
    assert not composes_helpers("Whether a is left of b: compare box centres.", implemented)
    assert not composes_helpers("Call `_objects_right_of(image, bbox, candidates)`.", implemented)  # not implemented
    assert not composes_helpers("The `_objects_left_of` result, unnamed as a call.", implemented)
