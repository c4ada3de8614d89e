"""How often a 2D shortcut disagrees with a data set's own spatial relations: can a ground-truth
check tell a helper that uses it from a right one?

Usage:
  python benchmarks/relation_rules.py --data ../shared/data/clevr [--split dev] [--skip 0] [--limit N]

CLEVR's scene files list, per relation, the objects left of / in front of each object, judged in
3D. Helpers built on CLEVR compare 2D box centres for left/right and `depth()` for front/behind.
For every ordered pair of objects in the selected questions' scenes (oracle boxes and depths), this
prints how many pairs each shortcut judges otherwise than the scene file, and in how many scenes:
a shortcut helper fails a truth check only on a scene holding such a pair.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.relations import RELATIONS, object_measure, related_objects
from vadar.library.truth_checks import boxes_in_scene_order
from vadar.runs.prepare import oracle_modules


def shortcut_says(relation: str, boxes: Sequence[Sequence[float]], depths: Sequence[float | None],
                  a: int, b: int) -> bool | None:
    """Whether object `a` is `relation` of object `b` by the shortcut: box centre x, or depth."""
    if relation in ("left", "right"):
        xa, xb = ((boxes[i][0] + boxes[i][2]) / 2 for i in (a, b))
        return xa < xb if relation == "left" else xa > xb
    da, db = depths[a], depths[b]
    if da is None or db is None:
        return None
    return da < db if relation == "front" else da > db


def disagreements(data: Path, split: str, skip: int, limit: int | None) -> tuple[Counter, Counter, Counter, int]:
    """Pairs judged, pairs the shortcut gets wrong and scenes holding one, per relation; scenes read."""
    dataset = ClevrDataset(data)
    modules = oracle_modules(dataset)
    questions = dataset.questions(split)[skip:None if limit is None else skip + limit]
    pairs, wrong, scenes_wrong, scenes = Counter(), Counter(), Counter(), 0
    for image_id in dict.fromkeys(q.image_id for q in questions):
        scene = dataset.scene(image_id)
        image = dataset.image(next(q for q in questions if q.image_id == image_id))
        boxes = boxes_in_scene_order(modules, image, len(scene["objects"]))
        if boxes is None:
            continue
        scenes += 1
        depths = [object_measure(scene, i, "camera_distance") for i in range(len(boxes))]
        for relation in RELATIONS:
            missed = 0
            for b in range(len(boxes)):
                truth = related_objects(scene, b, relation) or set()
                for a in range(len(boxes)):
                    said = None if a == b else shortcut_says(relation, boxes, depths, a, b)
                    if said is not None:
                        pairs[relation] += 1
                        missed += said != (a in truth)
            wrong[relation] += missed
            scenes_wrong[relation] += missed > 0
    return pairs, wrong, scenes_wrong, scenes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    pairs, wrong, scenes_wrong, scenes = disagreements(args.data, args.split, args.skip, args.limit)
    print(f"{scenes} scenes")
    for relation in RELATIONS:
        how = "box centre x" if relation in ("left", "right") else "depth"
        print(f"{relation:>6} by {how}: {wrong[relation]} of {pairs[relation]} ordered pairs judged otherwise "
              f"({wrong[relation] / max(pairs[relation], 1):.2%}), in {scenes_wrong[relation]} scenes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
