"""Run manifests: what produced a result (git commit, package versions, device, config, time).

Every notebook writes `results/NN_name/manifest.json` through `write_run(...)`, next to its
`config.json` and `metrics.json`, so any number in the README can be traced to a run.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, is_dataclass
from importlib import metadata
from pathlib import Path

from mags_lib.atomic import atomic_path, write_text
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


LAST_COMPLETE = "last_complete"
"""Sub-folder of results/<name>/ that holds the previous complete run while a new one runs."""


class PartialRun:
    """A run whose metrics.json is written again as each part finishes, so a run stopped in a
    long part keeps what it measured (notebook 13: the game, then the conversations, then the
    judged models).

        run = PartialRun("13_test_splits", config={...}, metrics={"smoke": False}, smoke=False)
        run.save({"game": ...})            # or run.save(game=...): merged, written as partial
        run.finish(targets=...)            # the last part: written complete

    Until `finish`, metrics.json carries `"partial": true`, and the last complete run of the
    same folder (every file in it) is kept in `results/<name>/last_complete/`, so a rerun that
    is stopped partway loses nothing that was measured before; `make summary` reports the kept
    run while the newer one is partial. `finish` removes the kept copy.
    """

    def __init__(self, name: str, *, config=None, metrics: dict | None = None, **extra):
        self.name, self.config, self.extra = name, config, extra
        self.metrics: dict = dict(metrics or {})
        self.kept = keep_last_complete(results_dir(name))

    def save(self, part: dict | None = None, **more) -> Path:
        self.metrics.update(part or {}, **more)
        return write_run(self.name, config=self.config,
                         metrics={**self.metrics, "partial": True}, **self.extra)

    def finish(self, part: dict | None = None, **more) -> Path:
        self.metrics.update(part or {}, **more)
        self.metrics.pop("partial", None)
        out = write_run(self.name, config=self.config, metrics=self.metrics, **self.extra)
        shutil.rmtree(out / LAST_COMPLETE, ignore_errors=True)
        return out


def is_partial(metrics) -> bool:
    """Whether a metrics.json (parsed) was written by a run that has not finished."""
    return isinstance(metrics, dict) and bool(metrics.get("partial"))


def keep_last_complete(folder: Path) -> Path | None:
    """Copy a finished run in `folder` (metrics.json without `partial`) to
    `folder/last_complete/` before a new run overwrites it; returns that copy, or None where
    there is no finished run to keep. Where the run in `folder` is partial (an earlier rerun
    stopped), the copy kept then stays as it is."""
    kept = folder / LAST_COMPLETE
    try:
        metrics = json.loads((folder / "metrics.json").read_text())
    except (OSError, ValueError):
        return kept if kept.is_dir() else None
    if is_partial(metrics):
        return kept if kept.is_dir() else None
    with atomic_path(kept) as tmp:
        shutil.copytree(folder, tmp, ignore=lambda d, names: [
            n for n in names if Path(d) == folder and (n == LAST_COMPLETE or n.startswith("."))])
    return kept
