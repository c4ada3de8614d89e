import numpy as np
import pytest

from vadar.programs.answers import normalize_answer
from vadar.programs.code_extract import NoCodeError, extract_code


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, "yes"),
        (np.bool_(False), "no"),
        (np.int64(3), 3),
        (np.float32(2.5), 2.5),
        (3.0, 3.0),
        (" red ", "red"),
        (np.array([1, 2]), [1, 2]),
        ((1, True), [1, "yes"]),
        (None, None),
    ],
)
def test_normalize_answer(value, expected):
    result = normalize_answer(value)
    assert result == expected
    assert type(result) is type(expected)


def test_extract_fenced_code_with_prose():
    reply = "Here is the program:\n```python\nx = 1\nfinal_result = x\n```\nHope it helps."
    assert extract_code(reply) == "x = 1\nfinal_result = x\n"


def test_extract_unclosed_fence_and_bare_code():
    assert extract_code("```python\nfinal_result = 2\n") == "final_result = 2\n"
    assert extract_code("final_result = 3") == "final_result = 3\n"


def test_extract_empty_reply_raises():
    with pytest.raises(NoCodeError):
        extract_code("```python\n```")
