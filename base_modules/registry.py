"""Choose a backend per module slot: `oracle`, `real`, or a plugin named by an entry point.

Plugins are installed packages that declare an entry point in the group `vadar.modules`:

    [project.entry-points."vadar.modules"]
    mydepth = "my_package.depth:build"

The entry point names a callable `build(slot: str, **options) -> Module` returning a module for
that slot (one of the five predefined names); `ModuleSet` checks it implements the right spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from base_modules.module import PREDEFINED_MODULES, Module
from base_modules.module import ModuleSet

ENTRY_POINT_GROUP = "vadar.modules"
SLOTS: tuple[str, ...] = tuple(spec.name for spec in PREDEFINED_MODULES)


class BackendError(ValueError):
    """A module slot or backend name is unknown, or a plugin could not be built."""


def plugin_names() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def load_plugin(name: str) -> Callable[..., Module]:
    matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not matches:
        return _unknown(name)
    try:
        return matches[0].load()
    except Exception as exc:  # noqa: BLE001 - any import failure of a third-party plugin
        raise BackendError(f"module plugin '{name}' ({matches[0].value}) failed to load: "
                           f"{type(exc).__name__}: {exc}") from None


def _unknown(name: str) -> Callable[..., Module]:
    plugins = plugin_names()
    known = "oracle, real" + (", " + ", ".join(plugins) if plugins else "")
    raise BackendError(f"unknown module backend '{name}'; known: {known} (plugins register an entry "
                       f"point in group '{ENTRY_POINT_GROUP}')")


def slot_name(text: str) -> str:
    """The canonical slot for `text`, matched case-insensitively; one error for a misspelling."""
    wanted = text.strip().lower()
    for slot in SLOTS:
        if slot.lower() == wanted:
            return slot
    raise BackendError(f"unknown module {text.strip()!r}; modules are {', '.join(SLOTS)}")


def backend_name(text: str | None, *, slot: str = "backend") -> str:
    """Backend names are case-insensitive: `Oracle` and `oracle` are the same backend."""
    name = (text or "").strip().lower()
    if not name:
        raise BackendError(f"module '{slot}' has an empty backend name")
    return name


def parse_assignment(text: str) -> tuple[str, str]:
    """`SLOT=BACKEND` (as in `--module depth=real`) into the canonical slot and backend."""
    slot, sep, backend = (part.strip() for part in text.partition("="))
    if not sep or not slot or not backend:
        raise BackendError(f"{text!r}: expected SLOT=BACKEND, e.g. depth=real")
    canonical = slot_name(slot)
    return canonical, backend_name(backend, slot=canonical)


def resolve(default: str, *choices: Mapping[str, str | None]) -> dict[str, str]:
    """Every slot's backend: `default`, then each mapping of per-slot choices in turn (later wins).

    The one place slot and backend names are checked and normalised, so config, CLI, ablation
    grids and the pipeline agree on what `[modules] backend = "Oracle"` means.
    """
    chosen = {slot: backend_name(default) for slot in SLOTS}
    for mapping in choices:
        for slot, backend in mapping.items():
            if backend is not None:
                canonical = slot_name(slot)
                chosen[canonical] = backend_name(backend, slot=canonical)
    return chosen


def build_module_set(spec: Mapping[str, str], *, default: str = "oracle",
                     builtins: Mapping[str, Callable[[], ModuleSet]],
                     plugin_options: Mapping[str, Any] | None = None) -> ModuleSet:
    """A `ModuleSet` with each slot from its chosen backend (`default` unless `spec` names one).

    `builtins` maps built-in backend names ("oracle", "real") to factories of whole module sets;
    each factory runs at most once and only if some slot chose it, so choosing `oracle` everywhere
    never touches torch. Any other name is looked up as an entry-point plugin.
    """
    chosen = resolve(default, spec)
    built: dict[str, ModuleSet] = {}
    plugins: dict[str, Callable[..., Module]] = {}
    slots: dict[str, Module] = {}
    for slot, name in chosen.items():
        if name in builtins:
            if name not in built:
                built[name] = builtins[name]()
            slots[slot] = getattr(built[name], slot)
            continue
        if name not in plugins:
            plugins[name] = load_plugin(name)
        try:
            slots[slot] = plugins[name](slot, **dict(plugin_options or {}))
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's own failure, reported with its name
            raise BackendError(f"module plugin '{name}' could not build '{slot}': "
                               f"{type(exc).__name__}: {exc}") from None
    try:
        return ModuleSet(**slots)  # type: ignore[arg-type]
    except TypeError as exc:
        raise BackendError(str(exc)) from None
