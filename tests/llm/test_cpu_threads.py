"""The embedded server's default thread count follows the cores other work leaves free."""

import vadar.llm.cpu as cpu


def test_configured_threads_win():
    assert cpu.choose_threads(3).threads == 3


def test_default_is_the_free_cores(monkeypatch):
    monkeypatch.setattr(cpu, "usable_cores", lambda: 2)
    monkeypatch.setattr(cpu.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(cpu, "busy_cores", lambda sample_s=0.5: 1.1)
    choice = cpu.choose_threads(None)
    assert choice.threads == 1 and "1.1 of 2 cores busy" in choice.reason
    monkeypatch.setattr(cpu, "busy_cores", lambda sample_s=0.5: 0.1)
    assert cpu.choose_threads(None).threads == 2
    monkeypatch.setattr(cpu, "busy_cores", lambda sample_s=0.5: 5.0)  # never below one thread
    assert cpu.choose_threads(None).threads == 1


def test_busy_cores_reads_proc_stat(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    samples = iter([
        "cpu  0 0 0 0 0 0 0 0\ncpu0 100 0 0 100 0 0 0 0\ncpu1 100 0 0 100 0 0 0 0\n",
        "cpu  0 0 0 0 0 0 0 0\ncpu0 200 0 0 100 0 0 0 0\ncpu1 100 0 0 200 0 0 0 0\n",
    ])
    monkeypatch.setattr(cpu, "_STAT", stat)
    original = cpu._cpu_times

    def next_sample():
        stat.write_text(next(samples))
        return original()

    monkeypatch.setattr(cpu, "_cpu_times", next_sample)
    assert cpu.busy_cores(sample_s=0) == 1.0  # cpu0 fully busy, cpu1 idle
