"""Shared fixtures. Everything runs offline: the hub is never contacted."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Each test gets its own generation cache, so no test sees another's answers."""
    monkeypatch.setattr("mags_lib.paths.LLM_CACHE_PATH", tmp_path / "llm_cache.sqlite")


@pytest.fixture(scope="session")
def embedded_llm():
    """The embedded SmolLM2-135M GGUF under llama.cpp, uncached, loaded once per session."""
    from mags_lib.llm import LLMConfig, load_llm

    return load_llm(LLMConfig(model="embedded", cache=False, n_ctx=1024))
