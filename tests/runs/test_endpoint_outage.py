"""Endpoint outages in a long run: stop with a line that says how to resume, or (--keep-going)
record the question as an infrastructure error, go on, and ask it again on the rerun. A hung
endpoint is reported after two silent attempts (about a minute by default)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import typer
from rich.console import Console

from llm_fake_server import FakeServer, MESSAGES, make_client, make_config
from scripted_jobs import program_of_its_kind
from vadar.cli.errors import user_errors
from vadar.config import LLMConfig, VadarConfig
from vadar.llm.chat import ChatRequest
from vadar.llm.client import SILENT_ATTEMPTS, LLMClient, build_chat_model
from vadar.llm.doubles import ScriptedLLM
from vadar.llm.errors import LLMBadResponseError, LLMSilentError, LLMUnavailableError
from vadar.runs.evaluation import RunStoppedError
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

PROGRAM = program_of_its_kind  # the third question asks for a shape
OUTAGES = [LLMUnavailableError("LLM endpoint x kept failing with HTTP 500 after 5 attempt(s)"),
           LLMBadResponseError("LLM endpoint x answered with a body that is not a chat completion"),
           LLMSilentError("LLM endpoint x sent nothing for 30 s")]


def test_a_hung_endpoint_gives_its_error_after_two_silent_attempts(server: FakeServer) -> None:
    server.script = [{"hang": True}] * 5
    client = make_client(server.base_url, config=make_config(inactivity_timeout_s=0.3, max_retries=4, timeout_s=60))
    started = time.monotonic()
    with pytest.raises(LLMSilentError, match="sent nothing for 0.3 s"):
        client.complete(ChatRequest(MESSAGES))
    assert server.hits == SILENT_ATTEMPTS == 2 and time.monotonic() - started < 3


def test_the_default_limits_report_a_hung_endpoint_in_about_a_minute(tmp_path: Path) -> None:
    assert LLMConfig().inactivity_timeout_s * SILENT_ATTEMPTS <= 70
    config = VadarConfig()
    config.paths.home = tmp_path
    config.llm.base_url = "http://127.0.0.1:9/v1"
    remote = build_chat_model(config)
    assert remote.config.inactivity_timeout_s == 30 and remote.silence_setting == "VADAR_LLM_INACTIVITY_TIMEOUT_S"
    config.llm.base_url = None  # the embedded server keeps its long silence limit, named in its errors
    embedded = build_chat_model(config, base_url="http://127.0.0.1:9/v1")
    assert embedded.config.inactivity_timeout_s == 180
    assert embedded.silence_setting == "VADAR_EMBEDDED_INACTIVITY_TIMEOUT_S"


def test_the_silence_error_names_the_variable_that_sets_the_limit(server: FakeServer) -> None:
    server.script = [{"hang": True}] * 2
    config = make_config(inactivity_timeout_s=0.2, max_retries=1, timeout_s=30)
    client = LLMClient(config, base_url=server.base_url, retry_wait_s=0.01,
                       silence_setting="VADAR_EMBEDDED_INACTIVITY_TIMEOUT_S")
    with pytest.raises(LLMSilentError, match="VADAR_EMBEDDED_INACTIVITY_TIMEOUT_S"):
        client.complete(ChatRequest(MESSAGES))


@pytest.mark.parametrize("outage", OUTAGES, ids=["http-500", "not-json", "hung"])
def test_an_outage_stops_the_run_with_how_to_resume(tmp_path: Path, run_config: VadarConfig, outage: Exception) -> None:
    data = DataSelection(limit=3).prepare()
    out = tmp_path / "run"
    with open_session(run_config, llm=ScriptedLLM([PROGRAM, outage])) as session:
        with pytest.raises(RunStoppedError) as info:
            evaluate(session, data, out, method="static-api", show_progress=False)
    message = str(info.value)
    assert str(outage) in message and "1 of 3 questions are answered" in message
    assert "rerun the same command to resume" in message and "--keep-going" in message and "\n" not in message
    assert len((out / "results.jsonl").read_text().splitlines()) == 1
    with open_session(run_config, llm=ScriptedLLM([PROGRAM, PROGRAM])) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    assert summary.questions == 3 and not summary.failed


@pytest.mark.parametrize("outage", OUTAGES, ids=["http-500", "not-json", "hung"])
def test_keep_going_records_infrastructure_errors_and_the_rerun_asks_again(tmp_path: Path, run_config: VadarConfig,
                                                                          outage: Exception) -> None:
    run_config.eval.keep_going = True
    data = DataSelection(limit=3).prepare()
    out = tmp_path / "run"
    llm = ScriptedLLM([PROGRAM, outage, PROGRAM])
    with open_session(run_config, llm=llm) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert summary.questions == 3 and len(summary.failed) == 1
    assert [r.get("infrastructure_error", False) for r in rows] == [False, True, False]
    assert rows[1]["error"].startswith("infrastructure error: ") and str(outage) in rows[1]["error"]
    again = ScriptedLLM([PROGRAM])
    with open_session(run_config, llm=again) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    assert len(again.calls) == 1 and summary.questions == 3 and not summary.failed


def test_the_cli_shows_the_stop_in_one_line() -> None:
    console = Console(record=True, width=400)
    with pytest.raises(typer.Exit), user_errors(console):
        raise RunStoppedError("endpoint down -- the run stopped; rerun the same command to resume")
    assert console.export_text().strip().splitlines() == [
        "Error: endpoint down -- the run stopped; rerun the same command to resume"]
