"""The spread of the ask model's GRPO stage over seeds, judged on more rows than notebook 02.

`run_seed_spread` judges notebook 02's ask models that exist (`models/ask-sft`, and
`models/ask-grpo`, GRPO seed 0) on the first `rows` rows per task of a split, re-runs the ask
role's GRPO stage from `models/ask-sft` with each other seed (the role's default recipe; the
models go to `models/seeds/ask-grpo-seed<N>/`, out of notebook 04's way, which exports each
role's selected model from `models/`) and judges those the same way: `ask_hit_rates` at depths
1, 3, 5 (hit@k: some query of the block finds the rule; query hit@k: the share of queries that
do) and adherence (the share of outputs that parse completely). With no seeds, the saved
`ask-grpo-seed<N>` models are judged again instead (for example on the test split).

Each GRPO model is compared with `ask-sft` on the same rows at depth 1, per query and per block
(`compare.paired_gain`: the gain and a 95% bootstrap interval that resamples whole games, since
the rows of one game share rules). `pooled_spread` compares on both splits' saved outputs
together (twice the games: tighter intervals). Notebook 07 calls these and writes
`results/07_ask_grpo_seeds/`. About 8 minutes a seed on 2 idle cores.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.errors import MagsError
from mags_lib.objectives.rewards import format_reward
from mags_lib.paths import MODELS_DIR, SEED_MODELS_DIR
from mags_lib.train.compare import hits_to_pairs, paired_gain
from mags_lib.train.evaluate import ask_hit_rates, ask_row_hits, generate
from mags_lib.train.roles import RoleTrainConfig
from mags_lib.train.stages import first_per_task, load_role_data


@dataclass
class SeedSpreadConfig:
    """What `run_seed_spread` trains and judges."""

    seeds: list[int] = field(default_factory=lambda: [1, 2], metadata={
        "help": "GRPO seeds to train from models/ask-sft (seed 0 is notebook 02's ask-grpo); "
                "empty: judge the saved models/seeds/ask-grpo-seed<N> again instead"})
    rows: int = field(default=160, metadata={"help": "rows per task of the split judged"})
    split: str = field(default="val", metadata={"help": "val or test"})
    torch_threads: int | None = field(default=None, metadata={
        "help": "torch CPU threads (None: torch's default)"})
    smoke: bool = field(default=False, metadata={
        "help": "train each seed with the SMOKE-shrunk GRPO stage (a pipeline check)"})

    def __post_init__(self) -> None:
        if self.split not in ("val", "test"):
            raise MagsError(f"split must be 'val' or 'test', not {self.split!r}",
                            "pass split='val' or split='test'")
        if self.rows < 1:
            raise MagsError(f"rows must be at least 1, not {self.rows}", "pass rows >= 1")

    def role(self, seed: int = 0) -> RoleTrainConfig:
        return RoleTrainConfig(role="ask", seed=seed, torch_threads=self.torch_threads,
                               smoke=self.smoke)


def run_seed_spread(cfg: SeedSpreadConfig, out_dir: Path) -> dict[str, Any]:
    """Judge, train and compare as the module says; writes `grpo_seeds_<split>.json` and its
    outputs (`..._outputs.json`, merged with an earlier call's on the same rows, so seeds can
    be run in separate calls) under `out_dir` and returns the summary."""
    if not (MODELS_DIR / "ask-sft").is_dir():
        raise MagsError(f"{MODELS_DIR / 'ask-sft'} not found",
                        "run notebook 02 first (python -m mags_lib.pipeline --only 02)")
    role = cfg.role()
    _, grpo_cfg = role.stages()
    params = grpo_cfg.reward_params["recall_reward"]
    rows, _ = load_role_data(role)
    judged_rows = first_per_task(rows[cfg.split], cfg.rows)
    prompts = [r["prompt"] for r in judged_rows]
    path = out_dir / f"grpo_seeds_{cfg.split}.json"
    out, outputs = _saved(path, len(judged_rows)), _saved(_outputs_path(path), len(judged_rows))
    out.update({"rows": len(judged_rows), "split": cfg.split, "reward_params": params,
                "grpo": dataclasses.asdict(grpo_cfg)})
    outputs["rows"] = len(judged_rows)
    models, texts_of = out.setdefault("models", {}), outputs.setdefault("texts", {})
    saved = [] if cfg.seeds else sorted(SEED_MODELS_DIR.glob("ask-grpo-seed*"))
    for model_dir in (MODELS_DIR / "ask-sft", MODELS_DIR / "ask-grpo", *saved):
        if model_dir.is_dir():
            texts_of[model_dir.name] = generate(str(model_dir), prompts, role.eval_max_tokens)
            models[model_dir.name] = judged(texts_of[model_dir.name], judged_rows, params)
    for seed in cfg.seeds:
        name = f"ask-grpo-seed{seed}"
        texts_of[name], models[name] = _train_seed(cfg, seed, rows["train"], prompts,
                                                   judged_rows, params)
    if "ask-sft" in texts_of:
        out["vs_sft"] = {name: against(texts_of["ask-sft"], texts, judged_rows, params)
                         for name, texts in texts_of.items() if name != "ask-sft"}
    write_text(_outputs_path(path), json.dumps(outputs))
    write_text(path, json.dumps(out, indent=2))
    return json.loads(path.read_text())  # keys as strings, as saved


def _train_seed(cfg: SeedSpreadConfig, seed: int, train_rows: list[dict], prompts: list[str],
                judged_rows: list[dict], params: dict) -> tuple[list[str], dict]:
    """One GRPO run of the ask recipe from ask-sft with `seed`, its outputs and its judgement."""
    from mags_lib.train.grpo import run_grpo

    _, stage = cfg.role(seed).stages()
    stage = dataclasses.replace(stage, output_dir=str(SEED_MODELS_DIR / f"ask-grpo-seed{seed}"))
    t0 = time.perf_counter()
    result = run_grpo(stage, train_rows, [], MODELS_DIR / "ask-sft")  # judged below
    texts = generate((result.model, result.tokenizer), prompts, cfg.role(seed).eval_max_tokens)
    return texts, {**judged(texts, judged_rows, params), "train_s": time.perf_counter() - t0,
                   "mining": result.metrics.get("mining")}


def pooled_spread(cfg: SeedSpreadConfig, out_dir: Path) -> dict[str, Any]:
    """Each saved model against ask-sft on the val and test rows judged so far, together;
    writes `grpo_seeds_pooled.json` under `out_dir` and returns it."""
    role = cfg.role()
    rows, _ = load_role_data(role)
    return pool_outputs(rows, role.stages()[1].reward_params["recall_reward"], out_dir)


def pool_outputs(rows: dict[str, list[dict]], params: dict, out_dir: Path) -> dict[str, Any]:
    """`pooled_spread` on given rows by split and recall-reward parameters."""
    texts_of: dict[str, list[str]] = {}
    judged_rows: list[dict] = []
    for split in ("val", "test"):
        saved = _outputs_path(out_dir / f"grpo_seeds_{split}.json")
        try:
            outputs = json.loads(saved.read_text())
        except (OSError, ValueError) as e:
            raise MagsError(f"cannot read {saved}: {e}",
                            f"judge the {split} split first: run_seed_spread with "
                            f"split={split!r}") from e
        judged_rows += first_per_task(rows[split], outputs["rows"])
        for name, texts in outputs["texts"].items():
            texts_of.setdefault(name, []).extend(texts)
    missing = [n for n, t in texts_of.items() if len(t) != len(judged_rows)]
    missing += [] if "ask-sft" in texts_of else ["ask-sft"]
    if missing:
        raise MagsError(f"the saved outputs do not cover both splits for {', '.join(missing)}",
                        "judge every model on both splits (split='val', then 'test')")
    vs_sft = {name: against(texts_of["ask-sft"], texts, judged_rows, params)
              for name, texts in texts_of.items() if name != "ask-sft"}
    grpo = [name for name in texts_of if name != "ask-sft"]
    if len(grpo) > 1:  # the recipe over its seeds: each seed's rows paired with SFT's
        vs_sft[f"all {len(grpo)} GRPO seeds"] = against(
            texts_of["ask-sft"] * len(grpo), [t for name in grpo for t in texts_of[name]],
            judged_rows * len(grpo), params)
    out = {"rows": len(judged_rows), "split": "val+test", "reward_params": params,
           "models": {name: judged(texts, judged_rows, params) for name, texts in texts_of.items()},
           "vs_sft": vs_sft}
    path = out_dir / "grpo_seeds_pooled.json"
    write_text(path, json.dumps(out, indent=2))
    return json.loads(path.read_text())


def judged(texts: list[str], rows: list[dict], params: dict) -> dict:
    """Hit rates (`ask_hit_rates`) and adherence (the share of outputs that parse completely)."""
    fmt = format_reward(texts, task=["ask"] * len(texts))
    return {**ask_hit_rates(texts, rows, params),
            "adherence": sum(f == 1.0 for f in fmt) / max(1, len(fmt))}


def against(sft: list[str], texts: list[str], rows: list[dict], params: dict) -> dict:
    """`texts` against the SFT model's outputs on the same rows at depth 1, per query and per
    block: `paired_gain` with whole games resampled."""
    games = [r.get("game_seed") for r in rows]
    hits_a, hits_b = ask_row_hits(sft, rows, params, 1), ask_row_hits(texts, rows, params, 1)
    return {unit: paired_gain(hits_to_pairs(hits_a, unit == "per_query"),
                              hits_to_pairs(hits_b, unit == "per_query"), groups=games)
            for unit in ("per_query", "per_block")}


def markdown(out: dict) -> str:
    """The judged models, and each against ask-sft, as markdown tables."""
    lines = [f"| ask model, {out['rows']} {out['split']} rows | hit@1 | per query @1 | hit@3 "
             "| queries / row | adherence |", "|---|---|---|---|---|---|"]
    for name, h in out["models"].items():
        hit, per_query = h["hit_at"], h["query_hit_at"]
        lines.append(f"| {name} | {_num(hit.get('1'))} | {_num(per_query.get('1'))} "
                     f"| {_num(hit.get('3'))} | {_num(h.get('queries_per_row'), 2)} "
                     f"| {_num(h.get('adherence'))} |")
    if out.get("vs_sft"):
        lines += ["", f"| against ask-sft, {out['rows']} {out['split']} rows, depth 1 "
                  "| per query: gain [95% CI, games resampled] | games ahead / behind "
                  "| per block: gain [95% CI] | rows ahead / behind |", "|---|---|---|---|---|"]
        for name, g in out["vs_sft"].items():
            q, b = g["per_query"], g["per_block"]
            lines.append(f"| {name} | {q['gain']:+.3f} [{q['ci'][0]:+.3f}, {q['ci'][1]:+.3f}] "
                         f"| {q['groups_b_ahead']} / {q['groups_b_behind']} of {q['groups']} "
                         f"| {b['gain']:+.3f} [{b['ci'][0]:+.3f}, {b['ci'][1]:+.3f}] "
                         f"| {b['rows_b_ahead']} / {b['rows_b_behind']} |")
    return "\n".join(lines)


def _num(x: float | None, digits: int = 3) -> str:
    """`x` with `digits` decimals; "-" where nothing was measured (no query, no row)."""
    return "-" if x is None else f"{x:.{digits}f}"


def _outputs_path(path: Path) -> Path:
    return path.with_name(path.stem + "_outputs.json")


def _saved(path: Path, rows: int) -> dict:
    """What an earlier call wrote for the same number of rows, else nothing."""
    try:
        out = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return out if out.get("rows") == rows else {}
