"""Decoding what a program sends back (its answer, module-call arguments) counts against its time
limit: values sharing one hash cost quadratic time to put into a set or dict."""

from __future__ import annotations

import time

import pytest

from sandbox_namespace import NAMESPACE
from vadar.sandbox import Sandbox
from vadar.sandbox.codec import DecodeTimeout, decode, encode

COLLIDING = "p = 2**61 - 1\ns = {k * p for k in range(8000)}\n"  # built in about 0.4 s
LIMIT_S = 2.0


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


@pytest.mark.parametrize("program", [
    COLLIDING + "final_result = [s] * 30",
    COLLIDING + "final_result = [frozenset(s)] * 30",
    COLLIDING + "d = {k: 1 for k in s}\nfinal_result = [d] * 30",
], ids=["sets", "frozensets", "dict keys"])
def test_a_slow_to_decode_answer_times_out_within_the_limit(sandbox, program):
    started = time.monotonic()
    result = sandbox.execute(program, NAMESPACE, timeout_s=LIMIT_S)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.value is None and not result.has_final_result
    assert result.error == f"TimeoutError: program exceeded the {LIMIT_S:g} s time limit"
    assert elapsed < LIMIT_S + 2.0
    assert sandbox.execute("final_result = 1", NAMESPACE, timeout_s=LIMIT_S).value == 1  # fresh worker


@pytest.mark.parametrize("call", ["loc(image, [s] * 20)", "loc(image, prompt=[{k: 1 for k in s}] * 20)",
                                  "loc(image, [frozenset(s)] * 20)"])
def test_a_slow_to_decode_module_argument_times_out_within_the_limit(sandbox, call):
    started = time.monotonic()
    result = sandbox.execute(COLLIDING + call + "\nfinal_result = 1", NAMESPACE, timeout_s=LIMIT_S)
    assert result.timed_out and time.monotonic() - started < LIMIT_S + 2.0


def test_decode_reads_the_clock_inside_sets_and_dicts():
    tree = encode({k * (2**61 - 1) for k in range(200)}, lambda cls: None)
    assert len(decode(tree, lambda k, v: None)) == 200
    with pytest.raises(DecodeTimeout):
        decode(tree, lambda k, v: None, deadline=time.monotonic() - 1)
    pairs = encode({"a": {1: 2}}, lambda cls: None)
    with pytest.raises(DecodeTimeout):
        decode(pairs, lambda k, v: None, deadline=time.monotonic() - 1)
    assert decode(pairs, lambda k, v: None, deadline=time.monotonic() + 10) == {"a": {1: 2}}
