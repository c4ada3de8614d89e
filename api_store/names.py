"""Name normalisation and content hashing: the two ways the store recognises "the same function".

Agents like to re-propose an existing helper under a cosmetically different name
(`_get_Left_Object`, `get_left_object_`, `_getLeftObject`). Comparing normalised names lets the
store, and the agents, reject such duplicates instead of growing the library with copies.
"""

from __future__ import annotations

import hashlib
import json
import keyword


def normalize_name(name: str) -> str:
    """Lower-case `name` and drop every underscore, so renames by case or underscores collide."""
    return name.replace("_", "").lower()


def check_function_name(name: str) -> None:
    """Raise `ValueError` unless `name` can be defined and called as a Python function."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid Python function name")
    if not normalize_name(name):
        raise ValueError(f"{name!r} has no letters or digits, so it cannot be told apart")


def content_hash(signature: str, docstring: str, code: str | None) -> str:
    """A stable SHA-256 of what a version *says*, used to skip re-recording identical versions."""
    payload = json.dumps([signature, docstring, code], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def prompt_hash(prompt: str) -> str:
    """SHA-256 of a prompt, so attempts can be grouped by prompt without storing prompts twice."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()
