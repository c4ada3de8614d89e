"""Embedded server lifecycle without a model: ports, startup timeout, early exit, clean stop."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vadar.config import EmbeddedLLMConfig, VadarConfig
from vadar.llm.embedded import (
    EmbeddedServer,
    EmbeddedServerError,
    ensure_port_free,
    find_free_port,
    open_endpoint,
)

# A stand-in server: prints a line, then answers /health with 200 on the port it is given.
FAKE_HEALTHY = textwrap.dedent(
    """
    import http.server, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()
            self.wfile.write(b'{"status":"ok"}')
        def log_message(self, *a):
            pass
    print("fake server up", flush=True)
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_find_free_port_is_bindable() -> None:
    port = find_free_port()
    assert 0 < port < 65536
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_port_in_use_error_names_port_and_setting() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(EmbeddedServerError) as info:
            ensure_port_free("127.0.0.1", port)
        assert str(port) in str(info.value) and "VADAR_EMBEDDED_PORT" in str(info.value)
        server = EmbeddedServer(
            EmbeddedLLMConfig(port=port), "m", Path("unused.gguf"),
            command_factory=lambda p: [sys.executable, "-c", "pass"],
        )
        with pytest.raises(EmbeddedServerError, match="VADAR_EMBEDDED_PORT"):
            server.start()


def test_startup_timeout_reports_log_and_stops_child() -> None:
    code = "import time; print('loading weights slowly', flush=True); time.sleep(120)"
    server = EmbeddedServer(
        EmbeddedLLMConfig(startup_timeout_s=1.5), "m", Path("unused.gguf"),
        command_factory=lambda port: [sys.executable, "-c", code],
    )
    started = time.monotonic()
    with pytest.raises(EmbeddedServerError) as info:
        with server:
            pytest.fail("must not get here")
    assert time.monotonic() - started < 15
    message = str(info.value)
    assert "did not become ready within 1.5s" in message
    assert "loading weights slowly" in message
    assert not server.running


def test_child_exiting_early_is_reported_with_its_output() -> None:
    code = "import sys; print('cannot load model: bad magic', flush=True); sys.exit(3)"
    server = EmbeddedServer(
        EmbeddedLLMConfig(startup_timeout_s=30), "m", Path("unused.gguf"),
        command_factory=lambda port: [sys.executable, "-c", code],
    )
    with pytest.raises(EmbeddedServerError) as info:
        server.start()
    assert "exit code 3" in str(info.value) and "bad magic" in str(info.value)


def test_healthy_fake_server_lifecycle() -> None:
    server = EmbeddedServer(
        EmbeddedLLMConfig(startup_timeout_s=20), "m", Path("unused.gguf"),
        command_factory=lambda port: [sys.executable, "-c", FAKE_HEALTHY, str(port)],
    )
    with server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.running and server.startup_s is not None
        pid = server._proc.pid  # type: ignore[union-attr]
        assert "fake server up" in "\n".join(server.log_tail())
    assert not server.running
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    with pytest.raises(EmbeddedServerError):
        _ = server.base_url


def test_missing_model_file_is_reported_before_launch(tmp_path: Path) -> None:
    server = EmbeddedServer(EmbeddedLLMConfig(), "m", tmp_path / "absent.gguf")
    with pytest.raises(EmbeddedServerError, match="absent.gguf"):
        server.start()


def test_open_endpoint_uses_configured_base_url_without_starting() -> None:
    config = VadarConfig()
    config.llm.base_url = "http://example.invalid:9/v1"
    config.embedded.model_path = Path("/definitely/not/here.gguf")  # would fail if touched
    with open_endpoint(config) as url:
        assert url == "http://example.invalid:9/v1"


def test_child_command_carries_the_settings(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    settings = EmbeddedLLMConfig(n_ctx=2048, n_threads=3, n_parallel=2, speculative="ngram-simple")
    server = EmbeddedServer(settings, "alias-x", model)
    argv = server._default_command(4321)
    joined = " ".join(argv)
    for fragment in ("-m vadar.llm.embedded", "--serve", f"--model {model}", "--alias alias-x",
                     "--port 4321", "--n-ctx 2048", "--threads 3", "--parallel 2",
                     "--speculative ngram-simple", "--parent-pid"):
        assert fragment in joined


def test_an_unknown_speculative_setting_names_the_accepted_ones(tmp_path: Path) -> None:
    server = EmbeddedServer(EmbeddedLLMConfig(speculative="medusa"), "alias-x", tmp_path / "m.gguf")
    with pytest.raises(EmbeddedServerError, match="'medusa' is not one of none, ngram-simple"):
        server._default_command(4321)
