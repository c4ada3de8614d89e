"""Program-agent prompt size as the library grows, with and without retrieval.

Usage: python benchmarks/prompt_size.py [--k 8] [--sizes 10 50 200]
Builds synthetic libraries (distinct names and docstrings of spatial helpers) in an in-memory store and
prints the mean size of the Program agent's prompt over the built-in sample's questions, in
characters and in estimated tokens (characters / 3.6, the ratio of the embedded model's tokenizer
on our prompts), for `retrieve_k = k` and for showing the whole library.
"""

from __future__ import annotations

import argparse
import statistics

from api_store import ApiStore
from vadar.agents.program import system_prompt
from vadar.programs.api_text import render_api
from vadar.library.retrieval import LibraryRetriever
from vadar.runs.prepare import DataSelection

TOPICS = ["left of", "right of", "in front of", "behind", "same color as", "same shape as",
          "larger than", "closest to the camera", "farthest from", "between", "taller than",
          "distance between", "count of", "height in metres", "width in metres", "material of",
          "color of", "nearest to", "above", "below"]
CHARS_PER_TOKEN = 3.6


SUBJECTS = ["objects", "cubes", "spheres", "cylinders", "red objects", "blue objects", "metal objects",
            "rubber objects", "large objects", "small objects"]


def synthetic_library(size: int) -> ApiStore:
    """`size` distinct helpers, topic by subject (20 x 10 at most), as a growing library has them.

    Distinct in content words on purpose: the Signature agent rejects a proposal whose name has the
    same content words as an existing function, so a real library holds no copies to retrieve.
    """
    if size > len(TOPICS) * len(SUBJECTS):
        raise SystemExit(f"at most {len(TOPICS) * len(SUBJECTS)} distinct synthetic helpers")
    store = ApiStore.memory()
    for i in range(size):
        topic, subject = TOPICS[i % len(TOPICS)], SUBJECTS[i // len(TOPICS)]
        name = "_" + "_".join((subject + " " + topic).split())
        store.propose(name, "(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]",
                      f"Return the boxes of `candidates` that are {subject} {topic} the object in "
                      f"`reference`.\nThe reference box itself is never returned.")
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200])
    args = parser.parse_args()
    questions = [q.question for q in DataSelection().prepare().questions]
    print(f"| library functions | prompt chars (all shown) | est. tokens (all) | "
          f"prompt chars (top {args.k}) | est. tokens (top {args.k}) |")
    print("|---:|---:|---:|---:|---:|")
    baseline = None
    for size in args.sizes:
        library = synthetic_library(size).functions()
        retriever = LibraryRetriever(library, args.k)
        full = len(system_prompt(render_api(library)))
        top = statistics.fmean(len(system_prompt(render_api(retriever.select(q)))) for q in questions)
        baseline = baseline or top
        print(f"| {size} | {full} | {full / CHARS_PER_TOKEN:.0f} | {top:.0f} | {top / CHARS_PER_TOKEN:.0f} |")
    print(f"ratio of the largest to the smallest library, top {args.k}: {top / baseline:.2f}")


if __name__ == "__main__":
    main()
