"""What a running job reports, and a live `rich` display of it.

Jobs call a `Progress` (the base class does nothing, so library code and tests need no display):
the stage, the batch, what the agents are doing right now (function and attempt), questions done
out of the total, and every LLM reply with its tokens and speed. `LiveProgress` draws this as a
few status lines under the normal output, with an ETA; lines worth keeping (server start-up,
finished batches) are printed above it with `announce`.

Token streaming: the session's LLM client reports each streamed piece of a reply through
`on_token` (a llama.cpp or OpenAI stream sends about one token a piece), so the display shows the
tokens of the reply in progress and their rate; finished replies show their exact
`completion_tokens` and tokens/s from each `ChatResponse`.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from vadar.llm.chat import ChatModel, ChatRequest, ChatResponse


class Progress:
    """Events of a running job. Every method may be called from any thread; all do nothing here."""

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def announce(self, message: str) -> None:
        """A line worth keeping on screen (server start-up, a finished batch)."""

    def stage(self, name: str) -> None:
        """The job's current stage, e.g. `building the API` or `answering questions`."""

    def batch(self, index: int, total: int) -> None:
        """Batch `index` (0-based) of `total` is being built."""

    def activity(self, text: str) -> None:
        """What the agents are doing now, e.g. `implementing _count (attempt 2/5)`."""

    def start_questions(self, total: int, done: int = 0) -> None:
        """Answering begins: `done` of `total` were answered by an earlier run."""

    def question_done(self, label: str) -> None:
        """One more question answered; `label` says how (e.g. `q12: ok`)."""

    def reply_started(self) -> None:
        """An LLM request was sent."""

    def reply_finished(self, response: ChatResponse | None) -> None:
        """An LLM request ended (`None`: it failed)."""

    def on_token(self, n_tokens: int = 1) -> None:
        """`n_tokens` more completion tokens arrived on a streaming request."""


class MeteredChatModel:
    """A `ChatModel` that reports every request to a `Progress`; everything else passes through."""

    def __init__(self, inner: ChatModel, progress: Progress) -> None:
        self.inner = inner
        self.progress = progress

    @property
    def reply_cap(self) -> int | None:
        return self.inner.reply_cap

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.progress.reply_started()
        response: ChatResponse | None = None
        try:
            response = self.inner.complete(request)
            return response
        finally:
            self.progress.reply_finished(response)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def format_duration(seconds: float) -> str:
    """`42s`, `3m05s`, `1h02m`: short enough for a status line."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class LiveProgress(Progress):
    """Draws the job's state with `rich.live` on a terminal; prints plain lines otherwise."""

    def __init__(self, console: Console | None = None, *, refresh_per_second: float = 4) -> None:
        self.console = console or Console(stderr=True)
        self._lock = threading.RLock()
        self._live: Live | None = None
        self._refresh = refresh_per_second
        self._stage = ""
        self._batch = ""
        self._activity = ""
        self._questions: tuple[int, int] | None = None  # (done, total)
        self._resumed = 0
        self._started_at: float | None = None
        self._last_question = ""
        self._replies = 0
        self._waiting = 0
        self._completion_tokens = 0
        self._last_reply = ""
        self._streamed = 0
        self._stream_started: float | None = None
        self._plain_step = 1

    @property
    def interactive(self) -> bool:
        return self.console.is_terminal

    def __enter__(self) -> LiveProgress:
        if self.interactive:
            self._live = Live(get_renderable=self._render, console=self.console,
                              refresh_per_second=self._refresh, transient=True)
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()
        with self._lock:
            if self._questions is not None and self._questions[0] > self._resumed:
                self.console.print(Text(self._questions_line()), highlight=False)

    # ---------------------------------------------------------------- events

    def announce(self, message: str) -> None:
        self.console.print(Text(message), highlight=False)

    def stage(self, name: str) -> None:
        with self._lock:
            self._stage, self._batch, self._activity = name, "", ""
        self.console.print(f"[bold]{escape(name)}[/bold]", highlight=False)

    def batch(self, index: int, total: int) -> None:
        with self._lock:
            self._batch, self._activity = f"batch {index + 1}/{total}", ""

    def activity(self, text: str) -> None:
        with self._lock:
            self._activity = text
        if not self.interactive:
            self.console.print(Text(f"  {text}", style="dim"), highlight=False)

    def start_questions(self, total: int, done: int = 0) -> None:
        with self._lock:
            self._questions, self._resumed = (done, total), done
            self._started_at = time.monotonic()
            self._plain_step = max(1, (total - done) // 10)
        if done:
            self.announce(f"{done} of {total} questions already answered (resuming)")

    def question_done(self, label: str) -> None:
        with self._lock:
            if self._questions is None:
                return
            done, total = self._questions
            self._questions = (done + 1, total)
            self._last_question = label
            fresh = done + 1 - self._resumed
            show_line = not self.interactive and (fresh % self._plain_step == 0 or done + 1 == total)
            line = self._questions_line() if show_line else ""
        if line:
            self.console.print(Text(line), highlight=False)

    def reply_started(self) -> None:
        with self._lock:
            self._waiting += 1
            if self._stream_started is None:
                self._stream_started = time.monotonic()

    def reply_finished(self, response: ChatResponse | None) -> None:
        with self._lock:
            self._waiting = max(0, self._waiting - 1)
            if self._waiting == 0:
                self._streamed, self._stream_started = 0, None
            if response is None:
                return
            self._replies += 1
            self._completion_tokens += response.completion_tokens
            self._last_reply = describe_reply(response)

    def on_token(self, n_tokens: int = 1) -> None:
        with self._lock:
            self._streamed += n_tokens

    # ---------------------------------------------------------------- drawing

    def eta_seconds(self) -> float | None:
        """Remaining time at this run's pace (questions answered by earlier runs do not count)."""
        with self._lock:
            if self._questions is None or self._started_at is None:
                return None
            done, total = self._questions
            fresh = done - self._resumed
            if fresh <= 0:
                return None
            return (time.monotonic() - self._started_at) / fresh * (total - done)

    def _questions_line(self) -> str:
        assert self._questions is not None
        done, total = self._questions
        elapsed = time.monotonic() - (self._started_at or time.monotonic())
        eta = self.eta_seconds()
        parts = [f"questions {done}/{total}", f"elapsed {format_duration(elapsed)}",
                 f"ETA {format_duration(eta) if eta is not None else '?'}"]
        if self._last_question:
            parts.append(f"last {self._last_question}")
        return " · ".join(parts)

    def _llm_line(self) -> str:
        parts = [f"LLM: {self._replies} replies, {self._completion_tokens} tokens"]
        if self._waiting:
            parts.append(f"{self._waiting} waiting")
        if self._streamed and self._stream_started is not None:
            seconds = max(time.monotonic() - self._stream_started, 1e-6)
            parts.append(f"streaming {self._streamed} tokens ({self._streamed / seconds:.1f} tok/s)")
        if self._last_reply:
            parts.append(f"last reply {self._last_reply}")
        return " · ".join(parts)

    def _render(self) -> RenderableType:
        with self._lock:
            head = " · ".join(filter(None, [self._stage, self._batch, self._activity]))
            rows: list[RenderableType] = [Text(head or "starting", style="bold cyan")]
            if self._questions is not None:
                done, total = self._questions
                grid = Table.grid(padding=(0, 1))
                grid.add_row(ProgressBar(total=max(total, 1), completed=done, width=30),
                             Text(self._questions_line()))
                rows.append(grid)
            rows.append(Text(self._llm_line(), style="dim"))
        return Group(*rows)


def describe_reply(response: ChatResponse) -> str:
    """`212 tokens in 8.5s (24.9 tok/s)`, or `212 tokens (cached)` for a response-cache hit."""
    tokens = response.completion_tokens
    if response.from_cache:
        return f"{tokens} tokens (cached)"
    if response.latency_s <= 0:
        return f"{tokens} tokens"
    return f"{tokens} tokens in {response.latency_s:.1f}s ({tokens / response.latency_s:.1f} tok/s)"
