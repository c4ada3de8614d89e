"""Execute CLEVR functional programs on a CLEVR scene.

Gold answers of generated questions (the built-in sample) come from here, and the same code
checks that a data set's programs, scenes and answers agree with each other.
"""

from __future__ import annotations

from typing import Any

ATTRIBUTES = ("color", "material", "shape", "size")


class ProgramError(ValueError):
    """A program cannot run on a scene (e.g. `unique` over zero or several objects)."""


def format_answer(value: Any) -> str:
    """CLEVR's answer strings: booleans are yes/no, counts are decimal integers."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def execute(program: list[dict[str, Any]], scene: dict[str, Any]) -> Any:
    """Run `program` on `scene` and return the final node's value (object sets are lists)."""
    objects = scene["objects"]
    values: list[Any] = []
    for step, node in enumerate(program):
        fn = node["function"]
        args = [values[i] for i in node.get("inputs", [])]
        params = node.get("value_inputs", [])
        try:
            values.append(apply(fn, args, params, objects, scene))
        except ProgramError as exc:
            raise ProgramError(f"step {step} ({fn}): {exc}") from None
    if not values:
        raise ProgramError("empty program")
    return values[-1]


def answer(program: list[dict[str, Any]], scene: dict[str, Any]) -> str:
    """The program's answer in CLEVR's string form."""
    return format_answer(execute(program, scene))


def apply(fn: str, args: list[Any], params: list[str], objects: list[dict[str, Any]],
          scene: dict[str, Any]) -> Any:
    """One CLEVR function; object sets are sorted lists of object indices."""
    if fn == "scene":
        return list(range(len(objects)))
    if fn.startswith("filter_"):
        attr = fn[len("filter_"):]
        return [i for i in args[0] if objects[i][attr] == params[0]]
    if fn == "unique":
        if len(args[0]) != 1:
            raise ProgramError(f"expected exactly one object, got {len(args[0])}")
        return args[0][0]
    if fn == "relate":
        return sorted(scene["relationships"][params[0]][args[0]])
    if fn == "union":
        return sorted(set(args[0]) | set(args[1]))
    if fn == "intersect":
        return sorted(set(args[0]) & set(args[1]))
    if fn == "count":
        return len(args[0])
    if fn == "exist":
        return len(args[0]) > 0
    if fn.startswith("query_"):
        return objects[args[0]][fn[len("query_"):]]
    if fn.startswith("same_"):
        attr = fn[len("same_"):]
        value = objects[args[0]][attr]
        return [i for i in range(len(objects)) if i != args[0] and objects[i][attr] == value]
    if fn.startswith("equal_") and fn[len("equal_"):] in ATTRIBUTES:
        return args[0] == args[1]
    if fn == "equal_integer":
        return args[0] == args[1]
    if fn == "less_than":
        return args[0] < args[1]
    if fn == "greater_than":
        return args[0] > args[1]
    raise ProgramError(f"unknown CLEVR function {fn!r}")
