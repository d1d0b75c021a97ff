"""OpenAI-compatible HTTP backend: a vLLM server, a llama.cpp server, or a cloud API.

Standard library only (urllib). The API key comes from the environment variable named in
`LLMConfig.api_key_env`; it is required only for non-local endpoints. A GBNF grammar is sent in
the field `LLMConfig.grammar_field` ('grammar' for llama.cpp's server, 'guided_grammar' for vLLM).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from urllib.parse import urlparse

from mags_lib.errors import BackendUnavailableError, MagsError
from mags_lib.llm.base import Completion, LLMConfig, Message

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


class OpenAICompatibleLLM:
    """Chat and completions over an OpenAI-compatible REST API."""

    def __init__(self, config: LLMConfig):
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        host = urlparse(self.base_url).hostname or ""
        self.api_key = os.environ.get(config.api_key_env, "")
        if not self.api_key and host not in _LOCAL_HOSTS:
            raise BackendUnavailableError(
                f"no API key for {self.base_url}: the environment variable "
                f"{config.api_key_env} is not set",
                f"export {config.api_key_env}=... (never put keys in configs or notebooks), or "
                "use a local server / model='embedded'",
            )
        self.name = f"openai:{self.base_url}:{config.model}"

    def _post(self, route: str, body: dict) -> dict:
        with self._open(route, body) as resp:
            try:
                return json.loads(resp.read().decode())
            except json.JSONDecodeError as exc:
                raise BackendUnavailableError(
                    f"{self.base_url}{route} did not answer JSON ({exc})",
                    "check that base_url points at an OpenAI-compatible /v1 endpoint",
                ) from exc

    def _open(self, route: str, body: dict):
        """The open HTTP response of a POST; every failure as a BackendUnavailableError."""
        req = urllib.request.Request(
            self.base_url + route,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json",
                     **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})},
        )
        try:
            return urllib.request.urlopen(req, timeout=self.config.timeout_s)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            fix = ("check the API key" if exc.code in (401, 403) else
                   f"check that the server serves model {self.config.model!r} and accepts this request")
            raise BackendUnavailableError(
                f"{self.base_url}{route} answered HTTP {exc.code}: {detail}", fix
            ) from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise BackendUnavailableError(
                f"cannot reach the LLM server at {self.base_url} ({reason})",
                "start the server (e.g. `vllm serve MODEL` or llama.cpp's `llama-server -m "
                "FILE.gguf`), fix LLMConfig.base_url, or use backend='llamacpp' with "
                "model='embedded' to run offline",
            ) from exc

    def _request(self, route: str, body: dict, grammar: str | None) -> tuple[dict, float]:
        if grammar:
            body[self.config.grammar_field] = grammar
        t0 = time.perf_counter()
        out = self._post(route, body)
        if not out.get("choices"):
            raise MagsError(f"{self.base_url}{route} answered without choices: {str(out)[:200]}",
                            "check the server logs; the model may have failed to load")
        return out, time.perf_counter() - t0

    def chat(self, messages: list[Message], *, grammar: str | None = None, max_tokens: int = 128,
             temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        body = {"model": self.config.model, "messages": messages, "max_tokens": max_tokens,
                "temperature": temperature, "seed": seed}
        if stop:
            body["stop"] = stop
        out, seconds = self._request("/chat/completions", body, grammar)
        choice = out["choices"][0]
        return Completion(text=(choice.get("message") or {}).get("content") or "",
                          usage=out.get("usage") or {}, seconds=seconds,
                          finish_reason=choice.get("finish_reason") or "stop")

    def stream_chat(self, messages: list[Message], *, grammar: str | None = None,
                    max_tokens: int = 128, temperature: float = 0.0, seed: int = 0,
                    stop: list[str] | None = None) -> Iterator[str]:
        """`chat` with `stream: true`: yields the reply's pieces from the server-sent events."""
        body = {"model": self.config.model, "messages": messages, "max_tokens": max_tokens,
                "temperature": temperature, "seed": seed, "stream": True}
        if stop:
            body["stop"] = stop
        if grammar:
            body[self.config.grammar_field] = grammar
        with self._open("/chat/completions", body) as resp:
            for raw in resp:
                line = raw.decode(errors="replace").strip()
                if not line.startswith("data:"):
                    continue
                data = line[len("data:"):].strip()
                if data == "[DONE]":
                    return
                try:
                    choices = json.loads(data).get("choices") or [{}]
                except json.JSONDecodeError as exc:
                    raise BackendUnavailableError(
                        f"{self.base_url}/chat/completions streamed a line that is not JSON: "
                        f"{data[:120]!r}", "check that the server speaks the OpenAI streaming "
                        "protocol, or chat without streaming") from exc
                piece = (choices[0].get("delta") or {}).get("content")
                if piece:
                    yield piece

    def complete(self, prompt: str, *, grammar: str | None = None, max_tokens: int = 128,
                 temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        body = {"model": self.config.model, "prompt": prompt, "max_tokens": max_tokens,
                "temperature": temperature, "seed": seed}
        if stop:
            body["stop"] = stop
        out, seconds = self._request("/completions", body, grammar)
        choice = out["choices"][0]
        return Completion(text=choice.get("text") or "", usage=out.get("usage") or {},
                          seconds=seconds, finish_reason=choice.get("finish_reason") or "stop")
