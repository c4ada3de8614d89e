"""The one check of the Python API's arguments: a wrong type or value is one line of the documented
error type (`ConfigError` for settings and counts, `DatasetError` for images, scenes and data sets,
`LibraryError` for the library), never a raw `TypeError` from deep inside a job."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omni3d_bench.datasets.single import video_frames
from omni3d_bench.types import DatasetError
from vadar.config import ConfigError, VadarConfig, check_config
from vadar.runs.prepare import DataSelection

PATH_TYPES = (str, Path)
Images = str | Path | Sequence[str | Path]
"""One image file, a directory of frames (file-name order), or the frame files in order."""


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def check_type(name: str, value: object, kinds: type | tuple[type, ...], *, optional: bool = False,
               error: type[Exception] = ConfigError, wanted: str | None = None) -> None:
    """`value` is one of `kinds` (or None when `optional`); otherwise `error` naming the argument."""
    if value is None and optional:
        return
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    bad_bool = isinstance(value, bool) and bool not in kinds  # True is an int to Python, not to a user
    if bad_bool or not isinstance(value, kinds):
        what = wanted or " or ".join(k.__name__ for k in kinds)
        raise error(f"{name} must be {what}{' or None' if optional else ''}, not {_kind(value)} {value!r:.60}")


def check_count(name: str, value: object, *, least: int = 0, optional: bool = False) -> None:
    """An integer count at least `least` (None allowed when `optional`)."""
    check_type(name, value, int, optional=optional, wanted="an integer")
    if value is not None and value < least:  # type: ignore[operator]
        raise ConfigError(f"{name} must be at least {least}, not {value}")


def check_path(name: str, value: object, *, optional: bool = False, error: type[Exception] = DatasetError,
               file: bool = False) -> None:
    """A path given as text or `Path`, not empty; with `file`, not a directory."""
    check_type(name, value, PATH_TYPES, optional=optional, error=error, wanted="a path (str or Path)")
    if value is None:
        return
    if not str(value).strip():
        raise error(f"{name} must name a path, not an empty text")
    if file and Path(value).is_dir():  # type: ignore[arg-type]
        raise error(f"{name} {value} is a directory; name a file")


def check_texts(name: str, values: object, *, error: type[Exception] = ConfigError) -> None:
    """A sequence of texts (a list or tuple), never one text read letter by letter."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise error(f"{name} must be a list of texts, not {_kind(values)} {values!r:.60}")
    for value in values:
        check_type(f"each of {name}", value, str, error=error)


def check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    """One of `choices` (a method, a question scope)."""
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"unknown {name} {value!r:.60}; choose one of: {', '.join(choices)}")


def check_settings(config: object) -> None:
    """The settings as changed since `open()` (`v.config.sandbox.memory_mb = -1`), through the
    config's one check, before anything uses them."""
    if not isinstance(config, VadarConfig):
        raise ConfigError(f"config must be a VadarConfig, not {_kind(config)}")
    try:
        check_config(config, _FromPython())
    except ConfigError:
        raise
    except (TypeError, ValueError, AttributeError) as exc:  # a setting replaced by an odd object
        raise ConfigError(f"a setting of v.config is not of its type: {exc}") from None


class _FromPython(dict):
    """Names every setting's origin as `v.config`, where a Python caller changed it."""

    def get(self, key: Any, default: Any = None) -> str:
        return "v.config after open()"

    def __bool__(self) -> bool:
        return True


def frame_files(images: Images) -> list[Path]:
    """The pictures a question is about, checked: one file, the frames of a directory, or files in order."""
    if isinstance(images, (str, Path)):
        check_path("images", images)
        path = Path(images)
        return video_frames(path) if path.is_dir() else [path]
    if not isinstance(images, Sequence):
        raise DatasetError(f"images must be an image file, a directory of frames or a list of frames, "
                           f"not {type(images).__name__}")
    for image in images:
        check_path("each image", image)
    files = [Path(p) for p in images]
    if not files:
        raise DatasetError("no image given: pass an image file, a directory of frames, or a list of frames")
    return files


def checked_selection(data: str | Path | None, split: str | None, limit: int | None, skip: int,
                      families: Sequence[str], spread_over: int | None, shapes: Sequence[str]) -> DataSelection:
    """The questions `Vadar.select` is asked for, each argument checked first: the annotations are
    what a caller should pass, not what it can."""
    check_path("data", data, optional=True)
    check_type("split", split, str, optional=True, error=DatasetError)
    check_count("limit", limit, optional=True)
    check_count("skip", skip)
    check_count("spread_over", spread_over, least=1, optional=True)
    check_texts("families", families, error=DatasetError)
    check_texts("shapes", shapes, error=DatasetError)
    return DataSelection(Path(data) if data is not None else None, split, limit, skip, tuple(families),
                         spread_over, tuple(shapes))
