"""Region files and records (`vadar solve --region`, a data set's regions) that cannot be a region
are refused in one line, before any pixel is decoded; RLE strings decode in linear time."""

from __future__ import annotations

import io
import json
import struct
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from base_modules.masks import MaskError, counts_from_string, encode_rle, rle_counts
from omni3d_bench.region_args import read_region_arg
from omni3d_bench.regions import read_region
from omni3d_bench.types import DatasetError


def png_claiming(width: int, height: int) -> bytes:
    """A 1x1 PNG whose header claims `width` x `height` pixels (what a 200-megapixel file says)."""
    buffer = io.BytesIO()
    PILImage.new("L", (1, 1)).save(buffer, "PNG")
    data = bytearray(buffer.getvalue())
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


@pytest.mark.parametrize("width, height", [(20_000, 10_000), (100_000, 1000)])
def test_a_huge_mask_image_is_refused_before_decoding(tmp_path: Path, width: int, height: int) -> None:
    path = tmp_path / "mask.png"
    path.write_bytes(png_claiming(width, height))
    started = time.perf_counter()
    with pytest.raises(DatasetError, match="more than the 50,000,000"):
        read_region_arg(str(path))
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("array, message", [
    (np.zeros((4, 4), dtype=[("a", "i4"), ("b", "f4")]), "must hold numbers or booleans"),
    (np.array([["a", "b"], ["c", "d"]]), "must hold numbers or booleans"),
    (np.zeros((2, 2, 2)), "must be a 2D array"),
])
def test_an_npy_mask_that_is_not_a_mask_is_one_line(tmp_path: Path, array, message: str) -> None:
    path = tmp_path / "mask.npy"
    np.save(path, array)
    with pytest.raises(DatasetError, match=message):
        read_region_arg(str(path))


def test_a_huge_npy_mask_is_refused_from_its_header(tmp_path: Path) -> None:
    path = tmp_path / "mask.npy"
    big = np.lib.format.open_memmap(path, mode="w+", dtype=np.bool_, shape=(10_000, 10_000))
    del big
    with pytest.raises(DatasetError, match="more than the 50,000,000"):
        read_region_arg(str(path))


@pytest.mark.parametrize("record, message", [
    ({"mask": {"size": [4, 4], "counts": "0é0"}}, "not ASCII"),
    ({"mask": {"size": [4, 4], "counts": "o" * 400_000}}, "a run longer than 7 characters"),
    ('{"mask": {"size": [4, 4], "counts": [1%s]}}' % ("0" * 4000), "must lie between 0 and 4 x 4"),
    ('{"mask": {"size": [1%s, 1], "counts": [1]}}' % ("0" * 4000), r"an RLE mask of 10+\.\.\. x 1 pixels"),
    ('{"mask": {"size": [4, 4], "counts": [1%s]}}' % ("0" * 5000), "not valid JSON"),
    ("[" * 100_000, "not valid JSON"),
    ({"mask": {"size": [True, 4], "counts": [4]}}, "needs 'size'"),
    ({"box": [float("nan"), 0, 1, 1]}, "four finite numbers"),
    ({"box": [0, 0, float("inf"), 1]}, "four finite numbers"),
    ({"box": [0, 0, 10**400, 1]}, "four finite numbers"),
    ({"box": [0, 0, 1, 1], "object_id": "abc"}, "'object_id' must be an integer, got 'abc'"),
    ({"box": [0, 0, 1, 1], "object_id": 1.5}, "'object_id' must be an integer"),
    ({"box": [0, 0, 1, 1], "object_id": [1]}, "'object_id' must be an integer"),
])
def test_a_region_record_that_cannot_be_read_is_one_line(tmp_path: Path, record: dict | str, message: str) -> None:
    path = tmp_path / "region.json"
    path.write_text(record if isinstance(record, str) else json.dumps(record))
    started = time.perf_counter()
    with pytest.raises(DatasetError, match=message):
        read_region_arg(str(path))
    assert time.perf_counter() - started < 1.0


def test_good_object_ids_and_boxes_are_read() -> None:
    assert read_region({"box": [0, 0, 1, 1], "object_id": "7"}, "here").object_id == 7
    assert read_region({"box": [0, 0, 1, 1], "object_id": 3}, "here").object_id == 3
    with pytest.raises(DatasetError, match="a box is four finite numbers"):
        read_region_arg("0,0,1e400,1")


def test_rle_strings_decode_in_linear_time() -> None:
    mask = np.random.default_rng(0).random((240, 320)) > 0.5
    counts = encode_rle(mask)["counts"]
    started = time.perf_counter()
    runs = counts_from_string(counts)
    assert sum(runs) == 240 * 320 and time.perf_counter() - started < 1.0
    for endless in ("o" * 400_000, "o" * 399_999 + "0"):
        started = time.perf_counter()
        with pytest.raises(MaskError, match="a run longer than 7 characters at position 0"):
            counts_from_string(endless)
        assert time.perf_counter() - started < 0.1


def test_large_legitimate_runs_still_decode() -> None:
    size = [4320, 7680]  # an 8K frame
    runs = rle_counts({"size": size, "counts": encode_rle(np.ones(size, dtype=bool))["counts"]})
    assert runs == [0, 4320 * 7680]
