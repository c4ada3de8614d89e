"""`hasattr` in a program answers False where `getattr` refuses an attribute, as Python's
`hasattr` does for a missing one, instead of raising."""

from __future__ import annotations

import pytest

from vadar.sandbox import execute


@pytest.mark.parametrize("expression, expected", [
    ("hasattr('', 'format')", False), ("hasattr('', 'format_map')", False), ("hasattr(str, 'format')", False),
    ("hasattr([], 'mro')", False), ("hasattr('', 'upper')", True), ("hasattr(3, 'nothing')", False),
    ("hasattr([1], 'append')", True),
])
def test_hasattr_answers_instead_of_raising(expression, expected):
    result = execute(f"final_result = {expression}", {}, timeout_s=10, memory_mb=256)
    assert result.error is None and result.value is expected


def test_getattr_still_refuses_str_format():
    result = execute("final_result = getattr('', 'format')", {}, timeout_s=10, memory_mb=256)
    assert result.error is not None and "format" in result.error


@pytest.mark.parametrize("expression", [
    "getattr(1, '__class__', 'default')", "getattr('', 'format', 'default')",
    "getattr([], 'mro', 'default')", "getattr(3, 'nothing', 'default')",
])
def test_getattr_with_a_default_returns_it_for_a_refused_attribute(expression):
    """Python's `getattr` returns its default for a missing attribute; a refused one is missing."""
    result = execute(f"final_result = {expression}", {}, timeout_s=10, memory_mb=256)
    assert result.error is None and result.value == "default"


def test_getattr_with_a_default_still_returns_an_allowed_attribute():
    result = execute("final_result = getattr('ab', 'upper', None)()", {}, timeout_s=10, memory_mb=256)
    assert result.error is None and result.value == "AB"
