"""Questions per minute with the local executor against the Ray executor, on a stub endpoint.

    python benchmarks/ray_throughput.py [--questions 48] [--delay 0.5] [--jobs 4] [--cpus 2]

The stub (from `throughput.py`) is an OpenAI-compatible endpoint on 127.0.0.1 that answers every
chat completion with the same valid program after `--delay` seconds, however many are in flight:
a GPU server that batches. The same questions are answered with the static-api method, oracle
modules and the response cache off: once by the local executor with `--jobs` threads, once as
Ray tasks on a local Ray instance of `--cpus` CPUs, each task reserving `cpus / jobs` CPUs so the
same number of questions is in flight. Ray's start-up is timed apart; worker processes start
inside the timed part. Prints both rates and `ray / local: X`.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import ray

from throughput import questions, stub_server, stub_settings
from vadar.config import VadarConfig
from vadar.runs.executors.ray_cluster import RayCluster
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import PreparedData
from vadar.runs.session import open_session

ROOT = Path(__file__).resolve().parents[1]


def settings(home: Path, base_url: str, jobs: int, executor: str, task_cpus: float) -> VadarConfig:
    config = stub_settings(home, base_url, jobs)
    config.eval.executor = executor
    config.ray.task_cpus = task_cpus
    return config


def questions_per_minute(data: PreparedData, config: VadarConfig, label: str) -> float:
    with tempfile.TemporaryDirectory(prefix="vadar-ray-throughput-") as tmp:
        with open_session(config) as session:
            if config.eval.executor == "ray":
                with RayCluster(config.ray) as cluster:
                    started = time.perf_counter()
                    summary = evaluate(session, data, Path(tmp) / "run", method="static-api", show_progress=False,
                                       cluster=cluster)
                    seconds = time.perf_counter() - started
            else:
                started = time.perf_counter()
                summary = evaluate(session, data, Path(tmp) / "run", method="static-api", show_progress=False)
                seconds = time.perf_counter() - started
    if summary.questions != len(data.questions) or summary.failed:
        raise SystemExit(f"{label}: {len(summary.failed)} of {summary.questions} questions failed")
    rate = summary.questions / seconds * 60
    print(f"{label}: {summary.questions} questions in {seconds:.1f}s = {rate:.1f} questions/minute")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=48)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the stub takes per request")
    parser.add_argument("--jobs", type=int, default=4, help="questions in flight, both executors")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    args = parser.parse_args()
    data = questions(args.questions)
    server = stub_server(args.delay)
    threading.Thread(target=server.serve_forever, name="stub-endpoint", daemon=True).start()
    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    print(f"Ray instance of {args.cpus} CPUs started in {time.perf_counter() - started:.1f}s")
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        print(f"stub endpoint {base_url}: every request answered after {args.delay:g}s")
        with tempfile.TemporaryDirectory(prefix="vadar-ray-throughput-home-") as home:
            local = questions_per_minute(
                data, settings(Path(home) / "local", base_url, args.jobs, "local", 1.0), f"local, jobs {args.jobs}")
            remote = questions_per_minute(
                data, settings(Path(home) / "ray", base_url, args.jobs, "ray", args.cpus / args.jobs),
                f"ray, {args.jobs} tasks at once")
    finally:
        ray.shutdown()
        server.shutdown()
        server.server_close()
    print(f"ray / local: {remote / local:.2f}")


if __name__ == "__main__":
    main()
