"""Size priors: every number of the knowledge file is recomputed from its sources' quotes; lookup,
synonyms, plurals, the error for an unknown noun, and the nouns a question mentions."""

from __future__ import annotations

import re

import pytest

from base_modules.size_priors import (UnknownSizePrior, knowledge, normalize, parse, priors_in_text, raw_knowledge,
                                      size_prior)

ENTRIES = raw_knowledge()["entries"]
TO_METRES = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254, "ft": 0.3048}
TO_SQUARE_METRES = {"m2": 1.0, "sq ft": 0.3048 ** 2}
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def quoted_numbers(quote: str) -> set[float]:
    return {float(n.replace(",", "")) for n in NUMBER.findall(quote)}


def test_the_file_holds_exactly_the_sourced_entries():
    assert len(ENTRIES) == 200
    assert {e["kind"] for e in ENTRIES} == {"object", "room"}
    assert sum(e["kind"] == "room" for e in ENTRIES) == 29


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_every_number_is_recomputed_from_the_quotes_of_its_sources(entry):
    sources = entry["sources"]
    assert sources and entry["dimensions"]
    for source in sources:
        assert source["title"].strip() and source["quote"].strip()
        if "url" in source:
            assert source["url"].startswith(("http://", "https://"))
        else:
            assert source["repo"].count("/") == 1 and source["path"] and re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    used = set()
    for name, dim in entry["dimensions"].items():
        factors = TO_SQUARE_METRES if name == "floor area" else TO_METRES
        values = []
        for item in dim["from"]:
            quote = sources[item["source"]]["quote"]
            value = float(item["value"].replace(",", ""))
            assert value in quoted_numbers(quote), f"{entry['name']} {name}: {item['value']} not in {quote!r}"
            values.append(value * factors[item["unit"]])
            used.add(item["source"])
        assert dim["min"] == pytest.approx(round(min(values), 4), abs=1e-9)
        assert dim["max"] == pytest.approx(round(max(values), 4), abs=1e-9)
        assert 0 < dim["min"] <= dim["max"]
    assert used == set(range(len(sources))), f"{entry['name']}: a source none of its numbers comes from"


def test_names_and_synonyms_point_at_one_entry_each():
    seen: dict[str, str] = {}
    for entry in ENTRIES:
        for name in (entry["name"], *entry["synonyms"]):
            assert seen.setdefault(normalize(name), entry["name"]) == entry["name"], name
    with pytest.raises(ValueError, match="names both"):
        parse({"entries": [dict(ENTRIES[0]), dict(ENTRIES[1], synonyms=[ENTRIES[0]["name"]])]})


@pytest.mark.parametrize("noun", [
    "chair", "table", "desk", "stool", "cabinet", "box", "ball", "lamp", "trash can", "mug", "cup", "book", "sofa",
    "bed", "tv", "door", "window", "refrigerator", "pallet", "shelf", "pallet rack", "carton", "forklift",
    "transporter", "shipping container", "bedroom", "living room", "kitchen", "bathroom", "office", "classroom",
    "warehouse aisle",
])
def test_the_common_indoor_and_warehouse_nouns_have_a_prior(noun):
    assert size_prior(noun).dimensions


def test_size_prior_returns_the_cited_entry():
    chair = size_prior("chair")
    assert chair.name == "chair" and chair.kind == "object"
    assert chair.dimensions["height"].low == pytest.approx(0.7183) and chair.dimensions["height"].high == pytest.approx(0.8273)
    votenet = chair.sources[0]
    assert votenet.where == "facebookresearch/votenet:sunrgbd/model_util_sunrgbd.py@228bd17aba86c6958e82ba8456e0f68b5008a262"
    assert "0.827272" in votenet.quote and votenet.short_title == "VoteNet"
    assert chair.as_dict()["dimensions"]["height"] == [0.7183, 0.8273]
    assert chair.summary().startswith("chair: height 0.72–0.83 m, ")
    assert size_prior("kitchen").summary().startswith("kitchen: floor area 9.29–27.87 m² (")


@pytest.mark.parametrize("noun, name", [
    ("Chairs", "chair"), ("  trash can ", "trash can"), ("garbage bins", "trash can"), ("couch", "sofa"),
    ("20-foot containers", "20-foot container"), ("stacked washer dryers", "stacked washer dryer"),
    ("bathroom vanities", "bathroom vanity"), ("Pallet_Jack", "pallet jack"), ("fridge", "refrigerator"),
])
def test_synonyms_plurals_and_spelling_variants_resolve(noun, name):
    assert size_prior(noun).name == name


def test_an_unknown_noun_is_refused_with_its_name_and_close_names():
    with pytest.raises(UnknownSizePrior) as refused:
        size_prior("chiar")
    assert str(refused.value) == "no size prior for 'chiar' in base_modules/knowledge/size_priors.json; close names: chair, car"
    with pytest.raises(KeyError, match="no size prior for 'spaceship' in base_modules/knowledge/size_priors.json$"):
        size_prior("spaceship")


@pytest.mark.parametrize("question, names", [
    ("How tall is the chair next to the table lamp?", ["chair", "table lamp"]),
    ("What is the height of the mug on the coffee table, in meters?", ["mug", "coffee table"]),
    ("How far is the forklift from the counter-clockwise pallets?", ["forklift", "pallet"]),
    ("Are there more cubes than spheres?", []),
    ("Is the 20-foot container taller than the person?", ["20-foot container", "person"]),
])
def test_the_nouns_of_a_question_find_their_priors_in_order(question, names):
    assert [p.name for p in priors_in_text(question)] == names


def test_the_envelope_spans_every_length_but_not_the_floor_area():
    assert size_prior("mug").envelope().low == pytest.approx(0.075)
    assert size_prior("kitchen").envelope() is None
    assert knowledge() is knowledge()
