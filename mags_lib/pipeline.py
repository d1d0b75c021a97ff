"""`python -m mags_lib.pipeline`: run the numbered notebooks in order, headlessly (papermill).

Each `notebooks/NN_name.ipynb` runs with the parameter `SMOKE` injected and its executed copy is
written to `results/NN_name/NN_name.ipynb`; the notebook itself writes its own metrics and
figures there. A failing notebook stops the chain with the notebook's name and cell, and the
results of the notebooks that finished stay on disk. `make reproduce` calls this. `results/pipeline.json` keeps each notebook's latest run (seconds, ok,
SMOKE or not, when).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from mags_lib.manifest import write_json
from mags_lib.paths import NOTEBOOKS_DIR, RESULTS_DIR

_NUMBERED = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")


def notebooks(directory: Path = NOTEBOOKS_DIR, only: list[str] | None = None) -> list[Path]:
    found = sorted(p for p in directory.glob("*.ipynb") if _NUMBERED.match(p.name))
    if only:
        found = [p for p in found if any(p.stem.startswith(o) for o in only)]
    return found


def _record(runs: list[dict], smoke: bool) -> None:
    """Merge these runs into results/pipeline.json (one entry per notebook, the latest run), so
    that running notebooks one at a time (`--only`) still leaves the whole chain's record."""
    import json
    from datetime import datetime, timezone

    path = RESULTS_DIR / "pipeline.json"
    try:
        kept = {r["notebook"]: r for r in json.loads(path.read_text()).get("runs", [])}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        kept = {}
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for r in runs:
        kept[r["notebook"]] = {**r, "smoke": smoke, "finished": stamp}
    write_json(path, {"runs": [kept[k] for k in sorted(kept)]})


def run(smoke: bool, only: list[str] | None = None, kernel: str = "python3") -> list[dict]:
    import papermill as pm

    runs = []
    for nb in notebooks(only=only):
        out_dir = RESULTS_DIR / nb.stem
        out_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        print(f"[pipeline] {nb.name} (SMOKE={smoke}) ...", flush=True)
        try:
            pm.execute_notebook(str(nb), str(out_dir / nb.name), parameters={"SMOKE": smoke},
                                kernel_name=kernel, cwd=str(nb.parent), progress_bar=False)
        except pm.PapermillExecutionError as exc:
            runs.append({"notebook": nb.name, "ok": False, "seconds": time.perf_counter() - t0,
                         "error": f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"})
            _record(runs, smoke)
            raise SystemExit(
                f"[pipeline] {nb.name} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}\n"
                f"  the executed copy with the traceback is {out_dir / nb.name}; results of the "
                "notebooks before it are kept") from None
        runs.append({"notebook": nb.name, "ok": True, "seconds": round(time.perf_counter() - t0, 1)})
        print(f"[pipeline] {nb.name} done in {runs[-1]['seconds']} s", flush=True)
    _record(runs, smoke)
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mags_lib.pipeline", description=__doc__)
    ap.add_argument("--smoke", default="False", help="True/False: shrink every notebook's sizes")
    ap.add_argument("--only", nargs="*", help="run only notebooks whose name starts with these")
    args = ap.parse_args(argv)
    smoke = str(args.smoke).lower() in ("1", "true", "yes")
    found = notebooks(only=args.only)
    if not found:
        print(f"[pipeline] no numbered notebooks in {NOTEBOOKS_DIR}", file=sys.stderr)
        return 1
    run(smoke, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
