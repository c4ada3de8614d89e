"""Read question rows from JSON, JSON Lines, Parquet or a zip of those, as plain dicts.

Omni3D-Bench ships as a Hugging Face Parquet table (images embedded as bytes) and as a zip
holding `annotations.json` plus image files; both reduce to "a list of row dicts and the
directory their relative image paths start from".
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from omni3d_bench.types import DatasetError

TABLE_SUFFIXES = (".json", ".jsonl", ".parquet")
PREFERRED_NAMES = ("annotations.json", "questions.json")
NOT_TABLES = ("scenes", "info", "metadata", "dataset_info", "read_report")
"""JSON files that sit beside a question table but are not one."""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of one table file; the format follows the suffix."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return read_parquet(path)
    if suffix == ".jsonl":
        return read_jsonl(path)
    return read_json_rows(path)


def read_text(path: Path) -> str:
    """A data file's text: one that cannot be read (missing, a directory) or is not UTF-8 is a
    one-line `DatasetError`, not a traceback."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"cannot read {path}: it is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                           f"offset {exc.start})") from None
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None


def load_json(path: Path, remedy: str = "Fix or re-download the file.") -> Any:
    """Parse a JSON file, turning read and syntax errors into a `DatasetError` ending in `remedy`."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"malformed JSON in {path}: {exc.msg} at line {exc.lineno}, column {exc.colno}. "
            + remedy
        ) from exc
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number, nesting deeper than Python's stack
        raise DatasetError(f"malformed JSON in {path}: {exc}. " + remedy) from None


def read_json_rows(path: Path) -> list[dict[str, Any]]:
    data = load_json(path)
    rows = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise DatasetError(
            f"{path} holds no question rows: expected a JSON list or {{\"questions\": [...]}}."
        )
    return rows


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    lines = read_text(path).splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"malformed JSON in {path} at line {number}, column {exc.colno}: {exc.msg}."
            ) from exc
    return rows


def read_parquet(path: Path) -> list[dict[str, Any]]:
    """Parquet needs the optional pyarrow package; say how to get it instead of failing late."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DatasetError(
            f"reading {path} needs the optional package pyarrow: pip install pyarrow "
            "(or unpack the data set to annotations.json + images/)."
        ) from exc
    try:
        return pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several unrelated types for a damaged file
        raise DatasetError(f"cannot read Parquet file {path}: {exc}") from exc


def find_tables(root: Path, depth: int = 2) -> list[Path]:
    """Candidate question tables under `root` (a zip's top folder or `data/` included)."""
    found: list[Path] = []
    level = [root]
    for _ in range(depth + 1):
        next_level: list[Path] = []
        for folder in level:
            for child in sorted(folder.iterdir()):
                if child.name.startswith(".") or child.name == "__MACOSX":
                    continue
                if child.is_dir() and child.name != "images":
                    next_level.append(child)
                elif child.suffix.lower() in TABLE_SUFFIXES and child.stem not in NOT_TABLES:
                    found.append(child)
        if found:
            return found
        level = next_level
    return found


def pick_table(root: Path) -> Path:
    """The one question table of a directory, or a `DatasetError` saying what was found."""
    tables = find_tables(root)
    if not tables:
        raise DatasetError(
            f"no question table in {root}: expected annotations.json, a .jsonl or a .parquet "
            "file (Omni3D-Bench layout) next to the images."
        )
    for name in PREFERRED_NAMES:
        named = [t for t in tables if t.name == name]
        if len(named) == 1:
            return named[0]
    parquet = [t for t in tables if t.suffix == ".parquet"]
    if len(tables) == 1 or len(parquet) == 1:
        return tables[0] if len(tables) == 1 else parquet[0]
    listing = ", ".join(str(t.relative_to(root)) for t in tables)
    raise DatasetError(
        f"several candidate question tables in {root} ({listing}); keep one, or name it "
        "annotations.json."
    )


def extract_zip(archive: Path, cache_dir: Path) -> Path:
    """Unpack `archive` once under `cache_dir`; later calls reuse it unless the zip changed."""
    stat = archive.stat()
    stamp = f"{archive.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    key = hashlib.sha1(stamp.encode()).hexdigest()[:12]
    target = cache_dir / f"{archive.stem}-{key}"
    marker = target / ".extracted"
    if marker.is_file():
        return target
    try:
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                parts = PurePosixPath(member).parts
                if member.startswith("/") or ".." in parts:
                    raise DatasetError(f"{archive} contains an unsafe path {member!r}; refusing it.")
            zf.extractall(target)
    except zipfile.BadZipFile as exc:
        raise DatasetError(f"{archive} is not a valid zip file ({exc}); re-download it.") from exc
    marker.write_text(stamp, encoding="utf-8")
    return target
