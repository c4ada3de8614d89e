"""Loading models once per process, on the right device and dtype, with errors a user can act on.

`from_pretrained` failures (no network, wrong id, missing files, missing packages) are turned
into one `ModelWeightsError` naming the model, the setting that chose it and how to provide the
weights, instead of a stack trace of hub internals.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from base_modules.module import ModuleError, resolve_device
from base_modules.real.config import TORCH_DTYPES, RealModulesConfig, setting_name

T = TypeVar("T")

_MODELS: dict[tuple[Any, ...], Any] = {}
_LOCK = threading.Lock()


class ModelWeightsError(ModuleError):
    """A model's weights (or the package that runs it) cannot be found; says how to provide them."""


def shared_model(key: tuple[Any, ...], factory: Callable[[], T]) -> T:
    """One instance per key in this process: building a module set twice loads nothing twice."""
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = factory()
        return _MODELS[key]


def forget_models() -> None:
    """Drop every shared model (tests; freeing GPU memory)."""
    with _LOCK:
        _MODELS.clear()


def torch_device(config: RealModulesConfig) -> str:
    return resolve_device(config.device)


def torch_dtype(config: RealModulesConfig, device: str) -> Any:
    """fp16 on GPU by default (half the memory, faster), fp32 on CPU (fp16 kernels are slow there)."""
    import torch

    if config.dtype not in TORCH_DTYPES:
        raise ModuleError(f"dtype must be one of {', '.join(TORCH_DTYPES)}, got {config.dtype!r}")
    if config.dtype == "auto":
        return torch.float16 if device.startswith("cuda") else torch.float32
    return getattr(torch, config.dtype)


class TransformersBackend:
    """A transformers model and its processor, loaded on first use and shared per process.

    Every transformers backend resolves device and dtype, loads through `load_pretrained` and
    shares one (model, processor) pair per key the same way; a subclass says which setting names
    its model and builds the pair in `build`.
    """

    setting: ClassVar[str]
    """The `RealModulesConfig` field holding the model id or path, e.g. "depth_model"."""
    kind: ClassVar[str]
    """First element of the sharing key, so backends with the same model id stay apart."""

    def __init__(self, config: RealModulesConfig) -> None:
        self.config = config
        self.model: Any = None
        self.processor: Any = None

    @property
    def model_id(self) -> str:
        return getattr(self.config, self.setting)

    def load(self) -> None:
        if self.model is not None:
            return
        import transformers as tf

        device = torch_device(self.config)
        dtype = torch_dtype(self.config, device)
        key = (self.kind, self.model_id, device, str(dtype))
        self.model, self.processor = shared_model(key, lambda: self.build(tf, device, dtype))

    def build(self, tf: Any, device: str, dtype: Any) -> tuple[Any, Any]:
        """(model on `device` in eval mode, processor); `tf` is the transformers module."""
        raise NotImplementedError

    def pretrained(self, load: Callable[..., T], **kwargs: Any) -> T:
        """`load_pretrained` for this backend's model and setting."""
        return load_pretrained(load, self.model_id, setting=setting_name(self.setting),
                               config=self.config, **kwargs)


def looks_local(model: str) -> bool:
    """A setting that is meant as a path (absolute, relative, home) rather than a hub id."""
    return model.startswith(("/", "./", "../", "~")) or Path(model).expanduser().exists()


def require_package(package: str, install: str, setting: str) -> None:
    if importlib.util.find_spec(package) is None:
        raise ModelWeightsError(f"{setting} needs the '{package}' package, which is not installed. "
                                f"Install it with: {install}")


def package_model(config: RealModulesConfig, package: str, install: str, backend_setting: str,
                  model_setting: str, model_class: Callable[[], Any]) -> Any:
    """A model from an optional package (UniDepth, VGGT): checked installed, loaded with the
    class's `from_pretrained` from the id or path `model_setting` holds, shared per process."""
    require_package(package, install, setting_name(backend_setting))
    device, model_id = torch_device(config), getattr(config, model_setting)

    def build() -> Any:
        model = load_pretrained(model_class().from_pretrained, model_id, setting=setting_name(model_setting),
                                config=config)
        return model.to(device).eval()

    return shared_model((package, model_id, device), build)


def load_pretrained(load: Callable[..., T], model: str, *, setting: str, config: RealModulesConfig,
                    **kwargs: Any) -> T:
    """Call `load(model, ...)` (a `from_pretrained`), re-raising failures as `ModelWeightsError`."""
    if looks_local(model):
        path = Path(model).expanduser()
        if not path.exists():
            raise ModelWeightsError(
                f"{setting}: local model path {path} does not exist. Point {setting} at a directory "
                "saved with save_pretrained (config.json plus weights), or at a Hugging Face model id."
            )
        model = str(path)
    unreachable = False
    if not looks_local(model) and not config.offline and not hub_reachable():
        unreachable = True  # use the local cache only, instead of minutes of hub retries
    if config.offline or unreachable:
        kwargs.setdefault("local_files_only", True)
    if config.hf_cache_dir is not None:
        kwargs.setdefault("cache_dir", str(config.hf_cache_dir))
    try:
        return load(model, **kwargs)
    except (OSError, ValueError, KeyError, ImportError) as exc:
        cause = OSError(f"the Hugging Face hub ({hub_host()}) cannot be reached and the model is not cached") \
            if unreachable else exc
        raise ModelWeightsError(weights_hint(model, setting, cause)) from None


def hub_host() -> str:
    from urllib.parse import urlparse

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    return urlparse(endpoint).hostname or "huggingface.co"


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the hub answers at all, so an offline machine fails in seconds, not minutes."""
    try:
        with socket.create_connection((hub_host(), 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def weights_hint(model: str, setting: str, exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    reason = first_line if len(first_line) <= 200 else first_line[:200].rsplit(" ", 1)[0] + " ..."
    return (
        f"cannot load model '{model}' (setting {setting}): {reason.rstrip('.')}. "
        f"Provide the weights in one of these ways: download them where there is network "
        f"(`huggingface-cli download {model} --local-dir DIR`) and set {setting} to DIR; or fill "
        f"the Hugging Face cache (HF_HOME) and run offline (HF_HUB_OFFLINE=1). "
        f"See docs/real-modules.md."
    )
