"""Any OpenAI-compatible HTTP endpoint: vLLM, Ollama, llama.cpp's server, hosted APIs.

Uses ``/v1/completions`` for raw prompts and ``/v1/chat/completions`` for message lists. One request per sample
(with seed ``seed + i``), which every server supports; servers with prefix caching (vLLM, llama.cpp) reuse the
shared few-shot prefix on their side. ``top_k`` is sent as an extra field, which vLLM and llama.cpp honour.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, CounterfairError
from .base import Completion, Message, SamplingParams


class LLMServerError(CounterfairError):
    """The LLM server is down, too slow, or answered something that is not a completion."""


class OpenAIHTTPLLM:
    """Client for an OpenAI-compatible server at ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str = "default",
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 2,
        context: int = 4096,
    ) -> None:
        base = base_url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"LLM endpoint {base_url!r} must start with http:// or https://")
        self.base_url = base if base.endswith("/v1") else f"{base}/v1"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = timeout
        self.retries = retries
        self.context = context

    @property
    def model_id(self) -> str:
        return f"{self.model}@{self.base_url}"

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = f"{self.base_url}{path}"
        last = ""
        for attempt in range(self.retries + 1):
            try:
                response = httpx.post(url, json=payload, headers=headers, timeout=self.timeout)
            except httpx.TimeoutException:
                last = f"no answer within {self.timeout:.0f} s"
            except httpx.HTTPError as err:
                last = f"cannot connect ({type(err).__name__}: {err})"
            else:
                if response.status_code < 500:
                    if response.status_code >= 400:
                        raise LLMServerError(
                            f"LLM server {url} answered HTTP {response.status_code}: {response.text[:300]}"
                        )
                    try:
                        data = response.json()
                    except ValueError:
                        raise LLMServerError(
                            f"LLM server {url} answered something that is not JSON: {response.text[:200]!r}"
                        ) from None
                    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
                        raise LLMServerError(f"LLM server {url} answered JSON without 'choices': {str(data)[:200]}")
                    return data
                last = f"HTTP {response.status_code}: {response.text[:200]}"
            if attempt < self.retries:
                time.sleep(min(1.0 * 2**attempt, 8.0))
        raise LLMServerError(f"LLM server {url} failed after {self.retries + 1} tries: {last}")

    def _payload(self, params: SamplingParams, seed: int | None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": params.temperature,
            "top_k": params.top_k,
            "top_p": 1.0,
            "max_tokens": params.max_tokens,
        }
        if seed is not None:
            payload["seed"] = seed
        if params.stop:
            payload["stop"] = list(params.stop)
        return payload

    @staticmethod
    def _choice(data: dict[str, Any], key: str) -> Completion:
        choice = data["choices"][0]
        text = choice.get("text") if key == "text" else (choice.get("message") or {}).get("content")
        if not isinstance(text, str):
            raise LLMServerError(f"LLM server answered a choice without {key!r}: {str(choice)[:200]}")
        return Completion(text, str(choice.get("finish_reason") or "stop"))

    def complete(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        out = []
        for prompt in prompts:
            samples = []
            for i in range(params.n):
                seed = None if params.seed is None else params.seed + i
                data = self._post("/completions", {**self._payload(params, seed), "prompt": prompt})
                samples.append(self._choice(data, "text"))
            out.append(samples)
        return out

    def chat(self, conversations: Sequence[Sequence[Message]], params: SamplingParams) -> list[list[Completion]]:
        out = []
        for messages in conversations:
            samples = []
            for i in range(params.n):
                seed = None if params.seed is None else params.seed + i
                data = self._post("/chat/completions", {**self._payload(params, seed), "messages": list(messages)})
                samples.append(self._choice(data, "message"))
            out.append(samples)
        return out

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)  # a server does not share its tokenizer; ~4 characters per token

    def context_size(self) -> int:
        return self.context

    def info(self) -> dict[str, Any]:
        return {"backend": "openai-http", "base_url": self.base_url, "model": self.model}


__all__ = ["LLMServerError", "OpenAIHTTPLLM"]
