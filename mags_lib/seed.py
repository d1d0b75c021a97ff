"""`seed_everything(seed)`: the one place that seeds Python, NumPy and (if loaded) torch."""

from __future__ import annotations

import os
import random
import sys

import numpy as np


def seed_everything(seed: int) -> None:
    """Seed every random generator in use. torch is seeded only if it is already imported,
    so calling this never pulls torch into a process that does not need it."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    os.environ["PYTHONHASHSEED"] = str(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
