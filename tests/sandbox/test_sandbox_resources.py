"""Resource-limit corpus: every phase of the worker under the memory limit, bounded host-side
records and worker output, crashes and unencodable values as program errors.

Each case runs in a fresh worker with `memory_mb=256`; the worker's peak resident memory (VmHWM,
read just before it exits or is killed) must stay within 1.5 x the limit plus the idle worker.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from vadar.sandbox.process import WorkerProcess
from vadar.sandbox import ExecutionResult, Sandbox

MEMORY_MB = 256
NESTED = "a = [0] * 1000\nb = [a] * 1000\nc = [b] * 1000\n"  # 24 KB that reads as 10**9 items

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux")


def _status_mb(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Peaks:
    """Peak resident memory of every worker, read when it is killed and after each run."""

    def __init__(self) -> None:
        self.mb = 0.0

    def read(self, pid: int) -> None:
        self.mb = max(self.mb, _status_mb(pid, "VmHWM"))


@pytest.fixture
def peaks(monkeypatch: pytest.MonkeyPatch) -> Peaks:
    seen = Peaks()
    kill = WorkerProcess.kill

    def kill_and_read(worker: WorkerProcess) -> None:
        seen.read(worker.process.pid)
        kill(worker)

    monkeypatch.setattr(WorkerProcess, "kill", kill_and_read)
    return seen


def run_measured(code: str, peaks: Peaks, namespace: dict | None = None, timeout_s: float = 5) -> tuple[ExecutionResult, float]:
    """Run `code` in a fresh worker; return the result and the idle worker's resident memory."""
    with Sandbox() as box:
        box.execute("x = 1", {}, memory_mb=MEMORY_MB)
        baseline = _status_mb(box._worker.process.pid, "VmHWM")
        peaks.mb = 0.0
        result = box.execute(code, namespace or {}, timeout_s=timeout_s, memory_mb=MEMORY_MB)
        if box._worker is not None:
            peaks.read(box._worker.process.pid)
            assert box.execute("final_result = 7", {}, memory_mb=MEMORY_MB).value == 7
    assert peaks.mb <= 1.5 * MEMORY_MB + baseline, (peaks.mb, baseline)
    assert result.infrastructure_error is None
    return result, baseline


GENERATOR_ALLOCATING_IN_FINALLY = """
def grow():
    try:
        yield 1
    finally:
        hoard = []
        while True:
            hoard = hoard + [' ' * 10**6]
"""
# (no attribute access in the finally block: when the namespace is cleared the guards are gone)

MEMORY_PHASES = {
    # cleanup: a generator's finally block runs when the namespace is cleared
    "finally-at-namespace-clear": (GENERATOR_ALLOCATING_IN_FINALLY + "g = grow()\nnext(g)\nfinal_result = 1", None),
    "finally-held-by-traceback": (
        GENERATOR_ALLOCATING_IN_FINALLY + "def f():\n    g = grow()\n    next(g)\n    raise ValueError('x')\nf()",
        "ValueError: x",
    ),
    "finally-after-memory-error": (
        GENERATOR_ALLOCATING_IN_FINALLY + "g = grow()\nnext(g)\nbig = [0] * 10**10", "MemoryError: program exceeded"),
    # error formatting: str(exc) of program-controlled objects and small args with huge text
    "counter-attribute-write": (
        "from collections import Counter\nc = Counter('ab')\nc.most_common = lambda *a: [0] * 10**9\nraise ValueError(c)",
        "TypeError: cannot set attributes of an object of type Counter",
    ),
    "ordered-dict-attribute-write": (
        "from collections import OrderedDict\nd = OrderedDict()\nd.x = 1", "TypeError: cannot set attributes"),
    "nested-list-argument": (NESTED + "raise ValueError(c)", "ValueError: [[["),
    "nested-tuple-key-error": (
        "a = (0,) * 1000\nb = (a,) * 1000\nc = (b,) * 1000\nraise KeyError(c)", "KeyError: ((("),
    "several-arguments": (NESTED + "raise RuntimeError(c, c, 'x' * 10**7)", "RuntimeError: ("),
    "long-message": ("raise ValueError('x' * 10**8)", "more characters]"),
    # serialisation: a small final_result whose JSON is enormous
    "nested-final-result": (NESTED + "final_result = c", "final_result cannot be returned: too large"),
    "nested-dict-final-result": (NESTED + "final_result = {i: c for i in range(3)}", "too large"),
    "many-strings-final-result": ("final_result = ['x' * 1000000 for i in range(40)]", "too large"),
}


@pytest.mark.parametrize("name", list(MEMORY_PHASES))
def test_memory_limit_holds_in_every_phase(name: str, peaks: Peaks) -> None:
    code, expected = MEMORY_PHASES[name]
    started = time.monotonic()
    result, _ = run_measured(code, peaks)
    assert time.monotonic() - started < 5
    if expected is None:
        assert result.ok and result.value == 1, result
    else:
        assert result.error is not None and expected in result.error, result.error
        assert len(result.error) < 5000


def test_a_memory_error_the_program_raises_is_not_the_limit(peaks: Peaks) -> None:
    result, _ = run_measured("raise MemoryError('x')", peaks)
    assert result.error == "line 1: raise MemoryError('x')\nMemoryError: x" and not result.memory_exceeded


def test_a_runaway_finally_block_is_stopped_by_the_clock(peaks: Peaks) -> None:
    code = "def g():\n    try:\n        yield 1\n    finally:\n        while True:\n            pass\nx = g()\nnext(x)\nfinal_result = 1"
    result, _ = run_measured(code, peaks, timeout_s=1)
    assert result.timed_out


@pytest.mark.parametrize(
    ("code", "where"),
    [
        ("t = ()\nfor i in range(10**6):\n    t = (t,)\nfinal_result = hash(t)", "line 4: final_result = hash(t)"),
        ("it = [1]\nfor i in range(10**6):\n    it = map(abs, it)\nfinal_result = list(it)", "line 4"),
        ("it = [1]\nfor i in range(10**6):\n    it = zip(it)\nfinal_result = list(it)", "line 4"),
    ],
    ids=["nested-tuple-hash", "map-chain", "zip-chain"],
)
def test_a_crash_of_the_interpreter_is_the_programs_error(code: str, where: str, peaks: Peaks) -> None:
    result, _ = run_measured(code, peaks, timeout_s=20)
    assert result.crashed and not result.ok
    assert "SandboxCrash: the program crashed the Python interpreter (SIGSEGV)" in result.error
    assert result.error.startswith(where), result.error


@pytest.mark.parametrize(
    ("code", "namespace"),
    [
        ("final_result = 'a' + chr(0xD800)", {}),
        ("final_result = {chr(0xDFFF): 1}", {}),
        ("final_result = loc(chr(0xD800))", {"loc": lambda text: 1}),
    ],
    ids=["string", "dict-key", "host-argument"],
)
def test_text_that_is_not_unicode_is_a_program_error(code: str, namespace: dict, peaks: Peaks) -> None:
    result, _ = run_measured(code, peaks, namespace)
    assert "not valid Unicode (a lone surrogate" in result.error
    result.error.encode("utf-8")


def test_an_error_message_with_a_surrogate_is_made_storable(peaks: Peaks) -> None:
    result, _ = run_measured("raise ValueError('bad ' + chr(0xD800))", peaks)
    assert result.error.endswith("ValueError: bad \\ud800")


def _host_rss_mb() -> float:
    return _status_mb(os.getpid(), "VmRSS")


def test_oversized_host_arguments_are_refused_in_the_worker(peaks: Peaks) -> None:
    seen: list[int] = []
    before = _host_rss_mb()
    code = "s = 'x' * (20 * 2**20)\nfor i in range(40):\n    loc(s)"
    result, _ = run_measured(code, peaks, {"loc": lambda text: seen.append(len(text))})
    assert "cannot pass this argument to loc(): too large to send (more than 4 MB encoded)" in result.error
    assert seen == [] and _host_rss_mb() - before < 100


def test_large_host_arguments_are_recorded_as_summaries(peaks: Peaks) -> None:
    before = _host_rss_mb()
    code = "s = 'x' * (3 * 2**20)\nfor i in range(60):\n    loc(s + str(i))\nfinal_result = 1"
    result, _ = run_measured(code, peaks, {"loc": lambda text: len(text)}, timeout_s=30)
    assert result.ok and len(result.calls) == 60
    assert result.calls[0].args[0].startswith("<str of 3145729 characters: 'xxx")
    assert result.calls[0].result == 3 * 2**20 + 1
    assert sum(len(repr(c)) for c in result.calls) < 250_000
    assert _host_rss_mb() - before < 100


def test_the_call_log_is_bounded_in_count(peaks: Peaks) -> None:
    result, _ = run_measured("for i in range(1000):\n    depth(i)\nfinal_result = 1", peaks, {"depth": lambda i: 1.5})
    assert result.ok and len(result.calls) == 200 and result.calls_dropped == 800


def test_cleanup_errors_in_a_loop_write_nothing_to_disk(peaks: Peaks, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    code = (
        "def g():\n    try:\n        yield 1\n    finally:\n        raise ValueError('e' * 10**6)\n"
        "for i in range(3000):\n    x = g()\n    next(x)\n    x = None\nfinal_result = 1"
    )
    with Sandbox() as box:
        result = box.execute(code, {}, timeout_s=10, memory_mb=MEMORY_MB)
        assert result.ok and result.value == 1
        assert box._worker.stderr.total < 10_000
    assert list(tmp_path.iterdir()) == []


def test_worker_stderr_is_bounded_on_both_sides() -> None:
    from vadar.sandbox.stderr import StderrBuffer
    from vadar.sandbox.worker import BoundedStream

    read_fd, write_fd = os.pipe()
    buffer = StderrBuffer(read_fd, keep=1000, recycle_after=50_000)
    stream = BoundedStream(write_fd, 20_000)
    for _ in range(1000):
        stream.write("y" * 1000)
    assert stream.full
    os.write(write_fd, b"z" * 100_000)  # what native code could write past the Python stream
    os.close(write_fd)
    assert buffer.tail(limit=5000, wait_s=5) == "z" * 1000
    assert buffer.total == 120_000 and buffer.full


def test_huge_source_lines_are_cut_in_errors(peaks: Peaks) -> None:
    result, _ = run_measured("x = 1 + 'a'  # " + "y" * 2_000_000, peaks)
    assert result.error.startswith("line 1: x = 1 + 'a'") and len(result.error) < 500
