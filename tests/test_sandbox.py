"""The sandbox runs generated programs: values, output, errors, host calls, library functions."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import vadar.sandbox.executor as sandbox_module
from base_modules.module import ModuleError
from base_modules.types import Image
from vadar.sandbox import ExecutionResult, LibraryFunction, Sandbox, execute

IMAGE = Image(image_id="img-1", path="/data/img-1.png", width=640, height=480)


def loc(image: Image, prompt: str) -> list[list[float]]:
    if not isinstance(image, Image):
        raise TypeError(f"expected an Image, got {type(image).__name__}")
    if prompt == "unicorn":
        raise ModuleError("no unicorn in this image")
    return [[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]]


def depth(image: Image, bbox: list[float]) -> np.float32:
    return np.float32(bbox[0] / 10)


def same_object(image: Image, a: list[float], b: list[float]) -> np.bool_:
    return np.bool_(a == b)


def numbers(image: Image) -> dict:
    return {"i": np.int64(7), "arr": np.arange(3), "t": (np.float64(0.5), np.bool_(False))}


NAMESPACE = {"image": IMAGE, "loc": loc, "depth": depth, "same_object": same_object, "numbers": numbers}


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


def run(sandbox: Sandbox, code: str, namespace: dict | None = None, **limits) -> ExecutionResult:
    return sandbox.execute(code, NAMESPACE if namespace is None else namespace, **limits)


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
    result = run(sandbox, "for i in range(200000):\n    print('line', i)\nfinal_result = 1", max_stdout_chars=1000)
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


# --- process model ----------------------------------------------------------------------------


def test_module_level_execute_uses_a_shared_sandbox():
    first = execute("final_result = 6 * 7", {})
    assert first.ok and first.value == 42
    assert sandbox_module.default_sandbox() is sandbox_module.default_sandbox()


def test_worker_is_reused_between_programs(sandbox):
    run(sandbox, "x = 1")
    pid = sandbox._worker.process.pid
    run(sandbox, "x = 2")
    assert sandbox._worker.process.pid == pid


def test_worker_crash_is_the_programs_error_and_recovers(sandbox):
    run(sandbox, "x = 1")

    def crash() -> int:
        os.kill(sandbox._worker.process.pid, signal.SIGKILL)
        return 1

    result = run(sandbox, "crash()\nfinal_result = 1", {"crash": crash})
    assert result.infrastructure_error is None and result.crashed and not result.ok
    assert result.error.startswith("SandboxCrash: the program crashed the Python interpreter (SIGKILL)")
    assert run(sandbox, "final_result = 'again'").value == "again"


def test_worker_that_cannot_start_is_an_infrastructure_error(monkeypatch):
    monkeypatch.setattr(sandbox_module, "_BOOT", "raise SystemExit(3)")
    with Sandbox() as box:
        result = box.execute("final_result = 1", {})
    assert result.error is None and "did not start" in result.infrastructure_error


def test_close_stops_the_worker():
    box = Sandbox()
    box.execute("x = 1", {})
    process = box._worker.process
    box.close()
    assert process.poll() is not None


def test_printed_gives_text_not_the_collector(sandbox):
    result = run(sandbox, "print('hi')\nfinal_result = printed", max_stdout_chars=100)
    assert result.value == "hi\n"


def test_huge_exception_message_is_cut(sandbox):
    result = run(sandbox, "raise ValueError('x' * 10**7)")
    assert result.error.startswith("line 1: raise ValueError('x' * 10**7)\nValueError: xxx")
    assert len(result.error) < 3000 and "more characters" in result.error


@pytest.mark.parametrize("name", ["__builtins__", "_getattr_", "_print", "not an identifier"])
def test_namespace_cannot_shadow_guards(sandbox, name):
    with pytest.raises(ValueError, match="not allowed"):
        run(sandbox, "x = 1", {name: 1})


def test_worker_environment_holds_no_host_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-programs")
    with Sandbox() as box:
        box.execute("x = 1", {})
        environ = f"/proc/{box._worker.process.pid}/environ"
        if not os.path.exists(environ):
            pytest.skip("no /proc on this platform")
        with open(environ, "rb") as handle:
            assert b"sk-not-for-programs" not in handle.read()


def test_dict_subclasses_and_huge_ints(sandbox):
    code = "from collections import Counter, defaultdict\nd = defaultdict(list)\nd['a'].append(1)\n"
    result = run(sandbox, code + "final_result = (Counter('aab'), d)")
    assert result.value == ({"a": 2, "b": 1}, {"a": [1]}) and type(result.value[0]) is dict
    huge = run(sandbox, "final_result = 10 ** 5000")
    assert huge.infrastructure_error is None and "final_result cannot be returned" in huge.error
    assert run(sandbox, "final_result = 2").value == 2


def test_annotations_are_ignored(sandbox):
    typed = LibraryFunction(
        "_width",
        'def _width(image: Image, bbox: list[float]) -> float:\n    """Width in pixels."""\n'
        "    w: float = bbox[2] - bbox[0]\n    return w\n",
    )
    code = "n: int = 2\nlabel: Unknown\nfinal_result = _width(image, [0, 0, 3, 4]) * n"
    result = run(sandbox, code, {"image": IMAGE, "_width": typed})
    assert result.ok, result.error
    assert result.value == 6


def test_augmented_item_assignment_evaluates_once(sandbox):
    seen = []

    def key(k: str) -> str:
        seen.append(k)
        return k

    code = (
        "counts = {'a': 1}\ncounts[key('a')] += 2\ngrid = [[1, 2], [3, 4]]\ngrid[1][0] -= 3\n"
        "def bump(d):\n    d['x'] *= 5\n    return d\nfinal_result = (counts, grid, bump({'x': 2}))"
    )
    result = run(sandbox, code, {"key": key})
    assert result.ok, result.error
    assert result.value == ({"a": 3}, [[1, 2], [0, 4]], {"x": 10}) and seen == ["a"]
    assert "cannot modify an object of type tuple" in run(sandbox, "t = (1, 2)\nt[0] += 1").error


def test_math_is_there_without_an_import_in_programs_and_helpers(sandbox):
    hypot = LibraryFunction("_hypot", "def _hypot(a, b):\n    return math.sqrt(a * a + b * b)\n")
    result = run(sandbox, "final_result = [_hypot(3, 4), math.floor(2.5)]", {**NAMESPACE, "_hypot": hypot})
    assert result.ok, result.error
    assert result.value == [5.0, 2]


def test_a_module_name_shadowed_inside_a_helper_gets_a_hint(sandbox):
    shadow = LibraryFunction("_nearest", "def _nearest(image):\n    loc = loc(image, 'cube')\n    return loc[0]\n")
    result = run(sandbox, "final_result = _nearest(image)", {**NAMESPACE, "_nearest": shadow})
    assert result.error is not None and "UnboundLocalError" in result.error
    assert "Hint: `loc` is assigned somewhere in this function" in result.error
    assert "`loc_value`" in result.error


def test_an_undefined_name_gets_a_hint_to_assign_it_first(sandbox):
    result = run(sandbox, "boxes = loc(image, 'sphere')\nfinal_result = depth(image, sphere)")
    assert result.error is not None and "NameError: name 'sphere' is not defined" in result.error
    assert "Hint: nothing is assigned to `sphere` before this line runs" in result.error


def test_a_misspelled_name_gets_the_close_match(sandbox):
    result = run(sandbox, "red_cubes = loc(image, 'red cube')\nfinal_result = len(red_cube)")
    assert result.error is not None and "did you mean `red_cubes`?" in result.error
    helper = LibraryFunction("_count", "def _count(image, noun):\n    found = loc(image, noun)\n    return len(fund)\n")
    result = run(sandbox, "final_result = _count(image, 'cube')", {**NAMESPACE, "_count": helper})
    assert result.error is not None and "did you mean `found`?" in result.error
