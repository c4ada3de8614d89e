"""The error text a program's author (the LLM) reads: the failing lines, the exception and a hint.

Runs inside the sandbox worker (standard library only). Messages are bounded: a program controls
its exceptions' arguments, so nothing here calls their `__repr__` or `__str__` beyond exact
scalar types.
"""

from __future__ import annotations

import difflib

from vadar.text import bounded_repr, clip

MAX_SHOWN_FRAMES = 8


MAX_LINE_CHARS = 200
"""Source lines quoted in errors are cut to this length (a generated line can be megabytes)."""


def source_line(sources: dict[str, tuple[str, list[str]]], filename: str, lineno: int | None) -> str:
    label, lines = sources[filename]
    text = clip(lines[lineno - 1].strip(), MAX_LINE_CHARS) if lineno and 0 < lineno <= len(lines) else ""
    where = f"line {lineno}" if label == "" else f"in {label}, line {lineno}"
    return f"{where}: {text}" if text else where


MAX_MESSAGE_CHARS = 2000
"""Exception messages are cut to this length; the LLM reads them."""


_PLAIN_ARGS = (str, int, float, bool, type(None))
_UNICODE_ERRORS = (UnicodeEncodeError, UnicodeDecodeError, UnicodeTranslateError)


def _message(exc: BaseException) -> str:
    """The exception's message, bounded, without running code the program chose.

    `str(exc)` is only used where it is known to be small and builtin: plain scalar arguments of
    modest size, or the codec errors (which quote one character). Anything else is shown with
    `bounded_repr`, so a small argument that stands for a huge text costs nothing.
    """
    args = exc.args if isinstance(exc.args, tuple) else ()
    plain = all(type(a) in _PLAIN_ARGS for a in args)
    small = sum(len(a) for a in args if type(a) is str) <= MAX_MESSAGE_CHARS
    if type(exc) in _UNICODE_ERRORS or (plain and small):
        try:
            return str(exc)
        except Exception:  # noqa: BLE001 - e.g. an int beyond the str() digit limit
            return bounded_repr(args, MAX_MESSAGE_CHARS)
    if len(args) == 1 and type(args[0]) is str:
        return args[0][: MAX_MESSAGE_CHARS + 1]
    return bounded_repr(args[0] if len(args) == 1 else args, MAX_MESSAGE_CHARS + 1)


def _exception_line(exc: BaseException) -> str:
    message = clip(_message(exc), MAX_MESSAGE_CHARS)
    name = type(exc).__name__
    line = f"{name}: {message}" if message else name
    return line + _hint(exc)


def _hint(exc: BaseException) -> str:
    """How to fix a mistake small models repeat on every retry when only told its name."""
    if isinstance(exc, UnboundLocalError):
        local = getattr(exc, "name", None) or _quoted_name(str(exc))
        if local:
            return (f"\nHint: `{local}` is assigned somewhere in this function, so every use of it there "
                    f"is the local variable; if `{local}` is an API function (e.g. `{local} = {local}(...)`), "
                    f"name the variable differently, e.g. `{local}_value`.")
    elif isinstance(exc, NameError):
        missing = getattr(exc, "name", None) or _quoted_name(str(exc))
        if missing:
            return _undefined_name_hint(missing, _visible_names(exc))
    return ""


def _visible_names(exc: BaseException) -> list[str]:
    """The names the failing frame could see: its locals and its module's globals."""
    tb = exc.__traceback__
    if tb is None:
        return []
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    names = {*frame.f_globals, *frame.f_locals}
    return sorted(name for name in names if not name.startswith("__"))


def _undefined_name_hint(missing: str, visible: list[str]) -> str:
    """A retry that is told only "name 'sphere' is not defined" usually repeats the line."""
    close = difflib.get_close_matches(missing, visible, n=1, cutoff=0.8)
    if close:
        return f"\nHint: `{missing}` does not exist here; did you mean `{close[0]}`?"
    return (f"\nHint: nothing is assigned to `{missing}` before this line runs: assign it on an earlier "
            "line, or use an API function or a variable defined above.")


def _quoted_name(message: str) -> str | None:
    start = message.find("'")
    end = message.find("'", start + 1)
    return message[start + 1:end] if 0 <= start < end else None


def format_error(exc: BaseException, sources: dict[str, tuple[str, list[str]]]) -> str:
    """Program-level traceback: one line per program/library frame, repeats collapsed."""
    if isinstance(exc, SyntaxError) and exc.filename in sources:
        return f"{source_line(sources, exc.filename, exc.lineno)}\nSyntaxError: {clip(str(exc.msg), MAX_MESSAGE_CHARS)}"
    frames: list[str] = []
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in sources:
            frames.append(source_line(sources, filename, tb.tb_lineno))
        tb = tb.tb_next
    collapsed: list[str] = []
    count = 0
    for i, frame in enumerate(frames):
        count += 1
        if i + 1 < len(frames) and frames[i + 1] == frame:
            continue
        collapsed.append(frame if count == 1 else f"{frame}   [repeated {count} times]")
        count = 0
    if len(collapsed) > MAX_SHOWN_FRAMES:
        hidden = len(collapsed) - MAX_SHOWN_FRAMES
        collapsed = collapsed[:3] + [f"... {hidden} more calls ..."] + collapsed[-(MAX_SHOWN_FRAMES - 3) :]
    return "\n".join([*collapsed, _exception_line(exc)])
