"""What generated code sees when it runs: the one place program namespaces are built.

Programs, API-agent tests and tool-agent steps all run with the image handle, the five
predefined modules and (where the method allows) the implemented library functions. A question
about several frames of one scene adds `views` (the frames, in order; `image` is the first) and
the multi-view modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from api_store import FunctionRecord
from base_modules.module import ModuleSet
from base_modules.types import Image
from base_modules.view_modules import ViewModuleSet
from vadar.sandbox import LibraryFunction


def library_functions(records: Iterable[FunctionRecord]) -> dict[str, LibraryFunction]:
    """Implemented functions as sandbox source, ready to join a namespace."""
    return {f.name: LibraryFunction(f.name, f.code) for f in records if f.code}


def program_namespace(image: Image, modules: ModuleSet,
                      library: Iterable[FunctionRecord] = (), *,
                      views: list[Image] | None = None,
                      view_modules: ViewModuleSet | None = None) -> dict[str, Any]:
    """The image handle, the five modules and the given library functions; with `views`, also
    the frames and (when given) the multi-view modules."""
    namespace: dict[str, Any] = {"image": image, **modules.as_namespace()}
    if views:
        namespace["views"] = list(views)
        namespace.update(view_modules.as_namespace() if view_modules is not None else {})
    return {**namespace, **library_functions(library)}
