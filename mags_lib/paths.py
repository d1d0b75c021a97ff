"""Every path the project uses, from one place (cookiecutter-data-science style).

`MAGS_ROOT` in the environment moves the whole working tree (data, models, results, cache);
by default it is the repository that holds this package.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJ_ROOT = Path(os.environ.get("MAGS_ROOT", Path(__file__).resolve().parents[1]))
DATA_DIR = PROJ_ROOT / "data"
SEED_DATA_DIR = DATA_DIR / "seed"
SYNTH_DATA_DIR = DATA_DIR / "synth"
MODELS_DIR = PROJ_ROOT / "models"
BASE_MODELS_DIR = MODELS_DIR / "base"
GGUF_DIR = MODELS_DIR / "gguf"  # exported GGUF files (notebook 04)
TRANSFER_MODELS_DIR = MODELS_DIR / "transfer"  # one-sided write models (notebook 14)
SEED_MODELS_DIR = MODELS_DIR / "seeds"  # GRPO models of other seeds (notebook 07), not exported
BANKS_DIR = DATA_DIR / "banks"  # game phrasing banks scored once, never in a dataset (game_bank)
CHAT_DIR = DATA_DIR / "chat"  # the chat's persistent memory (python -m mags_lib chat)
RESULTS_DIR = PROJ_ROOT / "results"
REPORTS_DIR = PROJ_ROOT / "reports"  # generated reports that are committed (make summary)
NOTEBOOKS_DIR = PROJ_ROOT / "notebooks"
CACHE_DIR = Path(os.environ.get("MAGS_CACHE_DIR", PROJ_ROOT / ".cache"))
LLM_CACHE_PATH = CACHE_DIR / "llm_cache.sqlite"
SCREENSHOTS_DIR = RESULTS_DIR / "screenshots"  # browser tests' screenshots


def results_dir(name: str) -> Path:
    """`results/NN_name/`, created on first use."""
    path = RESULTS_DIR / name
    path.mkdir(parents=True, exist_ok=True)
    return path
