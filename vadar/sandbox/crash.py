"""Reading a crashed worker's report: which program line it was on, and which signal killed it.

The worker enables `faulthandler`, so a segfault leaves the Python stack on its stderr; the
innermost frame of the program or of a library function names the line shown to the LLM.
"""

from __future__ import annotations

import re
import signal

from vadar.text import clip

_FAULT_FRAME = re.compile(r'File "<(program|library (\w+))>", line (\d+)')


def crash_line(tail: str, code: str, libraries: dict[str, str]) -> str:
    """`line N: source` of the innermost program frame in the worker's crash report, if any."""
    match = _FAULT_FRAME.search(tail)
    if match is None:
        return ""
    library, lineno = match.group(2), int(match.group(3))
    source = code if library is None else libraries.get(library, "")
    lines = source.splitlines()
    text = clip(lines[lineno - 1].strip(), 200) if 0 < lineno <= len(lines) else ""
    where = f"line {lineno}" if library is None else f"in {library}, line {lineno}"
    return f"{where}: {text}" if text else where


def signal_name(number: int) -> str:
    """`SIGSEGV` for 11, and so on."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
