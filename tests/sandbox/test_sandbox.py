"""The sandbox runs generated programs: values, output, errors, host calls, library functions."""

from __future__ import annotations

import pytest

from base_modules.types import Image
from sandbox_namespace import IMAGE, NAMESPACE, run
from vadar.sandbox import LibraryFunction, Sandbox


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


# --- values ---------------------------------------------------------------------------------


def test_final_result_is_plain_python(sandbox):
    result = run(
        sandbox,
        "boxes = loc(image, 'cube')\n"
        "d = depth(image, boxes[1])\n"
        "n = numbers(image)\n"
        "final_result = [d, same_object(image, boxes[0], boxes[0]), n['i'], n['arr'], n['t']]\n",
    )
    assert result.ok, result.error
    assert result.value == [5.0, True, 7, [0, 1, 2], (0.5, False)]
    d, same, i, arr, t = result.value
    assert type(d) is float and type(same) is bool and type(i) is int and type(arr) is list
    assert type(t) is tuple and type(t[1]) is bool
    assert result.duration_s > 0


def test_bools_and_none_are_kept(sandbox):
    assert run(sandbox, "final_result = False").value is False
    none = run(sandbox, "final_result = None")
    assert none.has_final_result and none.value is None and none.ok
    unset = run(sandbox, "x = 1")
    assert not unset.has_final_result and unset.value is None and unset.ok


def test_containers_round_trip(sandbox):
    result = run(sandbox, "final_result = {'a': (1, 2.5), 3: {4, 5}, 'n': None, 's': 'txt'}")
    assert result.value == {"a": (1, 2.5), 3: {4, 5}, "n": None, "s": "txt"}


def test_unreturnable_final_result_is_a_program_error(sandbox):
    result = run(sandbox, "def f():\n    return 1\nfinal_result = f")
    assert result.error is not None and "final_result cannot be returned" in result.error
    assert result.infrastructure_error is None


def test_whitelisted_imports_work(sandbox):
    code = (
        "import math\nfrom statistics import median\nfrom collections import Counter\n"
        "import itertools\n"
        "pairs = list(itertools.combinations([1, 2, 3], 2))\n"
        "final_result = [math.sqrt(16), median([3, 1, 2]), Counter('aab')['a'], len(pairs)]\n"
    )
    result = run(sandbox, code)
    assert result.ok, result.error
    assert result.value == [4.0, 2, 2, 3]


def test_common_python_works(sandbox):
    code = (
        "boxes = sorted(loc(image, 'x'), key=lambda b: -b[0])\n"
        "total = 0\n"
        "for i, (x0, y0, x1, y1) in enumerate(boxes):\n"
        "    total += (x1 - x0) * (y1 - y0) + i\n"
        "d = {}\n"
        "d['w'] = image.width\n"
        "items = [b[0] for b in boxes if b[0] > 0]\n"
        "a, *rest = items\n"
        "final_result = (total, d, a, rest, max(items), f'{image.height}px', round(2.567, 2))\n"
    )
    result = run(sandbox, code)
    assert result.ok, result.error
    assert result.value == (801.0, {"w": 640}, 50.0, [10.0], 50.0, "480px", 2.57)


# --- output -----------------------------------------------------------------------------------


def test_stdout_is_captured(sandbox):
    result = run(sandbox, "print('a', 1, sep='-')\ndef f():\n    print('inside')\nf()\nprint('x', end='')")
    assert result.stdout == "a-1\ninside\nx"
    assert not result.stdout_truncated


def test_stdout_is_truncated_with_a_marker(sandbox):
    result = run(sandbox, "for i in range(50000):\n    print('line', i)\nfinal_result = 1", max_stdout_chars=1000)
    assert result.ok and result.value == 1
    assert result.stdout.startswith("line 0\nline 1\n")
    assert result.stdout_truncated
    assert "output truncated" in result.stdout and len(result.stdout) < 1200


# --- errors -----------------------------------------------------------------------------------


def test_runtime_error_names_the_line(sandbox):
    result = run(sandbox, "boxes = loc(image, 'cube')\n\nx = 1\nbox = boxes[3]\n")
    assert result.error == "line 4: box = boxes[3]\nIndexError: list index out of range"
    assert result.infrastructure_error is None and not result.ok


def test_syntax_error_names_the_line(sandbox):
    result = run(sandbox, "x = 1\nif x\n    y = 2\n")
    assert result.error.startswith("line 2: if x\nSyntaxError:")


def test_policy_violation_names_the_line(sandbox):
    result = run(sandbox, "x = 1\ny = x.__class__\n")
    assert result.error.startswith("line 2: y = x.__class__\nNotAllowed:")
    assert "__class__" in result.error


def test_uncaught_program_exception(sandbox):
    result = run(sandbox, "def check(v):\n    if v < 0:\n        raise ValueError('negative')\ncheck(-1)")
    assert result.error == (
        "line 4: check(-1)\nline 3: raise ValueError('negative')\nValueError: negative"
    )


# --- host functions ---------------------------------------------------------------------------


def test_host_calls_are_traced_with_decoded_arguments(sandbox):
    result = run(sandbox, "b = loc(image, 'red cube')\nfinal_result = depth(image, bbox=b[0])")
    assert result.ok and result.value == 1.0
    assert [c.name for c in result.calls] == ["loc", "depth"]
    first, second = result.calls
    assert first.args == [IMAGE, "red cube"] and type(first.args[0]) is Image
    assert first.result == [[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]]
    assert second.kwargs == {"bbox": [10.0, 20.0, 30.0, 40.0]} and second.result == 1.0
    assert first.error is None and first.seconds >= 0


def test_image_handle_round_trips_unchanged(sandbox):
    result = run(sandbox, "final_result = (image, image.path, image.width)")
    assert result.value == (IMAGE, "/data/img-1.png", 640)
    assert type(result.value[0]) is Image


def test_host_exception_surfaces_with_the_calling_line(sandbox):
    result = run(sandbox, "x = 1\nboxes = loc(image, 'unicorn')\n")
    assert result.error == "line 2: boxes = loc(image, 'unicorn')\nModuleError: no unicorn in this image"
    assert result.calls[0].error == "ModuleError: no unicorn in this image"


def test_host_exceptions_can_be_caught(sandbox):
    code = (
        "try:\n    loc(image, 'unicorn')\nexcept Exception as e:\n    a = str(e)\n"
        "try:\n    loc('not an image', 'cube')\nexcept TypeError as e:\n    b = 'type error'\n"
        "final_result = [a, b]\n"
    )
    result = run(sandbox, code)
    assert result.ok, result.error
    assert result.value == ["no unicorn in this image", "type error"]


def test_unsendable_argument_is_a_program_error(sandbox):
    result = run(sandbox, "loc(image, lambda: 1)")
    assert "TypeError: cannot pass this argument to loc()" in result.error


def test_callable_objects_are_host_functions(sandbox):
    class Counter:
        def __init__(self) -> None:
            self.calls = 0

        def __call__(self, k: int) -> int:
            self.calls += 1
            return k * 2

    counter = Counter()
    result = run(sandbox, "final_result = [double(i) for i in range(3)]", {"double": counter})
    assert result.value == [0, 2, 4] and counter.calls == 3


def test_unencodable_namespace_value_is_rejected_by_the_caller(sandbox):
    with pytest.raises(TypeError, match="cannot enter the sandbox"):
        run(sandbox, "x = 1", {"thing": object.__new__(type("Opaque", (), {}))})


# --- library functions ------------------------------------------------------------------------

LEFT = LibraryFunction(
    "_find_left_object",
    "def _find_left_object(image, prompt):\n"
    "    boxes = loc(image, prompt)\n"
    "    return _leftmost(boxes)\n",
)
LEFTMOST = LibraryFunction("_leftmost", "def _leftmost(boxes):\n    return min(boxes, key=lambda b: b[0])\n")
BROKEN = LibraryFunction("_third_box", "def _third_box(image):\n    boxes = loc(image, 'x')\n    return boxes[2]\n")


def test_library_functions_call_each_other_and_hosts(sandbox):
    namespace = {**NAMESPACE, "_find_left_object": LEFT, "_leftmost": LEFTMOST}
    result = run(sandbox, "_box = _find_left_object(image, 'cube')\nfinal_result = _box", namespace)
    assert result.ok, result.error
    assert result.value == [10.0, 20.0, 30.0, 40.0]
    assert [c.name for c in result.calls] == ["loc"]


def test_library_function_errors_name_the_function(sandbox):
    result = run(sandbox, "x = 0\nfinal_result = _third_box(image)", {**NAMESPACE, "_third_box": BROKEN})
    assert result.error == (
        "line 2: final_result = _third_box(image)\n"
        "in _third_box, line 3: return boxes[2]\n"
        "IndexError: list index out of range"
    )


def test_library_function_syntax_error_names_the_function(sandbox):
    bad = LibraryFunction("_bad", "def _bad(x):\n    return x +\n")
    result = run(sandbox, "final_result = 1", {"_bad": bad})
    assert result.error.startswith("in _bad, line 2: return x +\nSyntaxError")


def test_library_function_policy_violation_names_the_function(sandbox):
    bad = LibraryFunction("_bad", "def _bad(x):\n    return x.__dict__\n")
    result = run(sandbox, "final_result = 1", {"_bad": bad})
    assert result.error.startswith("in _bad, line 2: return x.__dict__\nNotAllowed")
