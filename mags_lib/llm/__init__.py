"""LLM backends behind one interface: `load_llm(config).chat(messages, grammar=..., ...)`.

- llama.cpp for GGUF files (default: the embedded SmolLM2-135M-Instruct), `llamacpp.py`
- transformers/torch for checkpoints, hub ids and LoRA adapters, `hf.py`
- OpenAI-compatible HTTP (vLLM, llama.cpp server, cloud API), `http.py`
Every backend is wrapped in a SQLite generation cache unless `LLMConfig.cache=False`.
Try it: `python -m mags_lib.llm --demo`.
"""

from __future__ import annotations

from mags_lib.errors import MagsError
from mags_lib.llm.base import ChatLLM, Completion, LLMConfig, Message

__all__ = ["ChatLLM", "Completion", "LLMConfig", "Message", "load_llm"]

_BACKENDS = ("auto", "llamacpp", "transformers", "openai")


def load_llm(config: LLMConfig | None = None, **overrides) -> ChatLLM:
    """Build the backend the config names (`LLMConfig(**overrides)` if no config is given)."""
    from dataclasses import replace

    config = replace(config, **overrides) if config else LLMConfig(**overrides)
    if config.backend not in _BACKENDS:
        raise MagsError(f"unknown LLM backend {config.backend!r}",
                        f"use one of {', '.join(_BACKENDS)}")
    if config.backend == "openai":
        from mags_lib.llm.http import OpenAICompatibleLLM

        llm: ChatLLM = OpenAICompatibleLLM(config)
    else:
        from mags_lib.models import resolve_model, torch_checkpoint

        kind, where = resolve_model(config.model)
        backend = config.backend
        if backend == "auto":
            backend = "llamacpp" if kind == "gguf" else "transformers"
        if backend == "llamacpp":
            if kind != "gguf":
                raise MagsError(f"the llama.cpp backend needs a .gguf file, got {config.model!r}",
                                "export the model to GGUF (notebook 04) or use "
                                "backend='transformers'")
            from mags_lib.llm.llamacpp import LlamaCppLLM

            llm = LlamaCppLLM(where, config)
        else:
            from mags_lib.llm.hf import TransformersLLM

            path = torch_checkpoint(config.model) if kind == "gguf" else where
            llm = TransformersLLM(path, config)
    if config.cache:
        from mags_lib.llm.cache import CachedLLM, GenerationCache
        from mags_lib.paths import LLM_CACHE_PATH

        llm = CachedLLM(llm, GenerationCache(config.cache_path or LLM_CACHE_PATH))
    return llm
