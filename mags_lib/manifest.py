"""Run manifests: what produced a result (git commit, package versions, device, config, time).

Every notebook writes `results/NN_name/manifest.json` through `write_run(...)`, next to its
`config.json` and `metrics.json`, so any number in the README can be traced to a run.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, is_dataclass
from importlib import metadata
from pathlib import Path

from mags_lib.atomic import write_text
from mags_lib.paths import PROJ_ROOT, results_dir

_PACKAGES = ("numpy", "networkx", "torch", "transformers", "trl", "peft", "llama_cpp_python",
             "sentence-transformers", "usearch", "papermill")


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJ_ROOT, capture_output=True,
                             text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=PROJ_ROOT,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "") if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def device_info() -> dict:
    info = {"platform": platform.platform(), "python": sys.version.split()[0],
            "cpu_count": os.cpu_count(), "cuda": None}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        info["cuda"] = torch.cuda.get_device_name(0)
    return info


def manifest(config=None, **extra) -> dict:
    cfg = asdict(config) if is_dataclass(config) else config
    return {"git_commit": git_commit(), "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "versions": versions(), "device": device_info(), "config": cfg, **extra}


def write_json(path: Path, obj) -> Path:
    """Atomic JSON write (temp file, then rename)."""
    return write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str))


def write_run(name: str, *, config=None, metrics: dict | None = None, **extra) -> Path:
    """Write config.json, metrics.json and manifest.json under results/<name>/."""
    out = results_dir(name)
    if config is not None:
        write_json(out / "config.json", asdict(config) if is_dataclass(config) else config)
    if metrics is not None:
        write_json(out / "metrics.json", metrics)
    write_json(out / "manifest.json", manifest(config, **extra))
    return out


class PartialRun:
    """A run whose metrics.json is written again as each part finishes, so a run stopped in a
    long part keeps what it measured (notebook 13: the game, then the conversations, then the
    judged models).

        run = PartialRun("13_test_splits", config={...}, metrics={"smoke": False}, smoke=False)
        run.save({"game": ...})            # or run.save(game=...): merged, then written
    """

    def __init__(self, name: str, *, config=None, metrics: dict | None = None, **extra):
        self.name, self.config, self.extra = name, config, extra
        self.metrics: dict = dict(metrics or {})

    def save(self, part: dict | None = None, **more) -> Path:
        self.metrics.update(part or {}, **more)
        return write_run(self.name, config=self.config, metrics=self.metrics, **self.extra)
