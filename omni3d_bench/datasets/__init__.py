"""Dataset adapters."""

from omni3d_bench.datasets.clevr import ClevrDataset

__all__ = ["ClevrDataset"]
