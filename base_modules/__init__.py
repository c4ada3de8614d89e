"""Perception modules: one interface, the five predefined modules, oracle and real backends."""

from base_modules.module import (
    PREDEFINED_MODULES,
    VQA,
    Depth,
    Loc,
    Module,
    ModuleError,
    ObjectSize2D,
    SameObject,
    module_stub,
    spec_class,
)
from base_modules.types import BBox, Image

__all__ = [
    "PREDEFINED_MODULES", "VQA", "BBox", "Depth", "Image", "Loc", "Module", "ModuleError",
    "ObjectSize2D", "SameObject", "module_stub", "spec_class",
]
