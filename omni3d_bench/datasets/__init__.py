"""Dataset adapters and `load_dataset`, which picks the adapter from the layout on disk."""

from __future__ import annotations

from pathlib import Path

from omni3d_bench.datasets.bench import BenchDataset, is_bench_dir
from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.datasets.omni3d import Omni3DBenchDataset
from omni3d_bench.datasets.tables import find_tables
from omni3d_bench.datasets.warehouse import WarehouseDataset, is_warehouse_dir
from omni3d_bench.types import Dataset, DatasetError

KINDS = {"bench": "bench", "vadar-bench": "bench", "clevr": "clevr", "omni3d": "omni3d",
         "omni3d_bench": "omni3d", "omni3d-bench": "omni3d", "warehouse": "warehouse"}
OMNI3D_FILE_SUFFIXES = (".zip", ".parquet", ".json", ".jsonl")

__all__ = ["BenchDataset", "ClevrDataset", "Omni3DBenchDataset", "WarehouseDataset", "detect_kind",
           "load_dataset"]


def detect_kind(path: Path) -> str:
    """"bench" for generated benchmarks (benchmark.json), "clevr" for questions/<split>.json
    layouts, "omni3d" for Omni3D-Bench tables or archives, "warehouse" for the warehouse
    challenge's <split>.json files with RLE masks."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"data set path not found: {path}.")
    if path.is_file():
        if path.suffix.lower() in OMNI3D_FILE_SUFFIXES:
            return "omni3d"
    elif is_bench_dir(path):
        return "bench"
    elif is_warehouse_dir(path):
        return "warehouse"
    elif (path / "questions").is_dir() and any((path / "questions").glob("*.json")):
        return "clevr"
    elif find_tables(path):
        return "omni3d"
    raise DatasetError(
        f"cannot tell the layout of {path}: expected CLEVR (questions/<split>.json, scenes/, "
        "images/) or Omni3D-Bench (annotations.json, a .jsonl or .parquet table with images, or "
        "a .zip/.parquet file). Pass kind='clevr' or kind='omni3d' to choose."
    )


def load_dataset(path: Path, kind: str | None = None, cache_dir: Path | None = None) -> Dataset:
    """Open the data set at `path`, detecting its layout unless `kind` names it."""
    if kind is None:
        chosen = detect_kind(path)
    else:
        if kind.lower() not in KINDS:
            raise DatasetError(f"unknown data set kind {kind!r}; expected one of {sorted(KINDS)}.")
        chosen = KINDS[kind.lower()]
    if chosen == "bench":
        return BenchDataset(Path(path))
    if chosen == "clevr":
        return ClevrDataset(Path(path))
    if chosen == "warehouse":
        return WarehouseDataset(Path(path))
    return Omni3DBenchDataset(Path(path), cache_dir=cache_dir)
