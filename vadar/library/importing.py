"""`vadar library import`: read an export (`vadar library export`) into the home's library.

An export is data from elsewhere; its helpers would run before every program that has them in
its namespace. So every implemented version is checked with the rule for stored helpers
(`check_library_source`: exactly one plain `def`, no decorators, constant defaults, nothing else
at top level) before anything is written, and one bad helper refuses the whole file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from api_store import ApiStore, DuplicateFunctionError
from vadar.sandbox import LibrarySourceError, check_library_source


class LibraryImportError(ValueError):
    """The file cannot be imported; the message names it and what is wrong."""


def read_export(path: Path) -> dict[str, Any]:
    """The export in `path`, its helpers checked; `LibraryImportError` names the first bad one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LibraryImportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LibraryImportError(f"{path} is not a JSON library export: {exc}") from None
    for entry in data.get("functions") or [] if isinstance(data, dict) else []:
        for version in entry.get("history") or [] if isinstance(entry, dict) else []:
            if not isinstance(version, dict) or version.get("status") != "implemented":
                continue  # proposals and failed versions are history only: they never run
            try:
                check_library_source(str(entry.get("name")), version.get("code"))
            except LibrarySourceError as exc:
                where = f" (line {exc.lineno})" if exc.lineno else ""
                raise LibraryImportError(f"{path}: version {version.get('version')} of {exc.message}{where}; "
                                         "nothing was imported") from None
    return data


def import_library(store: ApiStore, path: Path, *, replace: bool = False) -> list[str]:
    """Import every function of the export in `path` into `store`, or none; return their names."""
    data = read_export(path)
    try:
        return store.import_functions(data, replace=replace)
    except DuplicateFunctionError as exc:
        hint = "; add --replace to import it as a new version" if exc.name == exc.existing else ""
        raise LibraryImportError(f"{path}: {exc}{hint}; nothing was imported") from None
