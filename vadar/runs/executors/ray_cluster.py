"""A connection to a Ray cluster for one command, and the module actors started on it.

`RayCluster` joins the cluster at `ray.address` (or starts a local one, or uses the one this
process already joined), starts module servers for model-backed backends once, and hands out one
`RayExecutor` per evaluation; several evaluations (an ablation grid) share it and its actors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import ray

from base_modules.registry import SLOTS
from vadar.config import RayConfig
from vadar.runs.executors.job import LLMFactory, QuestionJob, endpoint_llm
from vadar.runs.executors.module_server import ModuleServer
from vadar.runs.executors.ray_executor import RayExecutor
from vadar.llm.usage import UsageTracker

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class RayCluster:
    """Ray for the length of a `with` block: joined or started on entry, left (and stopped if
    started here) on exit; module actors started here are killed on exit."""

    def __init__(self, settings: RayConfig, *, runtime_env: Mapping[str, Any] | None = None,
                 announce: Callable[[str], None] | None = None, llm_factory: LLMFactory = endpoint_llm) -> None:
        self.settings = settings
        self.llm_factory = llm_factory  # how workers reach the LLM; tests pass a scripted one
        self.runtime_env = dict(runtime_env or {})
        self.announce = announce or (lambda message: None)
        self._started = False
        self._servers: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> RayCluster:
        if not ray.is_initialized():
            env = self.runtime_env or (_same_code_env() if self.settings.address is None else {})
            ray.init(address=self.settings.address, runtime_env=env or None, include_dashboard=False,
                     log_to_driver=False)
            self._started = True
        resources = ray.cluster_resources()
        self.announce(f"Ray cluster: {len(ray.nodes())} node(s), {resources.get('CPU', 0):g} CPUs, "
                      f"{resources.get('GPU', 0):g} GPUs")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            servers, self._servers = self._servers, {}
        for actors in servers.values():
            for actor in actors:
                ray.kill(actor)
        if self._started:
            ray.shutdown()
            self._started = False

    @property
    def remote(self) -> bool:
        """Whether workers may run on other machines than this one."""
        return self.settings.address is not None and len(ray.nodes()) > 1

    def executor(self, job: QuestionJob, *, usage: UsageTracker | None = None) -> RayExecutor:
        """An executor for `job`: the job is put in the object store once, servers are started first."""
        if job.base_url and self.remote and urlparse(job.base_url).hostname in LOOPBACK:
            self.announce(f"warning: the LLM endpoint {job.base_url} is on this machine's loopback; workers on "
                          "other nodes cannot reach it (set llm.base_url to an address they can reach)")
        slots = sorted({slot for slot, backend in job.backends.items() if backend != "oracle"}, key=SLOTS.index)
        servers = {backend: self.module_servers(backend, job, slots) for backend in job.served_backends()}
        return RayExecutor(job.job_id, ray.put(job), servers, self.settings, usage,
                           keep_going=job.config.eval.keep_going)

    def module_servers(self, backend: str, job: QuestionJob, slots: Sequence[str]) -> list[Any]:
        """The actors serving `backend`, started (and their models loaded) on first use."""
        with self._lock:
            if backend in self._servers:
                return self._servers[backend]
            gpus = self._gpus_per_actor()
            count = self.settings.module_actors or max(1, int(ray.cluster_resources().get("GPU", 0) // (gpus or 1)))
            server = ray.remote(ModuleServer).options(
                num_gpus=gpus, num_cpus=self.settings.module_cpus,
                max_restarts=self.settings.max_retries, max_task_retries=self.settings.max_retries)
            actors = [server.remote(backend, job.config, list(slots)) for _ in range(count)]
            self.announce(f"starting {count} '{backend}' module actor(s), {gpus:g} GPU(s) each")
            ray.get([actor.ready.remote() for actor in actors])  # a missing model fails here, before any question
            self._servers[backend] = actors
            return actors

    def _gpus_per_actor(self) -> float:
        if self.settings.module_gpus is not None:
            return self.settings.module_gpus
        return 1.0 if ray.cluster_resources().get("GPU", 0) >= 1 else 0.0


def _same_code_env() -> dict[str, Any]:
    """Workers of a local cluster import the code this driver runs (a checkout, not only an install)."""
    import vadar

    root = str(Path(vadar.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    return {"env_vars": {"PYTHONPATH": path}}
