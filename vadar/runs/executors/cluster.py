"""Opening the executor a command asked for: nothing for `local`, a `RayCluster` for `ray`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from vadar.config import ConfigError, VadarConfig

if TYPE_CHECKING:
    from vadar.runs.executors.ray_cluster import RayCluster


@contextmanager
def open_cluster(config: VadarConfig, *, announce: Callable[[str], None] | None = None) -> Iterator[RayCluster | None]:
    """`None` for `eval.executor = "local"`; else a joined (or started) Ray cluster, left on exit."""
    if config.eval.executor != "ray":
        yield None
        return
    try:
        from vadar.runs.executors.ray_cluster import RayCluster
    except ImportError as exc:
        raise ConfigError(f"--executor ray needs Ray: pip install 'vadar[ray]' ({exc})") from None
    with RayCluster(config.ray, announce=announce) as cluster:
        yield cluster
