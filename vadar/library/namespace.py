"""What generated code sees when it runs: the one place program namespaces are built.

Programs, API-agent tests and tool-agent steps all run with the image handle, the five
predefined modules and (where the method allows) the implemented library functions; a question
that points at regions adds `region()` and the region tools bound to its regions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from api_store import FunctionRecord
from base_modules.module import ModuleSet
from base_modules.region_geometry import region_modules
from base_modules.region_tools import bind_region_tools
from base_modules.types import Image, Region
from vadar.sandbox import LibraryFunction


def library_functions(records: Iterable[FunctionRecord]) -> dict[str, LibraryFunction]:
    """Implemented functions as sandbox source, ready to join a namespace."""
    return {f.name: LibraryFunction(f.name, f.code) for f in records if f.code}


def program_namespace(image: Image, modules: ModuleSet, library: Iterable[FunctionRecord] = (),
                      regions: Sequence[Region] = ()) -> dict[str, Any]:
    """The image handle, the five modules, the question's region tools (if it has regions) and
    the given library functions."""
    tools = bind_region_tools(regions, region_modules(modules)) if regions else {}
    return {"image": image, **modules.as_namespace(), **tools, **library_functions(library)}
