"""run.json says which code wrote a run, and a resume after a change of code says so too."""

from __future__ import annotations

import json

import pytest

import vadar
from vadar.runs import manifest, provenance
from vadar.runs.manifest import RunMismatchError, claim_run_dir, release_run_dir


def _claim(out, identity, monkeypatch, commit):
    monkeypatch.setattr(manifest, "code_version", lambda: {"version": "9.9", "commit": commit, "dirty": False})
    try:
        claim_run_dir(out, identity)
    finally:
        release_run_dir(out)
    return json.loads((out / "run.json").read_text())


def test_first_start_records_the_code_and_a_resume_appends_only_a_new_one(tmp_path, monkeypatch):
    out = tmp_path / "run"
    first = _claim(out, {"method": "vadar"}, monkeypatch, "aaa1111")
    assert first["method"] == "vadar"
    assert first["written_by"] == [{"version": "9.9", "commit": "aaa1111", "dirty": False}]
    again = _claim(out, {"method": "vadar"}, monkeypatch, "aaa1111")
    assert again["written_by"] == first["written_by"]
    fixed = _claim(out, {"method": "vadar"}, monkeypatch, "bbb2222")
    assert [w["commit"] for w in fixed["written_by"]] == ["aaa1111", "bbb2222"]


def test_a_new_commit_never_counts_as_other_settings_but_other_settings_still_do(tmp_path, monkeypatch):
    out = tmp_path / "run"
    _claim(out, {"method": "vadar"}, monkeypatch, "aaa1111")
    _claim(out, {"method": "vadar"}, monkeypatch, "ccc3333")  # no RunMismatchError
    with pytest.raises(RunMismatchError, match="method=vadar"):
        _claim(out, {"method": "static-api"}, monkeypatch, "ccc3333")


def test_a_run_json_from_before_keeps_its_unknown_writer_first(tmp_path, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"method": "vadar"}))
    recorded = _claim(out, {"method": "vadar"}, monkeypatch, "ddd4444")
    assert recorded["written_by"][0] == {"version": None, "commit": None, "dirty": None}
    assert recorded["written_by"][1]["commit"] == "ddd4444"


def test_code_version_of_this_checkout():
    found = provenance.code_version()
    assert found["version"] == vadar.__version__
    if (provenance.PACKAGE_ROOT / ".git").exists():
        assert found["commit"] and len(found["commit"]) >= 7 and isinstance(found["dirty"], bool)
