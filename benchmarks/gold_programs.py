"""Time CLEVR's gold programs run through the oracle modules on a whole split.

Usage: python benchmarks/gold_programs.py [--data ../shared/data/clevr] [--split dev]
Prints the accuracy and the seconds per 1000 questions (a speed figure, not a test).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from omni3d_bench.datasets.clevr import ClevrDataset
from vadar.runs.gold_eval import evaluate_gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "clevr")
    parser.add_argument("--split", default="dev")
    args = parser.parse_args()
    dataset = ClevrDataset(args.data)
    questions = dataset.questions(args.split)
    started = time.perf_counter()
    report = evaluate_gold(dataset, questions)
    seconds = time.perf_counter() - started
    print(f"questions: {report.count}  accuracy: {report.accuracy:.3f}")
    print(f"seconds: {seconds:.2f}  per 1000 questions: {1000 * seconds / max(report.count, 1):.2f}")


if __name__ == "__main__":
    main()
