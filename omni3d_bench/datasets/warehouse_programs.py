"""Gold programs for the generated warehouse question families, written against `region()` and
the region tools (`distance`, `inside`, `is_left`, `pick_region`).

Each is Python source for the sandbox, filled in with the words the question's record gives
(`Question.metadata["phrases"]`: the counted class, the side asked about, the choice) and the
number of its regions. Run on the oracle modules they must reproduce every gold answer.
"""

from __future__ import annotations

from omni3d_bench.types import Question

PROGRAMS: dict[str, str] = {
    "left_right": """
final_result = "left" if is_left(image, region(0), region(1)) else "right"
""",
    "left_right_yes_no": """
left = is_left(image, region(0), region(1))
final_result = "yes" if left == ({0!r} == "left") else "no"
""",
    "mcq": """
final_result = pick_region(image, [region(k) for k in range({count})], {0!r})
""",
    "region_distance": """
final_result = distance(image, region(0), region(1))
""",
    "count_in_zone": """
final_result = sum(1 for box in loc(image, {0!r}) if inside(image, box, region(0)))
""",
}


def warehouse_gold_program(question: Question) -> str | None:
    """The gold program of a generated warehouse question, or None for another family."""
    family = question.metadata.get("family")
    if family not in PROGRAMS:
        return None
    words = question.metadata.get("phrases") or []
    return PROGRAMS[family].format(*words, count=len(question.regions)).lstrip()
