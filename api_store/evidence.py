"""Evidence about the library: programs written on build questions, and admission decisions.

A helper joins the library only on evidence that it helps (see `vadar.library.admission`). The
programs that decided it, and every decision with its evidence, are kept here beside the
function versions they concern, so `vadar library show` can say why a function is (not) there,
and correct programs serve as worked examples.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from api_store.base import StoreBase
from api_store.connection import utc_now
from api_store.errors import UnknownFunctionError
from api_store.records import FunctionRecord, FunctionStatus

DECISIONS = ("admitted", "rejected", "retired", "repair", "evaluated", "searched", "validated")
NOT_FINAL = ("repair", "evaluated", "searched", "validated")  # decisions that do not decide a version's admission


@dataclass(frozen=True)
class WrongScene:
    """Another scene where a right program's answer was wrong (or where it failed)."""

    image_id: str
    gold: str
    answer: str | None
    error: str | None = None


@dataclass(frozen=True)
class SceneCheck:
    """A right program run on other scenes its question applies to: right by chance if wrong on one."""

    checked: int
    wrong: tuple[WrongScene, ...] = ()

    @property
    def holds(self) -> bool:
        return not self.wrong

    def to_json(self) -> str:
        return json.dumps({"checked": self.checked, "wrong": [dataclasses.asdict(w) for w in self.wrong]})

    @classmethod
    def from_json(cls, text: str | None) -> SceneCheck | None:
        if not text:
            return None
        data = json.loads(text)
        return cls(int(data["checked"]), tuple(WrongScene(**w) for w in data.get("wrong") or []))


@dataclass(frozen=True)
class VerifiedProgram:
    """A program written for a build question, with or without the batch's candidate helpers."""

    id: int
    batch_id: int | None
    question_id: str
    question: str
    variant: str
    code: str | None
    answer: str | None
    gold: str | None
    error: str | None
    correct: bool | None
    uses: tuple[str, ...]
    withdrawn: str | None = None  # why it is no longer shown as a worked example
    other_scenes: SceneCheck | None = None  # None: not run on other scenes (no other scene, or not checked)


@dataclass(frozen=True)
class Decision:
    name: str
    version: int
    decision: str
    mode: str
    evidence: dict[str, Any]
    created_at: str


@dataclass(frozen=True)
class FunctionStats:
    """How programs on build questions fared when they called a function (current version)."""

    name: str
    used: int = 0
    errors: int = 0
    correct: int = 0
    judged: int = 0  # programs with a known right answer (gold or majority)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.judged if self.judged else None


def _text(value: str | None) -> str | None:
    """Program output can hold lone surrogates, which SQLite's UTF-8 cannot: escape them."""
    return None if value is None else value.encode("utf-8", "backslashreplace").decode("utf-8")


class EvidenceMixin(StoreBase):
    """Methods of `ApiStore` for verification programs and admission decisions."""

    def record_verified_program(self, *, batch_id: int | None, question_id: str, question: str,
                                variant: str, code: str | None, answer: Any, gold: Any,
                                error: str | None, correct: bool | None, uses: Iterable[str],
                                other_scenes: SceneCheck | None = None) -> int:
        """Keep a program; `correct` is the caller's verdict (with `other_scenes`, right on those too)."""
        with self.transaction():
            return self._insert("verified_programs", {
                "batch_id": batch_id, "question_id": str(question_id), "question": _text(question),
                "variant": variant, "code": _text(code), "answer": None if answer is None else _text(str(answer)),
                "gold": None if gold is None else _text(str(gold)), "error": _text(error),
                "correct": None if correct is None else int(correct),
                "uses": json.dumps(sorted(set(uses))), "created_at": utc_now(),
                "other_scenes": None if other_scenes is None else other_scenes.to_json(),
            })

    def verified_programs(self, *, correct_only: bool = False) -> list[VerifiedProgram]:
        sql = "SELECT * FROM verified_programs"
        if correct_only:
            sql += " WHERE correct = 1"
        with self._snapshot():
            rows = self._rows(sql + " ORDER BY id")
        return [VerifiedProgram(r["id"], r["batch_id"], r["question_id"], r["question"], r["variant"],
                                r["code"], r["answer"], r["gold"], r["error"],
                                None if r["correct"] is None else bool(r["correct"]),
                                tuple(json.loads(r["uses"])), r["withdrawn"],
                                SceneCheck.from_json(r["other_scenes"])) for r in rows]

    def withdraw_programs(self, ids: Iterable[int], reason: str) -> None:
        """Withdraw verified programs from the worked examples; they stay as evidence."""
        with self.transaction():
            for program_id in ids:
                self._db.execute("UPDATE verified_programs SET withdrawn = ? WHERE id = ?", [reason, program_id])

    def record_other_scenes(self, program_id: int, check: SceneCheck) -> None:
        """Keep what a program gave on other scenes; one wrong there is no longer right (right by chance)."""
        with self.transaction():
            self._db.execute("UPDATE verified_programs SET other_scenes = ?, correct = CASE WHEN ? THEN correct "
                             "ELSE 0 END WHERE id = ?", [check.to_json(), int(check.holds), program_id])

    def record_decision(self, name: str, decision: str, *, mode: str,
                        evidence: Mapping[str, Any] | None = None) -> None:
        """Attach `decision` (with its evidence) to the current version of `name`."""
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {DECISIONS}, got {decision!r}")
        with self.transaction():
            row = self._row("SELECT version_id FROM function_version_rows WHERE name = ? AND is_current", [name])
            if row is None:
                raise UnknownFunctionError(name)
            self._insert("function_decisions", {
                "version_id": row["version_id"], "decision": decision, "mode": mode,
                "evidence": json.dumps(dict(evidence or {}), default=str), "created_at": utc_now(),
            })

    def decisions(self, name: str | None = None) -> list[Decision]:
        sql = ("SELECT r.name, r.version, d.decision, d.mode, d.evidence, d.created_at "
               "FROM function_decisions AS d JOIN function_version_rows AS r ON r.version_id = d.version_id")
        params: list[Any] = []
        if name is not None:
            sql += " WHERE r.name = ?"
            params.append(name)
        with self._snapshot():
            rows = self._rows(sql + " ORDER BY d.id", params)
        return [Decision(r["name"], r["version"], r["decision"], r["mode"], json.loads(r["evidence"]),
                         r["created_at"]) for r in rows]

    def candidates(self) -> list[FunctionRecord]:
        """Helpers whose current version waits for the admission gate's verdict."""
        return self.functions(FunctionStatus.CANDIDATE)

    def function_stats(self) -> dict[str, FunctionStats]:
        """Per function name: programs on build questions that called it, their errors and scores."""
        stats: dict[str, dict[str, int]] = {}
        for program in self.verified_programs():
            for name in program.uses:
                entry = stats.setdefault(name, {"used": 0, "errors": 0, "correct": 0, "judged": 0})
                entry["used"] += 1
                entry["errors"] += program.error is not None
                if program.correct is not None:
                    entry["judged"] += 1
                    entry["correct"] += program.correct
        return {name: FunctionStats(name, **entry) for name, entry in stats.items()}

    def build_question_ids(self, *, data: str | Iterable[str], split: str) -> set[str]:
        """Every question of `data`/`split` that a build run of this library was shown; `data` may
        name the data set several ways (the path as given, resolved: `build_data_sources`)."""
        sources = [data] if isinstance(data, str) else list(data)
        with self._snapshot():
            rows = self._rows(
                "SELECT b.question_ids FROM batches AS b JOIN runs AS r ON r.id = b.run_id "
                "WHERE r.kind = 'build-api' AND json_extract(r.config, '$.data') IN "
                f"({', '.join('?' * len(sources))}) AND json_extract(r.config, '$.split') = ?", [*sources, split])
        return {q for row in rows for q in json.loads(row["question_ids"])}

    def build_data_sources(self) -> set[str]:
        """The data sets this library's build runs were given, as each run spelled it."""
        with self._snapshot():
            rows = self._rows("SELECT DISTINCT json_extract(config, '$.data') AS data FROM runs "
                              "WHERE kind = 'build-api' AND json_extract(config, '$.data') IS NOT NULL")
        return {str(row["data"]) for row in rows}
