"""Backend choice per module slot: built-ins built lazily, plugins found by entry point."""

from __future__ import annotations

import sys
import textwrap

import pytest

from base_modules.module import Depth
from base_modules.oracle.clevr import ClevrDepth, ClevrLoc, clevr_oracle_modules
from base_modules.registry import ENTRY_POINT_GROUP, BackendError, build_module_set, plugin_names


def oracle_factory(counter: list[str]):
    def build():
        counter.append("oracle")
        return clevr_oracle_modules(lambda image_id: None)
    return build


def test_all_oracle_builds_only_the_oracle_once():
    built: list[str] = []

    def real():
        raise AssertionError("real modules must not be built when no slot chose them")

    modules = build_module_set({}, builtins={"oracle": oracle_factory(built), "real": real})
    assert built == ["oracle"] and isinstance(modules.loc, ClevrLoc)


def test_per_slot_override_mixes_backends():
    class ConstantDepth(Depth):
        def forward(self, image, bbox):
            return 2.0

    other = clevr_oracle_modules(lambda image_id: None)
    other.depth = ConstantDepth()
    modules = build_module_set({"depth": "Real"}, default="oracle",
                               builtins={"oracle": oracle_factory([]), "real": lambda: other})
    assert isinstance(modules.loc, ClevrLoc) and isinstance(modules.depth, ConstantDepth)


def test_unknown_slot_and_backend_are_reported_with_the_choices():
    builtins = {"oracle": oracle_factory([])}
    with pytest.raises(BackendError, match=r"unknown module 'detph'; modules are loc, depth"):
        build_module_set({"detph": "real"}, builtins=builtins)
    with pytest.raises(BackendError, match=rf"unknown module backend 'nope'; known: oracle, real.*{ENTRY_POINT_GROUP}"):
        build_module_set({"vqa": "nope"}, builtins=builtins)


@pytest.fixture()
def plugin_dist(tmp_path, monkeypatch):
    """An installed distribution declaring two `vadar.modules` entry points."""
    (tmp_path / "fake_depth_plugin.py").write_text(textwrap.dedent("""
        from base_modules.module import Depth

        class HalfDepth(Depth):
            def __init__(self, scale=1.0):
                super().__init__(device="cpu")
                self.scale = scale
            def forward(self, image, bbox):
                return 0.5 * self.scale

        def build(slot, **options):
            if slot != "depth":
                raise ValueError(f"only depth, not {slot}")
            return HalfDepth(**options)

        def wrong(slot, **options):
            return object()
    """))
    info = tmp_path / "fake_depth_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-depth-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nhalfdepth = fake_depth_plugin:build\nwrong = fake_depth_plugin:wrong\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("fake_depth_plugin", None)


def test_entry_point_plugin_fills_a_slot(plugin_dist):
    assert {"halfdepth", "wrong"} <= set(plugin_names())
    modules = build_module_set({"depth": "halfdepth"}, builtins={"oracle": oracle_factory([])},
                               plugin_options={"scale": 4.0})
    assert modules.depth(None, [0, 0, 1, 1]) == 2.0
    assert not isinstance(modules.depth, ClevrDepth)


def test_plugin_failures_name_the_plugin(plugin_dist):
    builtins = {"oracle": oracle_factory([])}
    with pytest.raises(BackendError, match="plugin 'halfdepth' could not build 'loc': ValueError: only depth"):
        build_module_set({"loc": "halfdepth"}, builtins=builtins)
    with pytest.raises(BackendError, match="ModuleSet.vqa must be a VQA module"):
        build_module_set({"vqa": "wrong"}, builtins=builtins)
