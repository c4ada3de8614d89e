"""Questions that point at regions: `<mask>` tokens, the regions they stand for, and their names.

A question such as "Is the pallet <mask> to the left of the pallet <mask>?" comes with one region
(a mask and/or a box) per token, in order. As SpatialAgent does, each token is rewritten to a
typed identifier that the agent can talk about: the class word just before the token gives the
type ("the pallet <mask>" -> "<pallet_0>"; "the buffer region <mask>" -> "<buffer_0>"), numbered
per type in order of appearance; tokens listed together ("the pallets <mask>, <mask> and <mask>")
share it; a token with no class word before it ("between <mask> and <mask>") becomes
"<region_k>". Regions beyond the tokens keep "<region_k>" names too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from base_modules.masks import MaskError, counts_to_string, rle_box, rle_counts, short_repr
from base_modules.types import Region
from omni3d_bench.metrics import METRICS
from omni3d_bench.types import DatasetError

TOKEN = "<mask>"
FALLBACK_TYPE = "region"
FILLER_NOUNS = frozenset({"region", "regions", "area", "areas", "zone", "zones", "mask", "masks"})
"""Words that name the token's kind of thing, not its class: "the buffer region <mask>" is a buffer."""
FUNCTION_WORDS = frozenset("""
a an the this that these those which what who whose whom where when how of to in into on onto at
by for from with without between among and or nor but than then as is are was were be been being
do does did has have had it its their there here near next behind before after above below under
over left right front back closest farthest nearest leftmost rightmost middle most least same
other another each every any all both either neither some one two three four five six seven eight
nine ten first second third last many much more fewer less number count distance far how
""".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z-]*$")
_LIST_GLUE = re.compile(r"[\s,;]*(?:(?:and|or)[\s,;]*)?", re.IGNORECASE)


def singular(word: str) -> str:
    """A plural class word as its singular ("pallets" -> "pallet", "shelves" -> "shelf")."""
    if word.endswith("ves") and len(word) > 4:
        return word[:-3] + "f"
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if re.search(r"(x|s|ch|sh)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def class_word(before: str) -> str:
    """The type a token takes from the text before it: the class word right before it, if any."""
    words = before.split()
    while words and words[-1].lower().strip(",;:") in FILLER_NOUNS:
        words.pop()
    if not words:
        return FALLBACK_TYPE
    word = words[-1].lower().strip(",;:")
    if not _WORD.match(word) or word in FUNCTION_WORDS:
        return FALLBACK_TYPE
    return singular(word).replace("-", "_")


def rewrite_tokens(text: str, count: int) -> tuple[str, list[str]]:
    """`text` with each `<mask>` replaced by a typed identifier, and the names of `count` regions.

    Raises ValueError when the text has more tokens than there are regions.
    """
    pieces = text.split(TOKEN)
    tokens = len(pieces) - 1
    if tokens > count:
        raise ValueError(f"the question has {tokens} {TOKEN} tokens but {count} region(s); "
                         "give one region per token")
    numbers: dict[str, int] = {}
    names: list[str] = []

    def next_name(kind: str) -> str:
        numbers[kind] = numbers.get(kind, -1) + 1
        return f"<{kind}_{numbers[kind]}>"

    out = [pieces[0]]
    kind = FALLBACK_TYPE
    for piece in pieces[1:]:
        before = out[-1]
        if len(out) == 1 or not _LIST_GLUE.fullmatch(before):
            kind = class_word(before)
        names.append(next_name(kind))  # "the pallets <mask>, <mask> and <mask>": one kind
        out += [names[-1], piece]
    names += [next_name(FALLBACK_TYPE) for _ in range(count - tokens)]
    return "".join(out), names


def read_region(raw: Any, where: str) -> Region:
    """One region record: {"box": [x0, y0, x1, y1]} and/or {"mask": RLE}, optional "object_id";
    a bare RLE record ({"size", "counts"}) is a mask. Its name is given by `question_regions`."""
    if not isinstance(raw, Mapping):
        raise DatasetError(f"{where}: a region must be an object with 'box' and/or 'mask', got {raw!r}")
    rle = raw if "counts" in raw else raw.get("mask")
    size = counts = None
    box = None
    if rle is not None:
        try:
            runs = rle_counts(rle)
        except MaskError as exc:
            raise DatasetError(f"{where}: bad mask: {exc}") from None
        size = (int(rle["size"][0]), int(rle["size"][1]))
        counts = rle["counts"] if isinstance(rle["counts"], str) else counts_to_string(runs)
        box = rle_box(size, runs)
    if raw.get("box") is not None:
        try:
            box = tuple(float(v) for v in raw["box"])
        except (TypeError, ValueError, OverflowError):
            box = ()
        if len(box) != 4 or not all(math.isfinite(v) for v in box) or box[2] < box[0] or box[3] < box[1]:
            raise DatasetError(f"{where}: a region box must be four finite numbers [x_min, y_min, x_max, y_max], "
                               f"got {short_repr(raw['box'])}")
    if box is None:
        raise DatasetError(f"{where}: a region needs a 'box' or a non-empty 'mask'")
    return Region(name="", box=box, mask_size=size, mask_counts=counts,  # type: ignore[arg-type]
                  object_id=_object_id(raw.get("object_id"), where))


def _object_id(value: Any, where: str) -> int | None:
    """A region's "object_id": an integer (or its digits as text), or None when absent."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value.strip()):
        return int(value)
    raise DatasetError(f"{where}: a region's 'object_id' must be an integer, got {short_repr(value)}")


def question_regions(text: str, raw_regions: Sequence[Any] | None, where: str) -> tuple[str, tuple[Region, ...]]:
    """The question text with its tokens rewritten, and its regions named; no regions, no change."""
    if not raw_regions:
        if TOKEN in text:
            raise DatasetError(f"{where}: the question has {TOKEN} tokens but no regions")
        return text, ()
    if not isinstance(raw_regions, Sequence) or isinstance(raw_regions, (str, bytes)):
        raise DatasetError(f"{where}: 'regions' must be a list of regions")
    return name_regions(text, [read_region(raw, f"{where}, region #{k}") for k, raw in enumerate(raw_regions)],
                        where)


def name_regions(text: str, regions: Sequence[Region], where: str) -> tuple[str, tuple[Region, ...]]:
    """The question text with its tokens rewritten, and `regions` (read, unnamed) named in order."""
    try:
        rewritten, names = rewrite_tokens(text, len(regions))
    except ValueError as exc:
        raise DatasetError(f"{where}: {exc}") from None
    return rewritten, tuple(Region(n, r.box, r.mask_size, r.mask_counts, r.object_id)
                            for n, r in zip(names, regions))


def region_record(region: Region) -> dict[str, Any]:
    """A region as the JSON record `read_region` reads (for results and reports)."""
    record: dict[str, Any] = {"name": region.name, "box": list(region.box)}
    if region.mask_counts is not None and region.mask_size is not None:
        record["mask"] = {"size": list(region.mask_size), "counts": region.mask_counts}
    if region.object_id is not None:
        record["object_id"] = region.object_id
    return record


def region_fields(item: Mapping[str, Any], text: str, where: str) -> dict[str, Any]:
    """`Question` fields from a question record's optional "regions" and "metric" keys.

    Shared by the generated-benchmark and CLEVR layouts; a record without them gives the text
    unchanged, no regions and the answer type's metric.
    """
    rewritten, regions = question_regions(text, item.get("regions"), where)
    metric = item.get("metric")
    if metric is not None and metric not in METRICS:
        raise DatasetError(f"{where}: unknown metric {metric!r}; expected one of {sorted(METRICS)}")
    return {"question": rewritten, "regions": regions, "metric": metric}
