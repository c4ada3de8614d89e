"""`vadar library add` holds hand-written helpers to the helper rules: one line naming the helper
and the rule, and nothing is added."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from api_store import ApiStore
from vadar.cli import app
from vadar.programs.helper_rules import MAX_CODE_CHARS, MAX_DOCSTRING_CHARS

GOOD = 'def _twice(x):\n    """Twice x."""\n    return 2 * x\n'


def _add(tmp_path: Path, source: str | bytes):
    path = tmp_path / "helpers.py"
    path.write_bytes(source if isinstance(source, bytes) else source.encode())
    db = tmp_path / "lib.sqlite"
    result = CliRunner().invoke(app, ["library", "add", str(path), "--db", str(db)])
    with ApiStore(db) as store:
        names = [f.name for f in store.functions(include_failed=True)]
    return result, names


@pytest.mark.parametrize("name, why", [
    ("loc", "the name of a module"), ("same_object", "the name of a module"), ("len", "Python built-in"),
    ("print", "Python built-in"), ("image", "namespace binds"), ("_getattr_", "the sandbox reserves"),
    ("_print_", "the sandbox reserves"), ("_tmp1", "the sandbox reserves"), ("helper", "exactly one underscore"),
])
def test_a_helper_named_after_something_programs_need_is_refused(tmp_path, name, why):
    result, names = _add(tmp_path, GOOD + f'\n\ndef {name}(x):\n    """Doc."""\n    return x\n')
    assert result.exit_code == 2 and names == []
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: line 6: ") and why in line


@pytest.mark.parametrize("body, why", [
    ("return ().__class__", "breaks the sandbox policy"),
    ("return x._secret", "breaks the sandbox policy"),
    ("return x + len('" + "x" * MAX_CODE_CHARS + "')", "its code has"),
])
def test_a_helper_that_would_fail_every_program_is_refused(tmp_path, body, why):
    result, names = _add(tmp_path, f'def _h(x):\n    """Doc."""\n    {body}\n')
    assert result.exit_code == 2 and names == []
    assert why in result.output and len(result.output.strip().splitlines()) == 1


def test_a_huge_docstring_is_refused(tmp_path):
    result, names = _add(tmp_path, 'def _h(x):\n    """' + "Doc. " * MAX_DOCSTRING_CHARS + '"""\n    return x\n')
    assert result.exit_code == 2 and names == []
    assert "its docstring has 10,000 characters, more than the 2,000 allowed" in result.output


@pytest.mark.parametrize("source, why", [(b"def _h(x):\n    '''\xff'''\n    return x\n", "is not UTF-8 text"),
                                         ("def _h(x):\n    return x\n\x00", "null bytes")])
def test_a_file_that_is_not_python_text_is_one_line(tmp_path, source, why):
    result, names = _add(tmp_path, source)
    assert result.exit_code == 2 and names == [] and why in result.output
    assert "Traceback" not in result.output


def test_good_helpers_are_added(tmp_path):
    result, names = _add(tmp_path, GOOD)
    assert result.exit_code == 0, result.output
    assert names == ["_twice"]
