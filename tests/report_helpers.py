"""A small recorded run laid out on disk for the report tests.

`tests/fixtures/report/` holds six questions of two real runs on CLEVR dev (the vadar method,
whose summary is in docs/results/clevr-dev100, and the tool agent, docs/results/methods), the
library that vadar run grew, and each question's CLEVR template. The CLEVR images are not part
of the repository, so a data set of the same layout is made here with plain grey pictures of the
recorded size: the boxes the report draws come from the recorded module calls alone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from PIL import Image, ImageDraw

FIXTURES = Path(__file__).parent / "fixtures" / "report"
RECORDED_DATA = "../shared/data/clevr"
BACKGROUND = (128, 128, 128)


def make_data(root: Path) -> Path:
    """A CLEVR-layout data set holding the fixture questions and grey 480x320 images."""
    meta = json.loads((FIXTURES / "questions.json").read_text())
    rows = [json.loads(line) for line in (FIXTURES / "clevr-vadar" / "results.jsonl").read_text().splitlines()]
    questions = []
    for row in rows:
        info = meta[row["question_id"]]
        questions.append({"question_index": int(row["question_id"]), "question": row["question"],
                          "answer": row["gold"], "split": "train", **info})
    (root / "questions").mkdir(parents=True, exist_ok=True)
    (root / "questions" / "dev.json").write_text(json.dumps({"questions": questions}))
    (root / "images").mkdir(exist_ok=True)
    for info in meta.values():
        picture = Image.new("RGB", (480, 320), BACKGROUND)
        ImageDraw.Draw(picture).ellipse((200, 120, 260, 180), fill=(90, 90, 90))
        picture.save(root / "images" / info["image_filename"])
    return root


def recorded_run(tmp_path: Path, name: str = "clevr-vadar", *, data: Path | None = None) -> Path:
    """Copy a fixture run into `tmp_path/name`, its recorded data paths pointing at `data`."""
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    if data is not None:
        for path in target.iterdir():
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace(RECORDED_DATA, str(data)), encoding="utf-8")
    return target


def rows_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line]


def write_rows(run_dir: Path, rows: list[dict]) -> None:
    (run_dir / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
