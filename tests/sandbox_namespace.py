"""The namespace and host functions that the sandbox tests run programs against."""

from __future__ import annotations

import numpy as np

from base_modules.module import ModuleError
from base_modules.types import Image
from vadar.sandbox import ExecutionResult, Sandbox

IMAGE = Image(image_id="img-1", path="/data/img-1.png", width=640, height=480)


def loc(image: Image, prompt: str) -> list[list[float]]:
    if not isinstance(image, Image):
        raise TypeError(f"expected an Image, got {type(image).__name__}")
    if prompt == "unicorn":
        raise ModuleError("no unicorn in this image")
    return [[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]]


def depth(image: Image, bbox: list[float]) -> np.float32:
    return np.float32(bbox[0] / 10)


def same_object(image: Image, a: list[float], b: list[float]) -> np.bool_:
    return np.bool_(a == b)


def numbers(image: Image) -> dict:
    return {"i": np.int64(7), "arr": np.arange(3), "t": (np.float64(0.5), np.bool_(False))}


NAMESPACE = {"image": IMAGE, "loc": loc, "depth": depth, "same_object": same_object, "numbers": numbers}


def run(sandbox: Sandbox, code: str, namespace: dict | None = None, **limits) -> ExecutionResult:
    return sandbox.execute(code, NAMESPACE if namespace is None else namespace, **limits)
