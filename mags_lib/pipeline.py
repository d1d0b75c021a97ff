"""`python -m mags_lib.pipeline`: run the numbered notebooks in order, headlessly (papermill),
skipping those whose last successful run still holds.

Each `notebooks/NN_name.ipynb` runs with the parameter `SMOKE` injected and its executed copy is
written to `results/NN_name/NN_name.ipynb`; the notebook itself writes its own metrics and
figures there. A notebook runs only when its inputs changed since its last successful run
(its code cells, SMOKE, the mags_lib code it imports, the runs of the notebooks it reads from;
`mags_lib.pipeline_state` says exactly what counts) or its outputs are missing; `--force` runs
it anyway. A failing notebook stops the chain with the notebook's name and cell, and the
results of the notebooks that finished stay on disk. `results/pipeline.json` keeps each
notebook's latest run (ok, seconds, SMOKE or not, when, the fingerprint it ran with).

    python -m mags_lib.pipeline --smoke False [--only 02 03] [--force]
    python -m mags_lib.pipeline --smoke False --only 01 03 04 --param 01:WRITER_FRAME_SHARE=0.5
    python -m mags_lib.pipeline --step bench-memory [--after 04] -- python -m mags_lib.bench ...

`--step` guards any other command the same way (`make reproduce` runs the benchmarks so): it
runs when the command line, the mags_lib code its `-m mags_lib.X` module imports (else the
whole package), or the runs of the `--after` notebooks changed, or a file named by the
command's `--out` is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from mags_lib.code_graph import CodeIndex, closure, code_digest, code_index
from mags_lib.errors import MagsError
from mags_lib.paths import NOTEBOOKS_DIR
from mags_lib.pipeline_state import (
    PipelineConfig,
    dependencies,
    digest,
    expected_seconds,
    legacy_inputs,
    load_record,
    missing_outputs,
    notebook_inputs,
    now_utc,
    number,
    parameter_names,
    run_id,
    save_entry,
    stale_reason,
    upstream_key,
)

_NUMBERED = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")
DEFAULT = PipelineConfig()
Params = Mapping[str, Mapping[str, object]]  # notebook number -> parameter overrides


def notebook_params(nb: Path, smoke: bool, params: Params | None = None) -> dict:
    """What papermill injects into `nb`: SMOKE, then the `--param` overrides of its number
    (none: exactly {"SMOKE": smoke}, so the records of runs without overrides still hold)."""
    return {"SMOKE": smoke, **dict((params or {}).get(number(nb.stem), {}))}


def parse_params(items: Sequence[str]) -> dict[str, dict[str, object]]:
    """`--param` values, each 'NN:NAME=VALUE' (VALUE read as JSON, else kept as text).

    >>> parse_params(["01:WRITER_FRAME_SHARE=0.5", "01:PERSONA_CUE_PHRASES=true", "06:NOTE=hi"])
    {'01': {'WRITER_FRAME_SHARE': 0.5, 'PERSONA_CUE_PHRASES': True}, '06': {'NOTE': 'hi'}}
    """
    out: dict[str, dict[str, object]] = {}
    for item in items:
        m = re.fullmatch(r"(\d\d):([A-Za-z_]\w*)=(.*)", item, re.S)
        if not m:
            raise MagsError(f"--param {item!r} is not NN:NAME=VALUE",
                            "name the notebook by its number and a parameter of its parameters "
                            "cell, e.g. --param 01:WRITER_FRAME_SHARE=0.5")
        nb, name, text = m.groups()
        try:
            value: object = json.loads(text)
        except ValueError:
            value = text
        out.setdefault(nb, {})[name] = value
    return out


def check_params(params: Params, selected: Sequence[Path]) -> None:
    """Refuse overrides for a notebook not selected, for SMOKE (use --smoke) or for a name its
    parameters cell does not assign (papermill would inject it unused)."""
    by_number = {number(nb.stem): nb for nb in selected}
    for nb_number, values in params.items():
        nb = by_number.get(nb_number)
        if nb is None:
            raise MagsError(f"--param names notebook {nb_number}, which is not among those run "
                            f"({', '.join(sorted(by_number)) or 'none'})",
                            "add it to --only, or drop the --param")
        known = parameter_names(nb)
        for name in values:
            if name == "SMOKE" or name not in known:
                raise MagsError(f"--param {nb_number}:{name}: {nb.name} has no parameter "
                                f"{name!r} to set" + (" here (use --smoke)" if name == "SMOKE"
                                                      else ""),
                                f"its parameters: {', '.join(n for n in known if n != 'SMOKE')}")


def notebooks(directory: Path = NOTEBOOKS_DIR, only: list[str] | None = None) -> list[Path]:
    found = sorted(p for p in directory.glob("*.ipynb") if _NUMBERED.match(p.name))
    if only:
        found = [p for p in found if any(p.stem.startswith(o) for o in only)]
    return found


@dataclass
class Planned:
    """One selected notebook: why it must run (None: up to date) and its last run."""

    nb: Path
    reason: str | None
    entry: dict | None
    expected: float | None  # seconds of its last successful run in this mode


def _upstream(nb: Path, stems: list[str], runs: dict, cfg: PipelineConfig,
              pending: Collection[str] = ()) -> dict[str, str | None]:
    deps = dependencies(nb.stem, stems, cfg.depends_on)
    return {s: "pending" if s in pending else upstream_key(nb.stem, s, runs.get(f"{s}.ipynb"), cfg)
            for s in deps}


def _legacy(nb: Path, injected: dict, upstream: dict, index: CodeIndex,
            cfg: PipelineConfig, runs: dict, stems: list[str],
            pending: Collection[str] = ()) -> Callable[[], list[dict]]:
    """The notebook's inputs as older records hold them (`legacy_inputs`), computed on demand;
    an upstream that is about to run stays "pending", so no record of it can hold."""
    def inputs() -> list[dict]:
        ids = {s: "pending" if s in pending else run_id(runs.get(f"{s}.ipynb"))
               for s in dependencies(nb.stem, stems, cfg.depends_on)}
        return legacy_inputs(notebook_inputs(nb, injected, upstream, index, cfg),
                             notebook_inputs(nb, injected, upstream, index, cfg, shape=False),
                             ids)
    return inputs


def plan(smoke: bool, only: list[str] | None = None, force: bool = False,
         cfg: PipelineConfig = DEFAULT, params: Params | None = None) -> list[Planned]:
    """The selected notebooks in order, each with the reason it must run or None. A notebook
    that will run marks its dependants stale too (its new run is not recorded yet). `params`:
    parameter overrides by notebook number (`--param`), checked against the notebooks."""
    every, runs = notebooks(cfg.notebooks_dir), load_record(cfg.record_path)["runs"]
    selected, stems = set(notebooks(cfg.notebooks_dir, only)), [p.stem for p in every]
    check_params(params or {}, sorted(selected))
    index, pending, planned = code_index(cfg.package_dir), set(), []
    for nb in (p for p in every if p in selected):
        entry = runs.get(nb.name)
        upstream = _upstream(nb, stems, runs, cfg, pending)
        injected = notebook_params(nb, smoke, params)
        inputs = notebook_inputs(nb, injected, upstream, index, cfg)
        reason = "forced" if force else stale_reason(
            entry, inputs, missing_outputs(nb, cfg),
            _legacy(nb, injected, upstream, index, cfg, runs, stems, pending))
        if reason:
            pending.add(nb.stem)
        planned.append(Planned(nb, reason, entry, expected_seconds(entry, smoke)))
    return planned


def _clock(seconds: float) -> str:
    """Local wall-clock time `seconds` from now, as 21:40 (with the weekday if not today)."""
    now = datetime.now().astimezone()
    then = now + timedelta(seconds=seconds)
    return then.strftime("%H:%M" if then.date() == now.date() else "%a %H:%M")


def _eta(todo: Sequence[Planned]) -> str:
    """This notebook's expected finish and that of every notebook still to run."""
    first = todo[0].expected
    known = [p.expected for p in todo if p.expected is not None]
    unknown = len(todo) - len(known)
    this = (f"last run {first:.0f} s, expected done ~{_clock(first)}" if first is not None
            else "no earlier run in this mode to time it by")
    if len(todo) == 1:
        return this
    if not known:
        return this + f"; {len(todo)} to run, none timed yet"
    rest = f"; {len(todo)} to run, all done ~{_clock(sum(known))}"
    return this + rest + (f" (+{unknown} untimed)" if unknown else "")


def _execute(nb: Path, out: Path, params: dict, kernel: str) -> str | None:
    """Run one notebook with papermill: None, or the failing cell and its error."""
    import papermill as pm

    try:
        pm.execute_notebook(str(nb), str(out), parameters=params, kernel_name=kernel,
                            cwd=str(nb.parent), progress_bar=False)
    except pm.PapermillExecutionError as exc:
        return f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
    return None


def _still_current(p: Planned, smoke: bool, cfg: PipelineConfig,
                   params: Params | None = None) -> bool:
    """Whether a notebook planned to run holds after all, now that the notebooks before it
    have run (one whose upstream rewrote the same files it reads: `READS`)."""
    if p.entry is None:
        return False
    every, runs = notebooks(cfg.notebooks_dir), load_record(cfg.record_path)["runs"]
    stems = [q.stem for q in every]
    upstream, index = _upstream(p.nb, stems, runs, cfg), code_index(cfg.package_dir)
    injected = notebook_params(p.nb, smoke, params)
    inputs = notebook_inputs(p.nb, injected, upstream, index, cfg)
    return stale_reason(runs.get(p.nb.name), inputs, missing_outputs(p.nb, cfg),
                        _legacy(p.nb, injected, upstream, index, cfg, runs, stems)) is None


def _run_one(p: Planned, smoke: bool, cfg: PipelineConfig, params: Params | None = None) -> dict:
    """Execute a planned notebook and record it (first as unfinished, so a killed run counts
    as failed); its inputs are computed now, after the notebooks before it have run."""
    every, runs = notebooks(cfg.notebooks_dir), load_record(cfg.record_path)["runs"]
    upstream = _upstream(p.nb, [q.stem for q in every], runs, cfg)
    injected = notebook_params(p.nb, smoke, params)
    inputs = notebook_inputs(p.nb, injected, upstream, code_index(cfg.package_dir), cfg)
    base = {"notebook": p.nb.name, "smoke": smoke}
    save_entry(cfg.record_path, "runs", {**base, "ok": False, "seconds": 0.0,
                                         "error": f"started {now_utc()}, did not finish"})
    out_dir = cfg.results_dir / p.nb.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    error = _execute(p.nb, out_dir / p.nb.name, injected, cfg.kernel)
    entry = {**base, "ok": error is None, "seconds": round(time.perf_counter() - t0, 1),
             "fingerprint": digest(inputs), "inputs": inputs}
    return save_entry(cfg.record_path, "runs", {**entry, **({"error": error} if error else {})})


def run(smoke: bool, only: list[str] | None = None, force: bool = False,
        cfg: PipelineConfig = DEFAULT, params: Params | None = None) -> list[dict]:
    """Run the stale notebooks among the selected ones, in order, with `params`' overrides;
    the entries of those run."""
    planned = plan(smoke, only, force, cfg, params)
    todo = [p for p in planned if p.reason]
    print(f"[pipeline] {len(todo)} of {len(planned)} notebooks to run (SMOKE={smoke})", flush=True)
    runs = []
    for i, p in enumerate(planned, 1):
        head = f"[pipeline] {i}/{len(planned)} {p.nb.stem}"
        if not p.reason:
            print(f"{head}: up to date since {p.entry.get('finished')}", flush=True)
            continue
        if not force and _still_current(p, smoke, cfg, params):
            print(f"{head}: up to date since {p.entry.get('finished')} (the notebooks before "
                  "it ran, but what it reads of them is unchanged)", flush=True)
            continue
        given = ", ".join(f"{k}={v!r}" for k, v in notebook_params(p.nb, smoke, params).items()
                          if k != "SMOKE")
        print(f"{head} (SMOKE={smoke}{', ' + given if given else ''}) ... "
              f"{_eta(todo[todo.index(p):])}\n"
              f"[pipeline]     why: {p.reason}", flush=True)
        runs.append(_run_one(p, smoke, cfg, params))
        if not runs[-1]["ok"]:
            out = cfg.results_dir / p.nb.stem / p.nb.name
            raise SystemExit(
                f"[pipeline] {p.nb.name} failed in {runs[-1]['error']}\n  the executed copy with "
                f"the traceback is {out}; results of the notebooks before it are kept")
        print(f"[pipeline] {p.nb.stem} done in {runs[-1]['seconds']} s", flush=True)
    return runs


def step_inputs(command: list[str], after: list[str], smoke: bool,
                cfg: PipelineConfig = DEFAULT, shape: bool = True) -> dict:
    """A guarded command's inputs: itself, the mags_lib code it runs, the `after` notebooks' runs."""
    module = command[command.index("-m") + 1] if "-m" in command[:-1] else ""
    index = code_index(cfg.package_dir)
    modules = (closure({module, f"{module}.__main__"}, index.imports)
               if module in index.imports else None)
    runs = load_record(cfg.record_path)["runs"]
    upstream = {a: run_id(next((e for n, e in runs.items() if number(n) == a), None))
                for a in after}
    return {"command": command, "params": {"SMOKE": smoke},
            "code": code_digest(index, modules, shape), "upstream": upstream}


def run_step(name: str, command: list[str], after: list[str] | None = None, smoke: bool = False,
             force: bool = False, cfg: PipelineConfig = DEFAULT) -> int:
    """Run `command` unless its last successful run had the same inputs and its `--out`
    files exist; its exit status (0 when skipped). Messages go to stderr."""
    inputs = step_inputs(command, after or [], smoke, cfg)
    entry = load_record(cfg.record_path)["steps"].get(name)
    outs = [command[i + 1] for i, a in enumerate(command[:-1]) if a == "--out"]
    missing = [o for o in outs if not Path(o).exists()]
    reason = "forced" if force else stale_reason(
        entry, inputs, missing, lambda: [step_inputs(command, after or [], smoke, cfg, shape=False)])
    if not reason:
        print(f"[pipeline] step {name}: up to date since {entry.get('finished')}", file=sys.stderr)
        return 0
    todo = [Planned(Path(name), reason, entry, expected_seconds(entry, smoke))]
    print(f"[pipeline] step {name} ... {_eta(todo)}\n[pipeline]     why: {reason}",
          file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    rc = subprocess.run(command).returncode
    save_entry(cfg.record_path, "steps", {
        "step": name, "ok": rc == 0, "seconds": round(time.perf_counter() - t0, 1),
        "smoke": smoke, "fingerprint": digest(inputs), "inputs": inputs,
        **({"error": f"exit status {rc}"} if rc else {})})
    return rc


def _truthy(text: str) -> bool:
    return str(text).lower() in ("1", "true", "yes")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(prog="python -m mags_lib.pipeline", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", default="False", help="True/False: shrink every notebook's sizes")
    ap.add_argument("--only", nargs="*", help="consider only notebooks whose name starts with these")
    ap.add_argument("--force", action="store_true", help="run even what is up to date")
    ap.add_argument("--param", action="append", default=[], metavar="NN:NAME=VALUE",
                    help="set a parameter of notebook NN's parameters cell for this run (VALUE "
                         "as JSON, else text; repeatable); it counts in the fingerprint, so a "
                         "later run without it runs the notebook again with its defaults")
    ap.add_argument("--step", help="guard the command after `--` under this name")
    ap.add_argument("--after", nargs="*", default=[],
                    help="with --step: numbers of the notebooks whose runs the command reads")
    args = ap.parse_args(argv)
    smoke, force = _truthy(args.smoke), args.force
    if args.step:
        if not command:
            ap.error("--step needs a command after `--`")
        return run_step(args.step, command, args.after, smoke, force)
    if not notebooks(only=args.only):
        print(f"[pipeline] no numbered notebooks in {NOTEBOOKS_DIR}", file=sys.stderr)
        return 1
    try:
        run(smoke, args.only, force, params=parse_params(args.param))
    except MagsError as exc:
        print(f"[pipeline] {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
