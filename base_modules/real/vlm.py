"""VQA with a vision-language model: the image with the object's box drawn, one short answer.

The `openai` backend sends the image as a base64 data URL to any OpenAI-compatible endpoint
(GPT-4o, a vLLM-served VLM); the `transformers` backend runs a local image-text-to-text model.
"""

from __future__ import annotations

import base64
import io
import os
import re
from typing import Any

import numpy as np

from base_modules.module import ModuleError
from base_modules.real.config import RealModulesConfig, setting_name
from base_modules.real.loading import TransformersBackend

PROMPT = (
    "The object in question is marked with a red box in the image. {question}\n"
    "Answer with a single word or a short phrase in lower case, with no explanation."
)
_ARTICLES = re.compile(r"^(?:the |a |an |it is |it's |this is |this object is |the object is )+")


def draw_box(pixels: Any, box: np.ndarray, width: int = 0) -> Any:
    """A copy of the image with `box` outlined in red (width scaled to the image when 0)."""
    from PIL import ImageDraw

    marked = pixels.convert("RGB").copy()
    width = width or max(2, round(max(marked.size) / 200))
    ImageDraw.Draw(marked).rectangle([float(v) for v in box], outline=(255, 0, 0), width=width)
    return marked


def data_url(pixels: Any, quality: int = 90) -> str:
    buffer = io.BytesIO()
    pixels.save(buffer, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def normalise_answer(text: str | None) -> str:
    """First line, lower case, no quotes, articles or trailing punctuation; 'Yes, it is.' -> 'yes'."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    line = line.strip().strip("\"'`*").strip().lower()
    line = re.sub(r"^answer\s*:\s*", "", line)
    line = _ARTICLES.sub("", line).strip()
    first = re.split(r"[\s,.;:!]+", line, maxsplit=1)[0] if line else ""
    if first in ("yes", "no"):
        return first
    return re.sub(r"[\s.!;:,]+$", "", line)


def vqa_prompt(question: str) -> str:
    return PROMPT.format(question=question.strip())


class OpenAIVLM:
    """Chat completions with an image part; `client` may be injected (tests, shared connections)."""

    def __init__(self, config: RealModulesConfig, client: Any = None) -> None:
        self.config = config
        self.client = client

    def load(self) -> None:
        if self.client is not None:
            return
        import openai

        cfg = self.config
        key = cfg.vqa_api_key or os.environ.get("OPENAI_API_KEY") or "sk-no-key-needed"
        self.client = openai.OpenAI(base_url=cfg.vqa_base_url, api_key=key, timeout=cfg.vqa_timeout_s,
                                    max_retries=2)

    def answer(self, marked: Any, question: str) -> str:
        import openai

        self.load()
        content = [{"type": "text", "text": vqa_prompt(question)},
                   {"type": "image_url", "image_url": {"url": data_url(marked)}}]
        try:
            response = self.client.chat.completions.create(
                model=self.config.vqa_model, messages=[{"role": "user", "content": content}],
                max_tokens=self.config.vqa_max_tokens, temperature=0.0,
            )
        except openai.OpenAIError as exc:
            where = self.config.vqa_base_url or "the OpenAI API"
            raise ModuleError(
                f"vqa: the vision-language model '{self.config.vqa_model}' at {where} failed: "
                f"{type(exc).__name__}: {str(exc)[:200]}. Check {setting_name('vqa_base_url')}, "
                f"{setting_name('vqa_model')} and {setting_name('vqa_api_key')}."
            ) from None
        return normalise_answer(response.choices[0].message.content if response.choices else "")


class TransformersVLM(TransformersBackend):
    """A local image-text-to-text model (e.g. Qwen2.5-VL) through its processor's chat template."""

    setting = "vqa_local_model"
    kind = "vlm"

    def build(self, tf: Any, device: str, dtype: Any) -> tuple[Any, Any]:
        processor = self.pretrained(tf.AutoProcessor.from_pretrained)
        model = self.pretrained(tf.AutoModelForImageTextToText.from_pretrained, dtype=dtype)
        return model.to(device).eval(), processor

    def answer(self, marked: Any, question: str) -> str:
        import torch

        self.load()
        messages = [{"role": "user", "content": [{"type": "image", "image": marked},
                                                 {"type": "text", "text": vqa_prompt(question)}]}]
        inputs = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                    return_dict=True, return_tensors="pt")
        inputs = inputs.to(self.model.device)
        with torch.inference_mode():
            output = self.model.generate(**inputs, max_new_tokens=self.config.vqa_max_tokens, do_sample=False)
        new_tokens = output[0, inputs["input_ids"].shape[1]:]
        return normalise_answer(self.processor.decode(new_tokens, skip_special_tokens=True))


def build_vlm(config: RealModulesConfig, client: Any = None) -> OpenAIVLM | TransformersVLM:
    if config.vqa_backend == "openai":
        return OpenAIVLM(config, client)
    if config.vqa_backend == "transformers":
        return TransformersVLM(config)
    raise ModuleError(f"{setting_name('vqa_backend')}: unknown backend {config.vqa_backend!r}; "
                      "choose openai or transformers")
