"""ModuleSet: one module per predefined slot, validated, exposed under the LLM-visible names."""

from __future__ import annotations

import pytest

from base_modules.module import PREDEFINED_MODULES, Depth, Loc, Module
from base_modules.module import ModuleSet
from base_modules.oracle.clevr import ClevrDepth, ClevrLoc, clevr_oracle_modules


def test_namespace_keys_are_module_names_in_predefined_order():
    modules = clevr_oracle_modules(lambda image_id: None)
    namespace = modules.as_namespace()
    assert list(namespace) == ["loc", "depth", "vqa", "same_object", "get_2D_object_size"]
    assert list(namespace) == [spec.name for spec in PREDEFINED_MODULES]
    for spec, module in zip(PREDEFINED_MODULES, modules):
        assert isinstance(module, spec)
        assert namespace[spec.name] is module
    assert len(modules) == 5


def test_wrong_spec_class_rejected():
    modules = clevr_oracle_modules(lambda image_id: None)
    with pytest.raises(TypeError, match=r"depth must implement Depth.*ClevrLoc implements Loc"):
        ModuleSet(loc=modules.loc, depth=modules.loc, vqa=modules.vqa,  # type: ignore[arg-type]
                  same_object=modules.same_object, get_2D_object_size=modules.get_2D_object_size)


def test_non_module_rejected():
    modules = clevr_oracle_modules(lambda image_id: None)
    with pytest.raises(TypeError, match="vqa must be a VQA module"):
        ModuleSet(loc=modules.loc, depth=modules.depth, vqa=lambda *a: "red",  # type: ignore
                  same_object=modules.same_object, get_2D_object_size=modules.get_2D_object_size)


def test_backends_can_be_mixed_per_slot():
    """Any Depth implementation fits the depth slot, whatever the other slots hold."""

    class ConstantDepth(Depth):
        def forward(self, image, bbox):
            return 1.0

    oracle = clevr_oracle_modules(lambda image_id: None)
    mixed = ModuleSet(loc=oracle.loc, depth=ConstantDepth(), vqa=oracle.vqa,
                      same_object=oracle.same_object,
                      get_2D_object_size=oracle.get_2D_object_size)
    assert mixed.as_namespace()["depth"](None, [0, 0, 1, 1]) == 1.0
    assert isinstance(mixed.loc, ClevrLoc) and not isinstance(mixed.depth, ClevrDepth)
    assert all(isinstance(m, Module) for m in mixed)
    assert isinstance(mixed.loc, Loc)


def test_oracle_forward_signatures_match_the_specs():
    """Programs are written against the spec signatures; oracles must accept exactly those."""
    import inspect

    for spec, module in zip(PREDEFINED_MODULES, clevr_oracle_modules(lambda image_id: None)):
        ours = list(inspect.signature(type(module).forward).parameters)
        assert ours == list(inspect.signature(spec.forward).parameters), spec.name
