"""How many CPU cores are free right now, to size the embedded server's threads.

llama.cpp decodes in lock-step: with more threads than free cores, every step waits for the
thread that was descheduled, and decode speed collapses (docs/embedded-llm.md measured 3 vs 10
tokens/s with one core busy). So the default thread count is the cores left idle by other work,
sampled briefly from /proc/stat (falling back to the load average elsewhere).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    reason: str


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask), not all the machine has."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def busy_cores(sample_s: float = 0.5) -> float | None:
    """Cores' worth of work other processes did over `sample_s`, from /proc/stat; None if unreadable."""
    first = _cpu_times()
    if first is None:
        return None
    time.sleep(sample_s)
    second = _cpu_times()
    if second is None:
        return None
    busy = total = 0.0
    for name, (idle_before, total_before) in first.items():
        if name not in second:
            continue
        idle_after, total_after = second[name]
        spent = total_after - total_before
        if spent > 0:
            total += spent
            busy += spent - (idle_after - idle_before)
    if total <= 0:
        return None
    return busy / total * len(first)


def _cpu_times() -> dict[str, tuple[float, float]] | None:
    """Per-CPU (idle + iowait, total) jiffies."""
    try:
        lines = _STAT.read_text().splitlines()
    except OSError:
        return None
    times = {}
    for line in lines:
        name, *values = line.split()
        if name.startswith("cpu") and name != "cpu":
            numbers = [float(v) for v in values[:8]]
            times[name] = (numbers[3] + numbers[4], sum(numbers))
    return times or None


def choose_threads(configured: int | None, *, sample_s: float = 0.5) -> ThreadChoice:
    """The configured thread count, else the free cores (at least 1)."""
    cores = usable_cores()
    if configured is not None:
        return ThreadChoice(configured, "set by VADAR_EMBEDDED_N_THREADS")
    busy = busy_cores(sample_s)
    if busy is None:
        try:
            busy = os.getloadavg()[0]
            source = "load average"
        except OSError:
            return ThreadChoice(cores, f"all {cores} cores (load unknown)")
    else:
        source = "busy now"
    machine = os.cpu_count() or cores
    busy_here = min(busy * cores / machine, cores)  # scale to the cores we may use
    free = max(1, min(cores, int(cores - busy_here + 0.5)))
    return ThreadChoice(free, f"{busy_here:.1f} of {cores} cores {source}")
