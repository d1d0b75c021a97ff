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


# Peak use of the temporary folder by one run of the suite: 7.1 GB (sampled every 15 s in the
# clean-clone CI of 2026-11-26 17:10, commit 616c766), with room to spare.
NEEDED_TMP_GB = 10.0


def pytest_sessionstart(session):
    """Stop at once, with the cause and the fix, when the temporary folder's disk is nearly full.

    Without this the suite runs for twenty minutes and then fails in whichever test first saves
    a model, with a bare `No space left on device` from safetensors.
    """
    import shutil
    import tempfile
    from pathlib import Path

    base = Path(session.config.option.basetemp or tempfile.gettempdir()).resolve()
    while not base.exists():  # --basetemp may name a folder pytest has yet to make
        base = base.parent
    free_gb = shutil.disk_usage(base).free / 1e9
    if free_gb < NEEDED_TMP_GB:
        pytest.exit(
            f"only {free_gb:.1f} GB free on the disk of {base}; the test suite needs about "
            f"{NEEDED_TMP_GB:.0f} GB there (it saves merged models). Free space (old "
            "pytest-of-* folders under the temporary directory, stale clones) or point "
            "pytest elsewhere with --basetemp=/a/folder/with/room.",
            returncode=3,
        )
