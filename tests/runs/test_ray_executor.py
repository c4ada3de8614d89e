"""`--executor ray`: questions as tasks on a local Ray cluster, with the scripted LLM and oracle modules.

Marked `ray`; skipped without the `ray` extra. One cluster (2 CPUs, 127.0.0.1) serves the module.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from ray_doubles import HELPER, OUTAGE, outage, scripted_llm, write_plugin_metadata  # noqa: E402
from vadar.runs.ablation import parse_grid_entry, run_ablation  # noqa: E402
from vadar.config import VadarConfig  # noqa: E402
from vadar.runs.executors.ray_cluster import RayCluster  # noqa: E402
from vadar.runs.executors.ray_executor import QuestionsLostError  # noqa: E402
from vadar.llm.doubles import ScriptedLLM  # noqa: E402
from vadar.runs.evaluation import RunStoppedError  # noqa: E402
from vadar.runs.pipeline import evaluate  # noqa: E402
from vadar.runs.prepare import DataSelection  # noqa: E402
from vadar.runs.results import ResultsFile  # noqa: E402
from vadar.runs.session import open_session  # noqa: E402
from ray_doubles import program_for  # noqa: E402

pytestmark = pytest.mark.ray
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster_env(tmp_path_factory):
    """A 2-CPU Ray instance on 127.0.0.1 whose workers import this checkout, the test doubles and
    the `halfblind` module plugin; shut down after the module's tests."""
    plugins = write_plugin_metadata(tmp_path_factory.mktemp("plugins"))
    load_log = tmp_path_factory.mktemp("loads") / "loads.txt"
    sys.path.insert(0, str(plugins))
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), str(Path(__file__).parent), str(plugins)]),
           "VADAR_TEST_LOAD_LOG": str(load_log), "VADAR_TEST_LLM_DELAY": "0.05"}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    try:
        yield {"env": env, "address": ray.get_runtime_context().gcs_address, "load_log": load_log}
    finally:
        ray.shutdown()
        sys.path.remove(str(plugins))


def config_for(home: Path, *, retries: int = 3) -> VadarConfig:
    config = VadarConfig()
    config.paths.home = home
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    config.ray.task_cpus = 0.5
    config.ray.max_retries = retries
    config.ray.module_actors = 1
    return config


def with_helper(session) -> None:
    session.store.propose("_count", "(image: Image, object_prompt: str) -> int", "Count matching objects.")
    session.store.implement("_count", HELPER)
    session.store.mark_admitted("_count")


def lines_of(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def comparable(summary_dir: Path) -> list[tuple]:
    rows = sorted(lines_of(summary_dir / "results.jsonl"), key=lambda r: r["question_id"])
    return [(r["question_id"], r["answer"], r["score"], r["program"], r["error"]) for r in rows]


def local_llm():
    return ScriptedLLM([lambda messages: f"```python\n{program_for(str(messages[-1]['content']))}\n```"] * 200)


def test_ray_gives_the_local_results_with_the_library_shipped_to_workers(cluster_env, tmp_path):
    data = DataSelection().prepare()
    config = config_for(tmp_path / "home")
    with open_session(config, llm=local_llm()) as session:
        with_helper(session)
        local = evaluate(session, data, tmp_path / "local", method="vadar", scope="all", show_progress=False)
        with RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
            remote = evaluate(session, data, tmp_path / "ray", method="vadar", scope="all", show_progress=False,
                              cluster=cluster)
        assert session.usage.totals().calls == 12  # the workers' calls, counted by the driver
    assert comparable(tmp_path / "ray") == comparable(tmp_path / "local")
    assert any("_count(" in (row[3] or "") and row[2] == 1.0 for row in comparable(tmp_path / "ray"))
    assert remote.metrics.total == local.metrics.total and remote.questions == 12
    assert remote.header["library_functions"] == 1


def test_a_worker_killed_mid_question_is_retried_and_nothing_is_lost_or_duplicated(cluster_env, tmp_path):
    data = DataSelection().prepare()
    victim = data.questions[5]
    home = tmp_path / "home"
    home.mkdir()
    (home / "die-once").write_text(victim.question)
    config = config_for(home)
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        summary = evaluate(session, data, tmp_path / "run", method="static-api", show_progress=False,
                           cluster=cluster)
    assert not (home / "die-once").exists()  # the worker did die
    ids = [r["question_id"] for r in lines_of(tmp_path / "run" / "results.jsonl")]
    assert len(ids) == len(set(ids)) == 12 and summary.questions == 12
    asked = [p.read_text() for p in (home / "calls").iterdir()]
    assert asked.count(f"Question: {victim.question}") >= 2  # asked again after the kill


def test_a_question_that_keeps_killing_workers_is_left_for_the_next_resume(cluster_env, tmp_path):
    data = DataSelection().prepare()
    victim = data.questions[3]
    home = tmp_path / "home"
    home.mkdir()
    (home / "die-always").write_text(victim.question)
    config = config_for(home, retries=1)
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        with pytest.raises(QuestionsLostError, match=victim.question_id):
            evaluate(session, data, tmp_path / "run", method="static-api", show_progress=False, cluster=cluster)
    answered = {r.question_id for r in ResultsFile(tmp_path / "run" / "results.jsonl").read()}
    assert answered == {q.question_id for q in data.questions} - {victim.question_id}


DRIVER = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path[:0] = [{root!r}, {tests!r}, {support!r}]
    from test_ray_executor import config_for
    from ray_doubles import scripted_llm
    from vadar.runs.executors.ray_cluster import RayCluster
    from vadar.llm.doubles import ScriptedLLM
    from vadar.runs.pipeline import evaluate
    from vadar.runs.prepare import DataSelection
    from vadar.runs.session import open_session

    config = config_for(Path({home!r}))
    config.ray.address = {address!r}
    with open_session(config, llm=ScriptedLLM([])) as session, \\
            RayCluster(config.ray, llm_factory=scripted_llm, runtime_env={runtime_env!r}) as cluster:
        evaluate(session, DataSelection().prepare(), Path({out!r}), method="static-api", show_progress=False,
                 cluster=cluster)
""")


def test_a_driver_killed_midway_resumes_with_only_the_rest(cluster_env, tmp_path):
    out, first_home = tmp_path / "run", tmp_path / "first"
    slow = {"env_vars": {**cluster_env["env"], "VADAR_TEST_LLM_DELAY": "0.6"}}
    code = DRIVER.format(root=str(ROOT), tests=str(Path(__file__).parent), support=str(ROOT / "tests"), home=str(first_home), out=str(out),
                         address=cluster_env["address"], runtime_env=slow)
    driver = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and (not results.exists() or len(lines_of(results)) < 3):
        assert driver.poll() is None, driver.stderr.read().decode()[-3000:]
        time.sleep(0.05)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    driver.stderr.close()
    before = {r.question_id for r in ResultsFile(results).read()}
    assert 3 <= len(before) < 12

    data = DataSelection().prepare()
    config = config_for(tmp_path / "second")
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        summary = evaluate(session, data, out, method="static-api", show_progress=False, cluster=cluster)
    asked = {p.read_text() for p in (tmp_path / "second" / "calls").iterdir()}
    assert asked == {f"Question: {q.question}" for q in data.questions if q.question_id not in before}
    ids = [r["question_id"] for r in lines_of(results)]
    assert len(ids) == len(set(ids)) == 12 and summary.questions == 12


def test_ablation_runs_configurations_at_once_with_models_loaded_once_per_actor(cluster_env, tmp_path):
    grid = [parse_grid_entry("oracle"), parse_grid_entry("oracle+loc=halfblind"),
            parse_grid_entry("halfblind")]
    config = config_for(tmp_path / "home")
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        report = run_ablation(session, DataSelection(limit=6), tmp_path / "ablation", grid, method="static-api",
                              show_progress=False, cluster=cluster)
    assert [s.questions for s in report.summaries] == [6, 6, 6]
    answers = {entry.name: [row[1] for row in comparable(tmp_path / "ablation" / entry.name)] for entry in grid}
    assert answers["all-oracle"] != answers["all-halfblind"]  # the served detector really served
    assert answers["oracle+loc=halfblind"] == answers["all-halfblind"]
    loads = cluster_env["load_log"].read_text().split()
    assert len(loads) == 1  # one actor for the plugin backend, its detector loaded once for both entries
    for entry in grid:
        assert len(lines_of(tmp_path / "ablation" / entry.name / "results.jsonl")) == 6


OUTAGE_KINDS = ["http-500", "not-json", "hung", "sandbox"]


@pytest.mark.parametrize("kind", OUTAGE_KINDS)
def test_keep_going_records_an_outage_in_a_task_and_the_rerun_asks_it_again(cluster_env, tmp_path, kind):
    data = DataSelection(limit=4).prepare()
    victim = data.questions[1]
    home = tmp_path / "home"
    home.mkdir()
    (home / OUTAGE).write_text(f"{kind} {victim.question}")
    config = config_for(home)
    config.eval.keep_going = True
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        summary = evaluate(session, data, tmp_path / "run", method="static-api", show_progress=False,
                           cluster=cluster)
    rows = {r["question_id"]: r for r in lines_of(tmp_path / "run" / "results.jsonl")}
    assert summary.questions == 4 and victim.question_id in summary.failed
    assert [rows[q.question_id].get("infrastructure_error", False) for q in data.questions] == \
        [False, True, False, False]
    assert rows[victim.question_id]["error"] == f"infrastructure error: {outage(kind)}"

    (home / OUTAGE).unlink()  # the endpoint is back
    shutil.rmtree(home / "calls")
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        summary = evaluate(session, data, tmp_path / "run", method="static-api", show_progress=False,
                           cluster=cluster)
    assert [p.read_text() for p in (home / "calls").iterdir()] == [f"Question: {victim.question}"]
    assert summary.questions == 4 and victim.question_id not in summary.failed
    rows = {r["question_id"]: r for r in lines_of(tmp_path / "run" / "results.jsonl")}  # the last line wins
    assert not any(row.get("infrastructure_error") for row in rows.values())


@pytest.mark.parametrize("kind", ["http-500", "sandbox"])
def test_without_keep_going_an_outage_in_a_task_stops_the_run_with_how_to_resume(cluster_env, tmp_path, kind):
    data = DataSelection(limit=4).prepare()
    victim = data.questions[1]  # its program works once the endpoint is back
    home = tmp_path / "home"
    home.mkdir()
    (home / OUTAGE).write_text(f"{kind} {victim.question}")
    config = config_for(home)
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        with pytest.raises(RunStoppedError) as info:
            evaluate(session, data, tmp_path / "run", method="static-api", show_progress=False, cluster=cluster)
    message = str(info.value)
    assert message.startswith(f"{outage(kind)} -- the run stopped; ") and "\n" not in message
    assert "rerun the same command to resume" in message and "--keep-going" in message
    assert "ray::" not in message and "Traceback" not in message
    saved = {r.question_id for r in ResultsFile(tmp_path / "run" / "results.jsonl").read()}
    assert victim.question_id not in saved and f"{len(saved)} of 4 questions are answered" in message

    (home / OUTAGE).unlink()
    with open_session(config, llm=local_llm()) as session, \
            RayCluster(config.ray, llm_factory=scripted_llm) as cluster:
        summary = evaluate(session, data, tmp_path / "run", method="static-api", show_progress=False,
                           cluster=cluster)
    assert summary.questions == 4 and victim.question_id not in summary.failed
    ids = [r["question_id"] for r in lines_of(tmp_path / "run" / "results.jsonl")]
    assert len(ids) == len(set(ids)) == 4
