"""Perception modules served by Ray actors: models load once per actor (per GPU), tasks share them.

A `ModuleServer` holds the five modules of one backend (`real` or a plugin). Question tasks see
`ServedModule`s: the same spec classes the LLM reads, whose `forward` is a call to a server,
chosen by the image so that one image's per-image caches (detections, depth maps) stay in one
actor.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Sequence
from typing import Any

import ray

from base_modules.module import PREDEFINED_MODULES, Module, ModuleError, ModuleSet
from base_modules.registry import SLOTS, build_module_set
from base_modules.types import Image
from vadar.config import VadarConfig


class ModuleServer:
    """One backend's modules, loaded when the actor starts (so missing weights fail before any question)."""

    def __init__(self, backend: str, config: VadarConfig, slots: Sequence[str]) -> None:
        def real() -> ModuleSet:
            from base_modules.real import real_modules

            return real_modules(config.vision)

        self.modules = build_module_set({slot: backend for slot in SLOTS}, builtins={"real": real})
        for slot in slots:
            getattr(self.modules, slot).load()

    def ready(self) -> bool:
        return True

    def call(self, slot: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
        """`(True, result)`, or `(False, error)` so the program sees the module's own error."""
        try:
            return True, getattr(self.modules, slot)(*args, **kwargs)
        except ModuleError as exc:
            return False, exc
        except Exception as exc:  # noqa: BLE001 - any model failure is this program's error, not the task's
            return False, ModuleError(f"{type(exc).__name__}: {exc}")


class ServedModule(Module):
    """Base of the task-side stand-ins: nothing to load, every call goes to a server."""

    def __init__(self, slot: str, servers: Sequence[Any]) -> None:
        super().__init__(device="cpu")
        self.slot = slot
        self.servers = list(servers)

    def remote_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        image = args[0] if args else kwargs.get("image")
        key = image.image_id if isinstance(image, Image) else ""
        server = self.servers[zlib.crc32(key.encode()) % len(self.servers)]
        ok, value = ray.get(server.call.remote(self.slot, args, kwargs))
        if not ok:
            raise value
        return value


def _served_class(spec: type[Module]) -> type[Module]:
    def forward(self: ServedModule, *args: Any, **kwargs: Any) -> Any:
        return self.remote_call(args, kwargs)

    forward.__signature__ = inspect.signature(spec.forward)  # type: ignore[attr-defined] - wrong calls fail here
    forward.__doc__ = spec.forward.__doc__
    return type(f"Served{spec.__name__}", (ServedModule, spec), {"forward": forward})


_SERVED: dict[str, type[Module]] = {spec.name: _served_class(spec) for spec in PREDEFINED_MODULES}


def served_module(slot: str, servers: Sequence[Any]) -> Module:
    """The task-side module of `slot` backed by `servers` (actor handles of one backend)."""
    return _SERVED[slot](slot, servers)  # type: ignore[call-arg]
