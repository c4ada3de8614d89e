"""One-line error text and display rounding, and the one-line hint for a missing optional extra."""

from vadar.cli.errors import missing_extra
from vadar.text import one_line, rounded


def test_clip_never_cuts_a_token():
    text = "no working implementation after 5 attempts; last error: loc(image, 'red cube') failed"
    short = one_line(text, 60)
    assert len(short) <= 60 and short.endswith(" …")
    kept = short.removesuffix(" …")
    assert text.startswith(kept) and text[len(kept)] == " "  # cut at a space, not inside a word
    assert one_line("x" * 90 + " tail", 20) == "x" * 90 + " …"  # one long token stays whole
    assert one_line("short\n  text", 60) == "short text"


def test_rounded_walks_containers_and_leaves_the_rest():
    value = {"box": [0.123456789, 2.0000001], "ok": True, "n": 3, "pair": (1.23456, "a")}
    assert rounded(value) == {"box": [0.12, 2.0], "ok": True, "n": 3, "pair": (1.23, "a")}


def test_a_missing_optional_extra_names_the_extra():
    message = missing_extra(ModuleNotFoundError("No module named 'transformers'", name="transformers"))
    assert message is not None and "pip install 'vadar[vision]'" in message
    assert missing_extra(ModuleNotFoundError("x", name="requests_oauthlib")) is None


def test_user_errors_prints_one_line_for_a_missing_extra():
    import io

    import pytest
    import typer
    from rich.console import Console

    from vadar.cli.errors import user_errors

    out = io.StringIO()
    with pytest.raises(typer.Exit) as exit_info, user_errors(Console(file=out, width=200)):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    assert exit_info.value.exit_code == 1
    assert out.getvalue().strip().splitlines() == [
        "Error: this needs the optional 'vision' extra (module 'torch' is not installed): pip install "
        "'vadar[vision]'"]
