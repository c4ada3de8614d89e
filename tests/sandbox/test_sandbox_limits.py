"""Resource limits: runaway programs are stopped, reported as program errors, and the next
program runs normally."""

from __future__ import annotations

import time

import pytest

from vadar.sandbox import LibraryFunction, Sandbox

TIMEOUT_S = 1.0
MEMORY_MB = 256


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


def assert_recovers(sandbox: Sandbox) -> None:
    result = sandbox.execute("final_result = sum(range(10))", {}, timeout_s=10, memory_mb=MEMORY_MB)
    assert result.ok, result
    assert result.value == 45


def test_infinite_loop_is_stopped(sandbox):
    started = time.monotonic()
    result = sandbox.execute("while True:\n    pass", {}, timeout_s=TIMEOUT_S)
    assert time.monotonic() - started < TIMEOUT_S + 1.5
    assert result.timed_out and not result.ok
    assert result.error == "TimeoutError: program exceeded the 1 s time limit"
    assert result.infrastructure_error is None
    assert_recovers(sandbox)


def test_loop_of_host_calls_is_stopped(sandbox):
    calls = []

    def loc(prompt: str) -> list:
        calls.append(prompt)
        time.sleep(0.01)
        return []

    started = time.monotonic()
    result = sandbox.execute("while True:\n    loc('cube')", {"loc": loc}, timeout_s=TIMEOUT_S)
    assert time.monotonic() - started < TIMEOUT_S + 1.5
    assert result.timed_out and result.error is not None
    assert len(calls) > 5
    assert_recovers(sandbox)


def test_deep_recursion_is_a_program_error(sandbox):
    result = sandbox.execute("def f(n):\n    return f(n + 1)\nf(0)", {}, timeout_s=10)
    assert result.error.startswith("line 3: f(0)\nline 2: return f(n + 1)   [repeated")
    assert result.error.endswith("RecursionError: maximum recursion depth exceeded")
    assert result.infrastructure_error is None
    assert_recovers(sandbox)


def test_mutual_recursion_is_summarised(sandbox):
    code = "def a(n):\n    return b(n)\ndef b(n):\n    return a(n)\na(0)"
    result = sandbox.execute(code, {}, timeout_s=10)
    assert "more calls" in result.error and result.error.count("\n") < 12
    assert result.error.endswith("RecursionError: maximum recursion depth exceeded")


@pytest.mark.parametrize(
    "code",
    [
        "x = [0] * 10**10",
        "s = 'a' * 10**12",
        "blocks = []\nwhile True:\n    blocks.append([0] * 10000)",
        "def grow(acc):\n    acc.append(' ' * 100000 + str(len(acc)))\n    return acc\n"
        "acc = []\nwhile True:\n    acc = grow(acc)",
    ],
    ids=["list bomb", "string bomb", "growing list", "growing strings"],
)
def test_memory_bombs_are_program_errors(sandbox, code):
    result = sandbox.execute(code, {}, timeout_s=20, memory_mb=MEMORY_MB)
    assert result.memory_exceeded and not result.timed_out, result
    assert result.error.endswith(f"MemoryError: program exceeded the {MEMORY_MB} MB memory limit")
    assert result.infrastructure_error is None
    assert_recovers(sandbox)


def test_memory_error_names_the_line(sandbox):
    result = sandbox.execute("x = 1\nbig = [x] * 10**10", {}, timeout_s=10, memory_mb=MEMORY_MB)
    assert result.error.startswith("line 2: big = [x] * 10**10\nMemoryError")


def test_huge_print_loop_keeps_memory_and_pipe_bounded(sandbox):
    code = "for i in range(10**7):\n    print('spam spam spam', i)\nfinal_result = 'done'"
    result = sandbox.execute(code, {}, timeout_s=10, memory_mb=MEMORY_MB, max_stdout_chars=10_000)
    assert not result.memory_exceeded and result.infrastructure_error is None and not result.timed_out
    assert result.error is not None
    assert "PrintLimitError: the program printed more than 1,000,000 characters" in result.error
    assert len(result.stdout) < 10_200 and result.stdout_truncated
    assert_recovers(sandbox)


HELPER_PRINTING_5_MB = "def _chatty(x):\n    print('x' * 5_000_000)\n    return x\n"


@pytest.mark.parametrize("call", [
    "final_result = _chatty(1)",
    "try:\n    final_result = _chatty(1)\nexcept Exception:\n    final_result = 0",
    "try:\n    final_result = _chatty(1)\nexcept:\n    final_result = 0",  # swallowed, and still refused
])
def test_a_helper_printing_megabytes_per_call_fails_its_call(sandbox, call):
    namespace = {"_chatty": LibraryFunction("_chatty", HELPER_PRINTING_5_MB)}
    started = time.monotonic()
    result = sandbox.execute(call, namespace, timeout_s=10, memory_mb=MEMORY_MB)
    assert result.error is not None and result.error.splitlines()[-1].startswith("PrintLimitError: the program printed")
    assert not result.has_final_result and time.monotonic() - started < 5
    assert_recovers(sandbox)


def test_printing_up_to_the_bound_is_fine(sandbox):
    result = sandbox.execute("print('x' * 999_000)\nfinal_result = 1", {}, timeout_s=10, memory_mb=MEMORY_MB)
    assert result.ok and result.value == 1 and result.stdout_truncated


def test_oversized_final_result_is_a_program_error(sandbox):
    code = "final_result = ['x' * 1000000 for i in range(70)]"
    result = sandbox.execute(code, {}, timeout_s=20, memory_mb=2048)
    assert result.error is not None and "too large" in result.error
    assert result.infrastructure_error is None
    assert_recovers(sandbox)
