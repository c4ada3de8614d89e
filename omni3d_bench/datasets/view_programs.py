"""Gold programs for the multi-view question families, written against the modules.

Each family's program is Python source for the sandbox, filled in with the phrases the question
names objects by (`Question.metadata["phrases"]`). Run on the oracle modules they must reproduce
every gold answer: that checks generator, modules and metric against each other.
"""

from __future__ import annotations

from omni3d_bench.types import Question

DISTANCE = "(({a}[0] - {b}[0]) ** 2 + ({a}[1] - {b}[1]) ** 2 + ({a}[2] - {b}[2]) ** 2) ** 0.5"

PROGRAMS: dict[str, str] = {
    "object_count": """
found = []
for view in views:
    for box in loc(view, {0!r}):
        if not any(same_object_across(view, box, v, b) for v, b in found):
            found.append((view, box))
final_result = len(found)
""",
    "abs_distance": f"""
a = objects_3d(views, {{0!r}})[0]["center"]
b = objects_3d(views, {{1!r}})[0]["center"]
final_result = {DISTANCE.format(a="a", b="b")}
""",
    "object_size": """
final_result = max(objects_3d(views, {0!r})[0]["size"])
""",
    "room_size": """
room = room_layout(views)
final_result = room["width"] * room["length"]
""",
    "relative_distance": f"""
ref = objects_3d(views, {{0!r}})[0]["center"]
best = None
for name in [{{1!r}}, {{2!r}}, {{3!r}}]:
    c = objects_3d(views, name)[0]["center"]
    d = {DISTANCE.format(a="c", b="ref")}
    if best is None or d < best[0]:
        best = (d, name)
final_result = best[1]
""",
    "relative_direction": """
x = objects_3d(views, {0!r})[0]["center"]
y = objects_3d(views, {1!r})[0]["center"]
z = objects_3d(views, {2!r})[0]["center"]
fx, fy = y[0] - x[0], y[1] - x[1]
vx, vy = z[0] - x[0], z[1] - x[1]
angle = math.degrees(math.atan2(fx * vy - fy * vx, fx * vx + fy * vy))
if abs(angle) > 135:
    final_result = "behind"
elif angle > 0:
    final_result = "left"
else:
    final_result = "right"
""",
    "appearance_order": """
first = []
for name in [{0!r}, {1!r}, {2!r}]:
    for index, view in enumerate(views):
        if loc(view, name):
            first.append((index, name))
            break
final_result = min(first)[1]
""",
}


def view_gold_program(question: Question) -> str | None:
    """The gold program of a multi-view question, or None for a family without one."""
    family = question.metadata.get("family")
    if family not in PROGRAMS:
        return None
    return PROGRAMS[family].format(*question.metadata.get("phrases") or []).lstrip()
