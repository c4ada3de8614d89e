"""vadar: answer 3D spatial questions about images by writing programs over a self-growing API.

    import vadar
    with vadar.open() as v:
        print(v.solve("photo.png", "How many chairs are there?", modules="real").answer)

The public names below load on first use: importing `vadar` itself stays cheap, because the
sandbox's worker process (which imports `vadar.sandbox`, and so this package) must start fast and
reach nothing it does not need.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "open": "vadar.app", "Vadar": "vadar.app", "Solution": "vadar.app", "Call": "vadar.app",
    "Tokens": "vadar.app", "Evaluation": "vadar.app", "Build": "vadar.app", "Library": "vadar.app",
    "LibraryEntry": "vadar.app", "LibraryError": "vadar.app", "FunctionDetails": "vadar.app",
    "PredefinedModule": "vadar.app", "VadarConfig": "vadar.config", "ConfigError": "vadar.config",
    "load_config": "vadar.config",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    """`vadar.open`, `vadar.Solution`, ...: imported from where they live when first asked for."""
    home = _PUBLIC.get(name)
    if home is None:
        raise AttributeError(f"module 'vadar' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
