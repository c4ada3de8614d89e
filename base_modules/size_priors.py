"""Typical sizes of common indoor and warehouse objects and rooms, each traceable to a cited source.

The knowledge file `base_modules/knowledge/size_priors.json` (docs/size-priors.md) lists for each
entry its name, synonyms, `kind` (object or room), its dimensions as a range in metres (floor area in
square metres) and the sources: a URL or a file in a public repository, with the exact quote that
holds every number used. `size_prior("chair")` looks an entry up by name, synonym or plural;
`priors_in_text(question)` finds the entries a question mentions. Priors are for plausibility only:
they say what a chair usually measures, never what this chair measures.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

KNOWLEDGE_FILE = "knowledge/size_priors.json"
AREA = "floor area"  # the one dimension in square metres; every other one is a length in metres
LINEAR_ORDER = ("height", "length", "width", "depth", "diameter")


class UnknownSizePrior(KeyError):
    """No entry of the knowledge file is named (or has a synonym) like the noun asked for."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclass(frozen=True)
class Range:
    """A typical range; `low == high` where the sources give one value."""

    low: float
    high: float

    def text(self, unit: str = "m") -> str:
        if self.low == self.high:
            return f"{_number(self.low)} {unit}"
        return f"{_number(self.low)}–{_number(self.high)} {unit}"


@dataclass(frozen=True)
class Source:
    title: str
    where: str  # a URL, or repo:path@commit for a file in a public repository
    quote: str

    @property
    def short_title(self) -> str:
        """The title's part before a colon ("VoteNet", "The Spruce"), else the site or repository."""
        head, colon, _ = self.title.partition(":")
        if colon and len(head.strip()) <= 30:
            return head.strip()
        return re.sub(r"^https?://(?:www\.)?([^/]+).*$", r"\1", self.where).split(":", 1)[0]


@dataclass(frozen=True)
class SizePrior:
    name: str
    kind: str  # "object" or "room"
    synonyms: tuple[str, ...]
    dimensions: Mapping[str, Range]
    sources: tuple[Source, ...]

    def linear(self) -> dict[str, Range]:
        """The dimensions that are lengths (everything but floor area), in a stable order."""
        order = {name: i for i, name in enumerate(LINEAR_ORDER)}
        names = sorted((d for d in self.dimensions if d != AREA), key=lambda d: (order.get(d, len(order)), d))
        return {d: self.dimensions[d] for d in names}

    def envelope(self) -> Range | None:
        """From the smallest to the largest typical length over all dimensions (None for area only)."""
        lengths = list(self.linear().values())
        if not lengths:
            return None
        return Range(min(r.low for r in lengths), max(r.high for r in lengths))

    def summary(self) -> str:
        """One line: `chair: height 0.72–0.83 m, length 0.59–0.61 m (VoteNet, ScanNet, +1 more)`."""
        parts = [f"{name} {rng.text()}" for name, rng in self.linear().items()]
        if AREA in self.dimensions:
            parts.append(f"{AREA} {self.dimensions[AREA].text('m²')}")
        titles = list(dict.fromkeys(s.short_title for s in self.sources))
        cited = ", ".join(titles[:2]) + (f", +{len(titles) - 2} more" if len(titles) > 2 else "")
        return f"{self.name}: {', '.join(parts)} ({cited})"

    def as_dict(self) -> dict[str, Any]:
        """Plain values: name, kind, each dimension as [low, high] (metres; floor area in m²), sources."""
        return {"name": self.name, "kind": self.kind,
                "dimensions": {d: [r.low, r.high] for d, r in self.dimensions.items()},
                "sources": [{"title": s.title, "where": s.where} for s in self.sources]}


def _number(value: float) -> str:
    """Two significant decimals for metres; small objects keep three (a 0.054 m card)."""
    text = f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def normalize(text: str) -> str:
    """Lower case, `_` and `-` as spaces, one space between words: keys and queries compare alike."""
    return " ".join(re.sub(r"[_\-]+", " ", text.strip().lower()).split())


def _entry(raw: Mapping[str, Any]) -> SizePrior:
    sources = tuple(Source(title=s["title"], quote=s["quote"],
                           where=s.get("url") or f"{s['repo']}:{s['path']}@{s['commit']}") for s in raw["sources"])
    dims = {name: Range(float(d["min"]), float(d["max"])) for name, d in raw["dimensions"].items()}
    return SizePrior(name=raw["name"], kind=raw["kind"], synonyms=tuple(raw.get("synonyms", ())),
                     dimensions=dims, sources=sources)


@dataclass(frozen=True, eq=False)
class SizeKnowledge:
    """Every entry, and every name and synonym (normalised) pointing at its entry."""

    entries: tuple[SizePrior, ...]
    index: Mapping[str, SizePrior]

    def lookup(self, noun: str) -> SizePrior:
        """The entry named `noun` (a synonym or a plural works too); a clear error otherwise."""
        key = normalize(noun)
        for candidate in (key, *_singulars(key)):
            if candidate in self.index:
                return self.index[candidate]
        close = difflib.get_close_matches(key, list(self.index), n=8, cutoff=0.6)
        names = list(dict.fromkeys(self.index[k].name for k in close))[:3]
        hint = f"; close names: {', '.join(names)}" if names else ""
        raise UnknownSizePrior(f"no size prior for {noun.strip()!r} in base_modules/{KNOWLEDGE_FILE}{hint}")

    def in_text(self, text: str) -> list[SizePrior]:
        """Entries whose name or synonym (or its plural) occurs in `text` as words, in order of
        first mention; the longest name wins where names overlap ("table lamp" over "table")."""
        pattern, keys = _terms(self)
        found: dict[str, SizePrior] = {}
        for match in pattern.finditer(text.lower()):
            prior = self.index[keys[normalize(match.group(0))]]
            found.setdefault(prior.name, prior)
        return list(found.values())


def _singulars(word: str) -> list[str]:
    """Plural forms the synonyms do not list: boxes, shelves, batteries, chairs."""
    forms = []
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    if word.endswith("ves"):
        forms += [word[:-3] + "f", word[:-3] + "fe"]
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        forms.append(word[:-1])
    return forms


def _plurals(term: str) -> list[str]:
    if term.endswith(("s", "x", "ch", "sh")):
        return [term + "es"]
    if term.endswith("y") and len(term) > 1 and term[-2] not in "aeiou":
        return [term[:-1] + "ies"]
    return [term + "s"]


@lru_cache(maxsize=4)
def _terms(knowledge: SizeKnowledge) -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern over all names, synonyms and their plurals, and which key each term stands for.

    A space in a name matches a space or a hyphen; a match never starts or ends inside a word or a
    hyphenated compound ("counter" is not found in "counter-clockwise").
    """
    keys: dict[str, str] = {}
    for key in knowledge.index:
        keys[key] = key
    for key in knowledge.index:
        for plural in _plurals(key):
            keys.setdefault(plural, key)
    alternatives = sorted(keys, key=len, reverse=True)
    body = "|".join(r"[\s\-]+".join(re.escape(word) for word in term.split()) for term in alternatives)
    return re.compile(rf"(?<![\w\-])(?:{body})(?![\w\-])"), keys


def parse(data: Mapping[str, Any]) -> SizeKnowledge:
    """The knowledge from the file's JSON; a name or synonym used twice is an error in the file."""
    entries = tuple(_entry(raw) for raw in data["entries"])
    index: dict[str, SizePrior] = {}
    for prior in entries:
        for name in (prior.name, *prior.synonyms):
            key = normalize(name)
            if key in index and index[key] is not prior:
                raise ValueError(f"{KNOWLEDGE_FILE}: {name!r} names both {index[key].name!r} and {prior.name!r}")
            index[key] = prior
    return SizeKnowledge(entries=entries, index=index)


def raw_knowledge() -> dict[str, Any]:
    """The knowledge file as stored (shipped as package data)."""
    return json.loads(resources.files("base_modules").joinpath(KNOWLEDGE_FILE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def knowledge() -> SizeKnowledge:
    return parse(raw_knowledge())


def size_prior(noun: str) -> SizePrior:
    """The typical size of `noun` ("chair", "chairs", "trash can"); `UnknownSizePrior` names the noun
    and suggests close names when the file has no entry for it."""
    return knowledge().lookup(noun)


def priors_in_text(text: str) -> list[SizePrior]:
    """The size priors of the nouns `text` mentions, in order of first mention."""
    return knowledge().in_text(text)

