"""`kill` stops a job as Ctrl-C does: the run ends interrupted, with the resume message."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = """
import sys, time, typer, vadar.cli
from vadar.cli.errors import user_errors
vadar.cli.stop_jobs_on_terminate()  # as main() does before the command runs
try:
    with user_errors():
        print("ready", flush=True)  # inside the job: a signal before it would find no job to stop
        time.sleep(30)
except typer.Exit as end:  # as the command line exits
    sys.exit(end.exit_code)
"""


def test_sigterm_interrupts_a_job_like_ctrl_c(tmp_path: Path):
    process = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path)
    assert process.stdout.readline().strip() == "ready"
    started = time.monotonic()
    os.kill(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 130 and time.monotonic() - started < 10
    assert "interrupted: everything answered so far is saved" in err
