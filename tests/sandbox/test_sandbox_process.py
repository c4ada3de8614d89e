"""The sandbox's worker process: shared and reused, recovering from crashes, isolated from the host."""

from __future__ import annotations

import os
import signal

import pytest

import vadar.sandbox.process as worker_process
from sandbox_namespace import IMAGE, NAMESPACE, run
from vadar.sandbox import LibraryFunction, Sandbox, default_sandbox, execute


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


# --- process model ----------------------------------------------------------------------------


def test_module_level_execute_uses_a_shared_sandbox():
    first = execute("final_result = 6 * 7", {})
    assert first.ok and first.value == 42
    assert default_sandbox() is default_sandbox()


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
    monkeypatch.setattr(worker_process, "_BOOT", "raise SystemExit(3)")
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
