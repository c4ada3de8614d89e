"""The built-in benchmark: rendered 3D scenes with exact ground truth and metric questions."""

from omni3d_bench.generator.build import FORMAT, generate_benchmark, generate_scene

__all__ = ["FORMAT", "generate_benchmark", "generate_scene"]
