"""The one interpreter of CLEVR functional programs, over a pluggable world.

A *world* answers four questions about the objects of one image: which objects there are, an
object's attribute, whether two handles are the same object, and which objects stand in a
relation to one. `SceneWorld` reads CLEVR scene annotations (gold answers of generated
questions, data checks); `ModuleWorld` (clevr_module_world.py) asks the five perception modules,
which checks modules, data and metrics end to end. Both run the same functions below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

ATTRIBUTES = ("color", "material", "shape", "size")


class ProgramError(ValueError):
    """A program cannot run in a world (e.g. `unique` over zero or several objects)."""


class ClevrWorld(Protocol):
    """What CLEVR's functions need to know about one image; objects are opaque handles."""

    def objects(self) -> list[Any]: ...

    def attribute(self, obj: Any, attribute: str) -> str: ...

    def same(self, a: Any, b: Any) -> bool: ...

    def relate(self, obj: Any, relation: str) -> list[Any]: ...


class SceneWorld:
    """A CLEVR scene annotation; objects are indices into `scene["objects"]`."""

    def __init__(self, scene: Mapping[str, Any]) -> None:
        self.scene = scene

    def objects(self) -> list[int]:
        return list(range(len(self.scene["objects"])))

    def attribute(self, obj: int, attribute: str) -> str:
        return self.scene["objects"][obj][attribute]

    def same(self, a: int, b: int) -> bool:
        return a == b

    def relate(self, obj: int, relation: str) -> list[int]:
        return sorted(self.scene["relationships"][relation][obj])


def format_answer(value: Any) -> str:
    """CLEVR's answer strings: booleans are yes/no, counts are decimal integers."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _world(world: ClevrWorld | Mapping[str, Any]) -> ClevrWorld:
    return SceneWorld(world) if isinstance(world, Mapping) else world


def execute(program: Sequence[Mapping[str, Any]], world: ClevrWorld | Mapping[str, Any]) -> Any:
    """Run `program` in `world` (or on a scene dict) and return the final node's value."""
    world = _world(world)
    values: list[Any] = []
    for step, node in enumerate(program):
        fn = node["function"]
        args = [values[i] for i in node.get("inputs", [])]
        try:
            values.append(apply(fn, args, list(node.get("value_inputs", [])), world))
        except ProgramError as exc:
            raise ProgramError(f"step {step} ({fn}): {exc}") from None
    if not values:
        raise ProgramError("empty program")
    return values[-1]


def answer(program: Sequence[Mapping[str, Any]], world: ClevrWorld | Mapping[str, Any]) -> str:
    """The program's answer in CLEVR's string form."""
    return format_answer(execute(program, world))


def apply(fn: str, args: list[Any], params: list[str], world: ClevrWorld) -> Any:
    """One CLEVR function; object sets are lists of the world's object handles."""
    kind, _, attr = fn.partition("_")
    if fn == "scene":
        return world.objects()
    if fn == "unique":
        if len(args[0]) != 1:
            raise ProgramError(f"expected exactly one object, got {len(args[0])}")
        return args[0][0]
    if fn == "relate":
        return world.relate(args[0], params[0])
    if fn == "union":
        return list(args[0]) + [y for y in args[1] if not any(world.same(x, y) for x in args[0])]
    if fn == "intersect":
        return [x for x in args[0] if any(world.same(x, y) for y in args[1])]
    if fn == "count":
        return len(args[0])
    if fn == "exist":
        return len(args[0]) > 0
    if fn == "equal_integer":
        return args[0] == args[1]
    if fn == "less_than":
        return args[0] < args[1]
    if fn == "greater_than":
        return args[0] > args[1]
    if attr in ATTRIBUTES:
        if kind == "filter":
            return [o for o in args[0] if world.attribute(o, attr) == params[0]]
        if kind == "query":
            return world.attribute(args[0], attr)
        if kind == "same":
            value = world.attribute(args[0], attr)
            return [o for o in world.objects()
                    if not world.same(o, args[0]) and world.attribute(o, attr) == value]
        if kind == "equal":
            return args[0] == args[1]
    raise ProgramError(f"unknown CLEVR function {fn!r}")
