"""The embedded OpenAI-compatible LLM server: llama.cpp (via xllamacpp) in a child process.

Why a child process: the native server loads a gigabyte model and runs its own HTTP and compute
threads. In a separate process a native crash cannot take vadar down, stopping is a plain
terminate (no native destructors to wait on), and Python's GIL is never contended by the server.
The child is started in its own session (so a terminal Ctrl-C reaches only vadar, which then stops
it in order) and watches its parent pid, so it exits by itself if vadar is killed outright.

Run as `python -m vadar.llm.embedded --serve --model PATH --port N ...` this module is the child.
"""

from __future__ import annotations

import argparse
import atexit
import collections
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from vadar.config import SPECULATIVE_TYPES, EmbeddedLLMConfig, VadarConfig

PORT_SETTING = "VADAR_EMBEDDED_PORT"
# Host-RAM cache of prompt KV states, so prefixes can be restored after a slot served another prompt.
PROMPT_CACHE_RAM_MIB = 1024
# Minimum chunk size llama.cpp may reuse by KV shifting when only part of a prefix matches.
CACHE_REUSE_MIN_TOKENS = 256
_LOG_LINES = 200
_STOP_GRACE_S = 5.0

CommandFactory = Callable[[int], Sequence[str]]


def speculative_type(name: str) -> str:
    """Check an `embedded.speculative` setting early, in the parent, with the accepted names."""
    if name not in SPECULATIVE_TYPES:
        raise EmbeddedServerError(
            f"embedded.speculative = {name!r} is not one of {', '.join(SPECULATIVE_TYPES)}")
    return name


class EmbeddedServerError(RuntimeError):
    """The embedded server could not start or stopped unexpectedly; the message says why."""


class EmbeddedServer:
    """Context manager running the llama.cpp server for one model on 127.0.0.1.

    `with EmbeddedServer(config, model_name, model_path) as server:` blocks until the server
    answers `/health`, then `server.base_url` is `http://127.0.0.1:PORT/v1`. Leaving the block
    (normally, by exception or Ctrl-C) stops the child; so does interpreter exit (atexit).
    """

    def __init__(
        self,
        config: EmbeddedLLMConfig,
        model_name: str,
        model_path: Path,
        *,
        command_factory: CommandFactory | None = None,
        log_sink: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.model_name = model_name
        self.model_path = Path(model_path)
        self._command_factory = command_factory or self._default_command
        self._log_sink = log_sink
        self._log: collections.deque[str] = collections.deque(maxlen=_LOG_LINES)
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self.port: int | None = None
        self.startup_s: float | None = None
        self.threads = config.n_threads or os.cpu_count() or 1  # `open_endpoint` picks from free cores

    # -- public -----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The OpenAI base URL clients should use; only valid while the server runs."""
        if self.port is None:
            raise EmbeddedServerError("the embedded server is not running")
        return f"http://{_connect_host(self.config.host)}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 20) -> list[str]:
        """The server's last log lines (for error messages and diagnostics)."""
        return list(self._log)[-lines:]

    def start(self) -> EmbeddedServer:
        """Launch the child and wait until it is healthy or `startup_timeout_s` has passed."""
        if self.running:
            return self
        if self._command_factory == self._default_command and not self.model_path.is_file():
            raise EmbeddedServerError(f"model file {self.model_path} does not exist")
        port = self._choose_port()
        started = time.monotonic()
        self._proc = subprocess.Popen(
            list(self._command_factory(port)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=True,
            env=_child_env(),
        )
        self.port = port
        _LIVE.add(self)
        self._reader = threading.Thread(target=self._pump_log, name="vadar-llm-log", daemon=True)
        self._reader.start()
        try:
            self._wait_healthy(started)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - started
        return self

    def stop(self) -> None:
        """Terminate the child (SIGTERM, then SIGKILL after a grace period) and reap it."""
        proc, self._proc = self._proc, None
        _LIVE.discard(self)
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=2.0)
        self.port = None

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals --------------------------------------------------------------------------

    def _choose_port(self) -> int:
        if self.config.port is None:
            return find_free_port(self.config.host)
        ensure_port_free(self.config.host, self.config.port)
        return self.config.port

    def _default_command(self, port: int) -> list[str]:
        cfg = self.config
        return [
            sys.executable, "-m", "vadar.llm.embedded", "--serve",
            "--model", str(self.model_path),
            "--alias", self.model_name,
            "--host", cfg.host,
            "--port", str(port),
            "--n-ctx", str(cfg.n_ctx),
            "--threads", str(self.threads),
            "--parallel", str(cfg.n_parallel),
            "--speculative", speculative_type(cfg.speculative),
            "--parent-pid", str(os.getpid()),
        ]

    def _pump_log(self) -> None:
        """Drain the child's output (a full pipe would block it) into a ring buffer."""
        proc = self._proc
        if proc is None or proc.stdout is None:
            return
        for line in proc.stdout:
            line = line.rstrip("\n")
            self._log.append(line)
            if self._log_sink is not None:
                self._log_sink(line)

    def _wait_healthy(self, started: float) -> None:
        deadline = started + self.config.startup_timeout_s
        url = f"http://{_connect_host(self.config.host)}:{self.port}/health"
        while True:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                code = None if proc is None else proc.returncode
                time.sleep(0.2)  # let the log reader catch the child's last words
                raise EmbeddedServerError(
                    f"the embedded LLM server exited during startup (exit code {code}).\n"
                    + self._format_log()
                )
            if _is_healthy(url):
                return
            if time.monotonic() >= deadline:
                raise EmbeddedServerError(
                    f"the embedded LLM server did not become ready within "
                    f"{self.config.startup_timeout_s:g}s (raise VADAR_EMBEDDED_STARTUP_TIMEOUT_S "
                    f"if the machine is just slow).\n" + self._format_log()
                )
            time.sleep(0.25)

    def _format_log(self) -> str:
        tail = self.log_tail(20)
        if not tail:
            return "The server printed nothing."
        return "Last server log lines:\n" + "\n".join(f"  | {line}" for line in tail)


def find_free_port(host: str = "127.0.0.1") -> int:
    """A port the OS reports free right now (the server binds it a moment later)."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def ensure_port_free(host: str, port: int) -> None:
    """Raise a clear error naming the port and its setting if something already listens there."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise EmbeddedServerError(
                f"port {port} on {host} is already in use ({exc.strerror}); the embedded LLM server "
                f"port is set by {PORT_SETTING} (or [embedded] port). Pick another port, or unset it "
                "to let vadar choose a free one."
            ) from exc


@contextmanager
def open_endpoint(config: VadarConfig, *, progress: bool = True,
                  announce: Callable[[str], None] | None = None) -> Iterator[str]:
    """Yield an OpenAI base URL: `config.llm.base_url` if set, else a freshly started embedded server.

    `announce` hears, in one line each, what is chosen and started: model assembly, the thread
    count (from the cores free right now unless configured) and the server's start-up time.
    """
    say = announce or (lambda message: None)
    if config.llm.base_url:
        yield config.llm.base_url
        return
    from vadar.llm.cpu import choose_threads
    from vadar.llm.model_files import model_needs_assembly, resolve_model_path

    if model_needs_assembly(config.embedded, config.paths.model_cache):
        say(f"assembling the embedded model into {config.paths.model_cache} (once, about 1.1 GB)")
    model_path = resolve_model_path(config.embedded, config.paths.model_cache, progress=progress)
    choice = choose_threads(config.embedded.n_threads)
    server = EmbeddedServer(config.embedded, config.llm.model, model_path)
    server.threads = choice.threads
    say(f"starting the embedded LLM server: {choice.threads} thread{'s' if choice.threads != 1 else ''} "
        f"({choice.reason}; set VADAR_EMBEDDED_N_THREADS to override)")
    with server:
        say(f"embedded LLM ready at {server.base_url} in {server.startup_s or 0:.1f}s")
        yield server.base_url


def _is_healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False  # not listening yet, or 503 while the model loads


def _connect_host(host: str) -> str:
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _child_env() -> dict[str, str]:
    """The child must import this very vadar, even from an uninstalled source checkout."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


_LIVE: set[EmbeddedServer] = set()


@atexit.register
def _stop_all() -> None:
    """Never leave an orphan: stop every server still running when the interpreter exits."""
    for server in list(_LIVE):
        server.stop()


# -- the child process ------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    """Child main: load the model, serve until SIGTERM/SIGINT or until the parent disappears."""
    if args.parent_pid:
        threading.Thread(target=_watch_parent, args=(args.parent_pid,), daemon=True).start()
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.n_ctx
    params.n_parallel = args.parallel
    params.kv_unified = True  # slots share one KV pool, so any request may use the full n_ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.cache_prompt = True  # reuse the KV of a repeated prompt prefix
    params.n_cache_reuse = CACHE_REUSE_MIN_TOKENS
    params.cache_ram_mib = PROMPT_CACHE_RAM_MIB
    if args.speculative != "none":
        kind = f"COMMON_SPECULATIVE_TYPE_{args.speculative.upper().replace('-', '_')}"
        params.speculative.types = [getattr(xllamacpp.common_speculative_type, kind)]
    params.ui = False
    params.offline = True
    params.endpoint_metrics = True
    # Until here SIGTERM has its default action (immediate exit), which also covers the
    # blocking model load below, during which Python-level handlers could not run.
    server = xllamacpp.Server(params)  # returns once the model is loaded and the port is bound
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"vadar-embedded: ready at {server.listening_address}", flush=True)
    while not stop.wait(0.5):
        pass
    print("vadar-embedded: stopping", flush=True)
    sys.stdout.flush()
    # Skip native destructors: they may wait on a generation in progress; the OS frees everything.
    os._exit(0)


def _watch_parent(parent_pid: int) -> None:
    while True:
        if os.getppid() != parent_pid:
            os._exit(0)
        time.sleep(1.0)


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m vadar.llm.embedded", description=__doc__)
    parser.add_argument("--serve", action="store_true", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--speculative", choices=SPECULATIVE_TYPES, default="none")
    parser.add_argument("--parent-pid", type=int, default=0)
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(_serve(_parse_args(sys.argv[1:])))
