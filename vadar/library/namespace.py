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
from vadar.sandbox import LibraryFunction, LibrarySourceError, check_library_source


def library_functions(records: Iterable[FunctionRecord]) -> dict[str, LibraryFunction]:
    """Implemented functions as sandbox source, ready to join a namespace.

    A stored helper that is not one plain `def` (stored before that was checked) is left out:
    its definition would run before every program.
    """
    return {f.name: LibraryFunction(f.name, f.code) for f in records if f.code and _plain(f.name, f.code)}


def _plain(name: str, code: str) -> bool:
    try:
        check_library_source(name, code)
    except LibrarySourceError:
        return False
    return True


def program_namespace(image: Image, modules: ModuleSet,
                      library: Iterable[FunctionRecord] = ()) -> dict[str, Any]:
    """The image handle, the five modules and the given library functions."""
    return {"image": image, **modules.as_namespace(), **library_functions(library)}
