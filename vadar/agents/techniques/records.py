"""Reading the techniques' records of one results line, whichever version wrote it.

Since the records, each technique's record sits under its own key in the line's `techniques`
object. Lines written before kept them as flat fields of `extra` ("constraint", "samples",
"agreement", "revisions", "unit_tests", "tests_passed", "size_priors", "tries", ...); each record
type maps those back (`from_extra`), so older runs still load, rescore, compare and report.
A record that cannot be read (a hand-edited or damaged line) is left out rather than failing the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vadar.agents.formalize import FormalizeRecord
from vadar.agents.techniques.build_tries import BuildTriesRecord
from vadar.agents.techniques.fallback import FallbackRecord
from vadar.agents.techniques.find_order import FindOrderRecord
from vadar.agents.techniques.priors import SizePriorsRecord
from vadar.agents.techniques.revise import RevisionRecord
from vadar.agents.techniques.vote import VoteRecord
from vadar.agents.unit_tests import UnitTestRecord
from vadar.programs.records import TechniqueRecords

RECORD_TYPES = (FormalizeRecord, UnitTestRecord, SizePriorsRecord, FindOrderRecord, RevisionRecord, VoteRecord,
                BuildTriesRecord, FallbackRecord)
"""Every technique's record, in the order a question meets the techniques."""

_BY_KEY = {kind.key: kind for kind in RECORD_TYPES}
_UNREADABLE = (KeyError, TypeError, ValueError, AttributeError)


def records_from_json(data: Any) -> TechniqueRecords:
    """The records of a line's `techniques` object; unknown keys (a newer technique) are skipped."""
    records = TechniqueRecords()
    if not isinstance(data, Mapping):
        return records
    for key, fields in data.items():
        kind = _BY_KEY.get(key)
        if kind is not None and isinstance(fields, Mapping):
            try:
                records.put(kind.from_json(fields))
            except _UNREADABLE:
                continue
    return records


def records_from_extra(extra: Any) -> TechniqueRecords:
    """The records in the `extra` fields of a line written before the records."""
    records = TechniqueRecords()
    if not isinstance(extra, Mapping):
        return records
    for kind in RECORD_TYPES:
        try:
            record = kind.from_extra(extra)
        except _UNREADABLE:
            continue
        if record is not None:
            records.put(record)
    return records


def read_techniques(row: Mapping[str, Any]) -> TechniqueRecords:
    """The records of one results line, of either form (a line with both, edited by hand, reads both;
    the `techniques` object wins)."""
    records = records_from_extra(row.get("extra"))
    for record in records_from_json(row.get("techniques")):
        records.put(record)
    return records

