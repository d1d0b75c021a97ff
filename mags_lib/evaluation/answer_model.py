"""Does training the answer model widen the oracle-versus-bare gap? (notebook 06, last part)

The decision step is the same prompt for every agent; only the decision LLM and its prompt
format change here. Each *setting* is (decision LLM, prompt format); in each, the same seeded
games are played by a few agents (bare, oracle, MAGS by default), so the oracle-bare gap of a
setting says how much a perfect memory is worth to that LLM:

    settings = answer_model_settings(trained_gguf)   # base/completion, base/chat,
                                                     # trained/completion, trained/chat
    study = answer_model_study(cfg, settings)        # cfg: the main EvalConfig of notebook 06
    study.table        # one row per (setting, agent): accuracy, 95% interval, seeds' spread
    study.gaps         # one row per setting: oracle - bare, valid

The trained model answers as `<answer>item</answer>` (its training rows end so), hence
`answer_tags=True` for it; the base model answers with the bare item. Each setting writes its
games under `results/<cfg.output>/answer_model/<label>/` (resumable, like the main run).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.evaluation.config import ALL_AGENTS, EvalConfig

QUANT_PREFERENCE: tuple[str, ...] = ("q8_0", "f16", "f32", "q4_k_m")
"""Which exported file stands for a model: q8_0 first (notebook 04: about half the size of f16,
as fast or faster, and closest to it of the quantized types)."""


@dataclass(frozen=True)
class AnswerSetting:
    """One decision LLM and prompt format. `label` names its results folder."""

    label: str
    model: str
    prompt_format: str
    answer_tags: bool
    trained: bool


@dataclass
class AnswerModelStudy:
    """Per-setting results: `table` (setting x agent) and `gaps` (oracle - bare per setting)."""

    settings: list[AnswerSetting]
    summaries: dict[str, dict[str, Any]]
    table: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"settings": [s.__dict__ for s in self.settings], "table": self.table,
                "gaps": self.gaps, "seconds": self.seconds}


def find_gguf(name: str, directory: str | Path | None = None,
              preference: tuple[str, ...] = QUANT_PREFERENCE) -> Path | None:
    """`<directory>/<name>-<type>.gguf` for the first type of `preference` that exists (notebook
    04 writes models/gguf/answer-grpo-q8_0.gguf and so on); None when there is none."""
    from mags_lib.paths import GGUF_DIR

    root = Path(directory) if directory else GGUF_DIR
    for quant in preference:
        path = root / f"{name}-{quant}.gguf"
        if path.is_file():
            return path
    return None


def decision_llm_settings(spec: str = "auto", prompt_format: str = "completion") -> dict[str, Any]:
    """The evaluation's decision LLM from a notebook parameter: "auto" (the trained answer
    model's GGUF from notebook 04, else the embedded base model, said so in `note`),
    "embedded" (the base model) or a .gguf path (taken for a trained answer model, which
    answers with tags). `label` names the matching answer-study setting (None for a path)."""
    from mags_lib.checkpoints import final_model_name

    trained = find_gguf(final_model_name("answer"))
    if spec == "auto" and trained is not None:
        return {"model": str(trained), "answer_tags": True, "trained_path": trained,
                "label": f"trained-{prompt_format}",
                "note": f"decision LLM: the trained answer model {trained.name}"}
    if spec in ("auto", "embedded"):
        note = ("decision LLM: the embedded base model" + (
            "" if spec == "embedded" else " (no trained answer model in models/gguf/: run "
            "notebooks 02 and 04; with a generic answer stem the base model barely uses "
            "the rules in its prompt, so expect the validity check to fail)"))
        return {"model": "embedded", "answer_tags": False, "trained_path": trained,
                "label": f"base-{prompt_format}", "note": note}
    if not Path(spec).is_file():
        raise MagsError(f"decision LLM {spec} not found",
                        "name a .gguf file, 'embedded' or 'auto'")
    return {"model": str(spec), "answer_tags": True, "trained_path": Path(spec), "label": None,
            "note": f"decision LLM: {spec} (answers with <answer> tags)"}


def answer_model_settings(trained: str | Path | None, base: str = "embedded",
                          formats: tuple[str, ...] = ("completion", "chat")) -> list[AnswerSetting]:
    """Base and (when given) trained model, each in every prompt format."""
    settings = [AnswerSetting(f"base-{f}", base, f, answer_tags=False, trained=False)
                for f in formats]
    if trained is not None:
        if not Path(trained).is_file():
            raise MagsError(f"trained answer model {trained} not found",
                            "run notebooks 02 and 04 (they write models/gguf/answer-grpo-*.gguf), "
                            "or pass None to compare the base model only")
        settings += [AnswerSetting(f"trained-{f}", str(trained), f, answer_tags=True, trained=True)
                     for f in formats]
    return settings


def answer_model_study(cfg: EvalConfig, settings: list[AnswerSetting], *,
                       agents: tuple[str, ...] = ("bare", "oracle", "mags"),
                       reuse: dict[str, Any] | None = None, embedder: Any | None = None,
                       load_llm: Callable[[AnswerSetting], Any] | None = None,
                       out_dir: Path | None = None, verbose: bool | None = None) -> AnswerModelStudy:
    """Play `agents` on `cfg`'s seeds and game in every setting (see the module docstring).

    Under SMOKE only the first seed is played, by bare and oracle only. `reuse` maps a setting label to a finished `EvalResult` of the same games (e.g. the main run
    of notebook 06 is the "base-completion" setting), which is then not played again.
    """
    import time

    from mags_lib.evaluation.runner import run_eval
    from mags_lib.paths import results_dir

    unknown = sorted(set(agents) - set(ALL_AGENTS))
    if unknown:
        raise MagsError(f"unknown agents {unknown} for the answer-model study",
                        "use agent names of EvalConfig.agents")
    root = Path(out_dir) if out_dir else results_dir(cfg.output) / "answer_model"
    if cfg.smoke:  # SMOKE checks the code path: one seed, the gap's two agents
        cfg = replace(cfg, smoke_seeds=1)
        agents = tuple(a for a in agents if a in ("bare", "oracle")) or agents
    t0 = time.perf_counter()
    summaries: dict[str, dict[str, Any]] = {}
    for s in settings:
        if reuse and s.label in reuse:
            summaries[s.label] = reuse[s.label].summary
            continue
        sub = replace(cfg, agents=list(agents), prompt_format=s.prompt_format,
                      answer_tags=s.answer_tags, llm=replace(cfg.llm, model=s.model),
                      # the debiased choice scores completions: chat settings answer greedily
                      debias_order=cfg.debias_order and s.prompt_format == "completion",
                      output=f"{cfg.output}/answer_model/{_safe(s.label)}",
                      verbose=cfg.verbose if verbose is None else verbose)
        llm = load_llm(s) if load_llm else None
        summaries[s.label] = run_eval(sub, llm=llm, embedder=embedder,
                                      out_dir=root / _safe(s.label)).summary
    study = AnswerModelStudy(settings, summaries, seconds=time.perf_counter() - t0)
    study.table, study.gaps = study_tables(settings, summaries, agents)
    return study


def study_tables(settings: list[AnswerSetting], summaries: dict[str, dict[str, Any]],
                 agents: tuple[str, ...]) -> tuple[list[dict], list[dict]]:
    """Pure: the (setting x agent) accuracy table and the per-setting oracle-bare gaps."""
    table, gaps = [], []
    for s in settings:
        summary = summaries[s.label]
        for name in agents:
            acc = summary["agents"].get(name)
            if acc is None:
                continue
            seeds = acc["seeds"]
            table.append({"setting": s.label, "trained": s.trained, "format": s.prompt_format,
                          "agent": name, "accuracy": acc["accuracy"], "ci_low": acc["ci_low"],
                          "ci_high": acc["ci_high"], "seed_mean": seeds["mean"],
                          "seed_std": seeds["std"], "n": acc.get("n")})
        gaps.append({"setting": s.label, "trained": s.trained, "format": s.prompt_format,
                     "oracle_minus_bare": summary.get("oracle_vs_bare_gap"),
                     "valid": summary.get("evaluation_valid")})
    return table, gaps


def _safe(label: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "_", label.lower())
