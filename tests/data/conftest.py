"""Fixtures shared by the generated benchmark's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def bench(tmp_path_factory):
    """16 generated scenes of 24 questions (seed 5) and their oracle modules: rendering takes seconds,
    so the tests of shape helpers and of composed examples share one."""
    pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")
    from base_modules.oracle.annotations3d import annotations3d_oracle_modules
    from omni3d_bench.datasets import load_dataset
    from omni3d_bench.generator import generate_benchmark

    root = tmp_path_factory.mktemp("bench")
    generate_benchmark(root, 16, seed=5, per_scene=24)
    dataset = load_dataset(root)
    return dataset, annotations3d_oracle_modules(dataset.scene)
