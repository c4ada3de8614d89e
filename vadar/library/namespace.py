"""What generated code sees when it runs: the one place program namespaces are built.

Programs, API-agent tests and tool-agent steps all run with the image handle, the five
predefined modules and (where the method allows) the implemented library functions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from api_store import FunctionRecord
from base_modules.module import ModuleSet
from base_modules.types import Image
from vadar.sandbox import LibraryFunction


def library_functions(records: Iterable[FunctionRecord]) -> dict[str, LibraryFunction]:
    """Implemented functions as sandbox source, ready to join a namespace."""
    return {f.name: LibraryFunction(f.name, f.code) for f in records if f.code}


def program_namespace(image: Image, modules: ModuleSet,
                      library: Iterable[FunctionRecord] = ()) -> dict[str, Any]:
    """The image handle, the five modules and the given library functions."""
    return {"image": image, **modules.as_namespace(), **library_functions(library)}
