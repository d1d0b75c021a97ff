"""What `make reproduce` may skip: each notebook's inputs, their fingerprint, and the record.

A notebook is up to date when `results/pipeline.json` holds a successful run of it with the
fingerprint computed now and its outputs are still on disk. The fingerprint hashes its inputs:

* `notebook`: the code cells of the `.ipynb` (what papermill executes; markdown, outputs and
  metadata do not count; `make notebooks` writes them from `notebooks/src/`);
* `params` and `kernel`: what papermill injects (`SMOKE=True` and `False` never satisfy each other;
  a parameter given with `--param` counts too, so a variant's run never passes for the default's);
* `code`: the `mags_lib` files the cells can import: the static import closure of their
  `mags_lib` imports (imports inside functions too), with the packages' data files (grammars);
  Python files by their syntax tree, so comments, docstrings and help strings do not count;
* `upstream`: the ids of the last successful runs of the notebooks it reads from
  (`DEPENDS_ON`). Any re-run upstream thus re-runs everything downstream, and no multi-GB model
  is hashed: models are stood for by the run that wrote them. Where all a notebook reads of an
  upstream one is small files (`READS`: notebook 02 reads only the ask and answer datasets
  of 01, notebook 03 its write and ask datasets, notebook 04 the held-out prompts of all
  three), their content stands for that upstream instead: re-synthesising the write rows
  does not retrain the ask model on the same bytes, and a notebook 01 run that wrote the
  same rows re-runs neither notebook 03 nor what plays its models. A notebook planned to run
  because its upstream will run is checked again just before its turn, so it is skipped
  when the upstream re-ran but wrote the same files;
* `data`: the content of small committed inputs it reads (`EXTERNAL`, e.g. `data/seed/`).

Not counted (use `FORCE=1 make reproduce`): installed package versions, the embedded base
models, and artefacts changed by hand outside the pipeline. Deleted outputs are noticed
(`ARTEFACTS`, and the executed copy `results/NN_name/NN_name.ipynb`).

    cfg = PipelineConfig()
    inputs = notebook_inputs(nb, {"SMOKE": False}, upstream={}, index=code_graph.code_index(),
                             cfg=cfg)
    entry = load_record(cfg.record_path)["runs"].get(nb.name)
    stale_reason(entry, inputs, missing_outputs(nb, cfg))   # None, or why it must run
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from mags_lib.atomic import write_text
from mags_lib.code_graph import CodeIndex, closure, code_digest, mags_imports
from mags_lib.paths import NOTEBOOKS_DIR, PROJ_ROOT, RESULTS_DIR

PACKAGE_DIR = Path(__file__).resolve().parent

# Which notebooks each one reads from (by number), from their "Reads" notes and code. A
# numbered notebook missing here depends on every notebook before it (safe, if slow).
DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "01": (),
    "02": ("01",),  # data/synth/{ask,answer}
    "03": ("01", "02"),  # data/synth/write; 02's ask table (TRAIN_MIXED)
    "04": ("01", "02", "03"),  # models/<role>-<stage>, held-out prompts in data/synth
    "05": (),  # scripted writer and rule reader: no trained model
    "06": ("04",),  # the closed loop plays 04's GGUFs
    "07": ("01", "02"),  # models/ask-sft, ask-grpo, data/synth/ask
    "08": ("01", "03", "04"),  # models/write-sft, data/synth/write, models/gguf
    "09": ("04",),  # the closed loop plays 04's GGUFs
    "10": ("04",),  # the closed loop's ask / write GGUFs
    "11": ("01", "02", "04"),  # models/ask-sft, data/synth/ask, models/gguf
    "12": ("04",),  # 04's answer, ask and write GGUFs; LoCoMo (outside the chain)
    "13": ("04",),  # the same, on the test splits
    "14": ("01", "03", "04"),  # data/synth/write, 03's recipe, 04's write GGUF
    "15": ("04",),  # 04's answer, ask and write GGUFs; LoCoMo (outside the chain)
}

# Where all that a notebook reads of an upstream one is small files: their content stands
# for that upstream (instead of its run id). Files or folders under the project root.
READS: dict[str, dict[str, tuple[str, ...]]] = {
    "02": {"01": ("data/synth/ask", "data/synth/answer")},
    "03": {"01": ("data/synth/write", "data/synth/ask")},  # ask: only with TRAIN_MIXED
    "04": {"01": ("data/synth/ask", "data/synth/write", "data/synth/answer")},  # prompts
    "07": {"01": ("data/synth/ask",)},
    "11": {"01": ("data/synth/ask",)},
}

# What each notebook leaves outside results/ (globs under the project root); one that matches
# nothing makes the notebook stale, so a deleted model is rebuilt by the notebook that wrote it.
ARTEFACTS: dict[str, tuple[str, ...]] = {
    "01": ("data/synth/ask/train.jsonl", "data/synth/write/train.jsonl",
           "data/synth/answer/train.jsonl"),
    "02": ("models/ask-sft", "models/ask-grpo", "models/answer-sft", "models/answer-grpo"),
    "03": ("models/write-sft", "models/write-grpo"),
    "04": ("models/gguf/*.gguf",),
    "08": ("models/objectives/write-*",),
    "11": ("models/objectives/ask-*",),
    "14": ("models/transfer/*/write-transfer.json",),
}

# Small committed files a notebook reads, hashed by content.
EXTERNAL: dict[str, tuple[str, ...]] = {"01": ("data/seed",)}


@dataclass(frozen=True)
class PipelineConfig:
    """Where the chain lives and what its notebooks read; tests point it at a tmp directory."""

    notebooks_dir: Path = field(default=NOTEBOOKS_DIR, metadata={"help": "NN_name.ipynb files"})
    results_dir: Path = field(default=RESULTS_DIR, metadata={
        "help": "executed copies in <results_dir>/NN_name/, the record in pipeline.json"})
    root: Path = field(default=PROJ_ROOT, metadata={
        "help": "where the paths of `artefacts` and `external` start"})
    package_dir: Path = field(default=PACKAGE_DIR, metadata={
        "help": "the mags_lib package whose imported files are hashed"})
    depends_on: Mapping[str, Sequence[str]] = field(default_factory=lambda: DEPENDS_ON, metadata={
        "help": "notebook number -> the numbers it reads from (undeclared: all earlier ones)"})
    artefacts: Mapping[str, Sequence[str]] = field(default_factory=lambda: ARTEFACTS, metadata={
        "help": "notebook number -> globs of what it writes outside results/"})
    external: Mapping[str, Sequence[str]] = field(default_factory=lambda: EXTERNAL, metadata={
        "help": "notebook number -> small committed inputs, hashed by content"})
    reads: Mapping[str, Mapping[str, Sequence[str]]] = field(
        default_factory=lambda: READS, metadata={
            "help": "notebook number -> {upstream number: the files it reads of it}: their "
                    "content stands for that upstream's run id"})
    kernel: str = field(default="python3", metadata={"help": "Jupyter kernel papermill starts"})

    @property
    def record_path(self) -> Path:
        return self.results_dir / "pipeline.json"


def digest(obj: object) -> str:
    """A short, stable hash of JSON-able data (dict key order does not matter)."""
    text = json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parameter_names(nb: Path) -> list[str]:
    """The names the notebook's `parameters` cell assigns (what papermill may override), in
    order; [] for a notebook without such a cell or one whose cell does not parse."""
    import ast

    cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
    for c in cells:
        if c.get("cell_type") == "code" and "parameters" in c.get("metadata", {}).get("tags", []):
            try:
                tree = ast.parse("".join(c.get("source", "")))
            except SyntaxError:
                return []
            return [t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Name)]
    return []


def code_cells(nb: Path) -> list[str]:
    cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
    return ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code"]


def content_digest(paths: Sequence[str], root: Path = PROJ_ROOT) -> str:
    files = sorted(f for p in paths for f in ([root / p] if (root / p).is_file()
                                              else (root / p).rglob("*")) if f.is_file())
    return digest({str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
                   for f in files})


def number(stem: str) -> str:
    return stem[:2]


def dependencies(stem: str, stems: Sequence[str],
                 depends_on: Mapping[str, Sequence[str]]) -> list[str]:
    """The notebooks (stems, among `stems`) that `stem` reads from; all earlier ones if its
    number is not declared."""
    earlier = [s for s in stems if s < stem]
    declared = depends_on.get(number(stem))
    return earlier if declared is None else [s for s in earlier if number(s) in declared]


def upstream_key(stem: str, dep: str, entry: dict | None, cfg: PipelineConfig) -> str | None:
    """What notebook `stem` records of its upstream `dep`: the content of the files it reads
    of it (`cfg.reads`) once that upstream has a successful run, else the upstream's run id."""
    paths = cfg.reads.get(number(stem), {}).get(number(dep))
    if paths is None or run_id(entry) is None:
        return run_id(entry)
    return "content:" + content_digest(paths, cfg.root)


def legacy_inputs(inputs: dict, bytes_inputs: dict, run_ids: Mapping[str, str | None]
                  ) -> list[dict]:
    """`inputs` as records written by earlier versions of this module hold them: the code by
    its bytes (`bytes_inputs`, before 2026-12-02), and either form with every upstream by its
    run id (`run_ids`, before `READS` named the files a notebook reads). A record matching one
    of them still holds: when the upstream's run id is the one recorded, nothing upstream
    re-ran, whatever it wrote."""
    by_id = {**inputs, "upstream": dict(run_ids)}
    return [bytes_inputs, by_id, {**bytes_inputs, "upstream": dict(run_ids)}]


def run_id(entry: dict | None) -> str | None:
    """What a downstream notebook records of an upstream one: the id of its last run if that
    succeeded. Every run gets a new id, so a forced re-run upstream counts as a change too."""
    return entry.get("run") if entry and entry.get("ok") else None


def notebook_inputs(nb: Path, params: dict, upstream: Mapping[str, str | None],
                    index: CodeIndex, cfg: PipelineConfig, shape: bool = True) -> dict:
    """Everything the notebook's run depends on, each part hashed (see the module docstring;
    `shape=False`: the code by its bytes, as records before 2026-12-02 hold it)."""
    cells = code_cells(nb)
    modules = closure(set().union(*map(mags_imports, cells)), index.imports)
    inputs = {"notebook": digest(cells), "params": params, "kernel": cfg.kernel,
              "code": code_digest(index, modules, shape), "upstream": dict(upstream)}
    if external := cfg.external.get(number(nb.stem)):
        inputs["data"] = content_digest(external, cfg.root)
    return inputs


def missing_outputs(nb: Path, cfg: PipelineConfig) -> list[str]:
    """The notebook's outputs that are not on disk: its executed copy, its declared artefacts."""
    copy = cfg.results_dir / nb.stem / nb.name
    missing = [] if copy.is_file() else [str(copy.relative_to(cfg.results_dir.parent))]
    return missing + [g for g in cfg.artefacts.get(number(nb.stem), ())
                      if not any(cfg.root.glob(g))]


_WHY = {"notebook": "the notebook changed", "code": "mags_lib code it imports changed",
        "kernel": "another kernel", "data": "its input data changed"}


def stale_reason(entry: dict | None, inputs: dict, missing: Sequence[str] = (),
                 legacy: Callable[[], list[dict]] | None = None) -> str | None:
    """Why the notebook (or step) must run, or None when its last run still holds. `legacy`:
    gives the same inputs in each form older records hold them: the code hashed by
    its bytes, as before code counted by its syntax tree, or the upstream by run id, as before
    `READS` covered it; such a record still holds if one matches (called only when the inputs
    do not match)."""
    if entry is None:
        return "never run"
    if not entry.get("ok"):
        return f"last run failed ({entry.get('error', 'no reason recorded')})"
    if "fingerprint" not in entry:
        return "no fingerprint recorded (an older record)"
    if (entry["fingerprint"] != digest(inputs) and legacy is not None
            and entry["fingerprint"] in {digest(x) for x in legacy()}):
        return ("outputs missing: " + ", ".join(missing)) if missing else None
    if entry["fingerprint"] != digest(inputs):
        old = entry.get("inputs", {})
        changed = [k for k in inputs if old.get(k) != inputs[k]] or ["inputs"]
        return "; ".join(_change(k, old.get(k), inputs[k]) for k in changed)
    if missing:
        return "outputs missing: " + ", ".join(missing)
    return None


def _change(key: str, old, new) -> str:
    if key == "params":
        old = old or {}
        return "parameters " + ", ".join(
            [f"{k}={old.get(k)!r}->{v!r}" for k, v in new.items() if old.get(k) != v]
            + [f"{k}={v!r}->(default)" for k, v in old.items() if k not in new])
    if key == "upstream":
        names = sorted(k for k in {**(old or {}), **new} if (old or {}).get(k) != new.get(k))
        return "upstream re-ran or changed: " + ", ".join(names)
    return _WHY.get(key, f"{key} changed")


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def load_record(path: Path) -> dict[str, dict[str, dict]]:
    """results/pipeline.json as {"runs": {notebook: entry}, "steps": {step: entry}}; a missing
    or corrupt file is an empty record."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {kind: {e[key]: e for e in data.get(kind, [])}
                for kind, key in (("runs", "notebook"), ("steps", "step"))}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return {"runs": {}, "steps": {}}


def save_entry(path: Path, kind: str, entry: dict) -> dict:
    """Merge one entry into the record (the latest per notebook or step), carrying forward the
    seconds of its last successful run per mode (`last_ok_seconds`) for time estimates."""
    record = load_record(path)
    key = entry["notebook"] if kind == "runs" else entry["step"]
    last_ok = _last_ok_seconds(record[kind].get(key))
    if entry.get("ok"):
        last_ok["smoke" if entry.get("smoke") else "full"] = entry["seconds"]
        entry = {"run": uuid.uuid4().hex[:12], **entry}
    entry = {"finished": now_utc(), **entry, "last_ok_seconds": last_ok}
    record[kind][key] = entry
    write_text(path, json.dumps({k: [v[n] for n in sorted(v)] for k, v in record.items()},
                                indent=2, sort_keys=True))
    return entry


def _last_ok_seconds(entry: dict | None) -> dict[str, float]:
    """{"smoke" | "full": seconds} of the entry's last successful runs (older records: its own)."""
    entry = entry or {}
    if "last_ok_seconds" in entry:
        return dict(entry["last_ok_seconds"])
    ok = entry.get("ok") and entry.get("seconds") is not None
    return {"smoke" if entry.get("smoke") else "full": entry["seconds"]} if ok else {}


def expected_seconds(entry: dict | None, smoke: bool) -> float | None:
    """The seconds of the last successful run in this mode, if one is known."""
    return _last_ok_seconds(entry).get("smoke" if smoke else "full")
