"""What a role's training run reports: one table (base / SFT / SFT+GRPO), curves, samples.

    report = train_role(RoleTrainConfig(role="ask"))
    print(report.markdown())            # stage | task | adherence | accuracy | wall s | peak MiB
    report.save(results_dir("02_train_ask_model"))   # ask_table.{json,csv}, ask_report.json
    report.metrics()                    # the compact numbers a notebook's metrics.json holds

Every number comes from generation on held-out rows (greedy, no grammar): adherence is the
share of outputs that parse completely, accuracy the task's score (recall hit rate, engram F1,
answer accuracy). The same val rows judge every stage.
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mags_lib.manifest import write_json

STAGES: tuple[str, ...] = ("base", "sft", "grpo")
STAGE_LABELS = {"base": "base", "sft": "SFT", "grpo": "SFT+GRPO"}
ADHERENCE_TARGET = 0.95
"""The issue's target: adherence on the val split without a grammar."""

_COLUMNS = ("stage", "task", "n", "adherence", "format_mean", "accuracy_name", "accuracy",
            "op_accuracy", "steps", "train_s", "eval_s", "wall_s", "peak_rss_mb", "peak_cuda_mb")


@dataclass
class StageRecord:
    """One stage of a role run: its per-task generation reports and what it cost."""

    stage: str
    generation: dict[str, dict[str, Any]]
    wall_s: float
    peak_rss_mb: float | None
    peak_cuda_mb: float | None = None
    train_s: float = 0.0
    steps: int = 0
    lora_max_change: float = 0.0
    model_dir: str | None = None
    mining: dict[str, Any] | None = None
    """GRPO's prompt mining (`mining.mine_prompts`): candidates, how many scored below 1."""

    @property
    def eval_s(self) -> float:
        return sum(g.get("seconds", 0.0) for g in self.generation.values())


@dataclass
class RoleReport:
    """Everything `train_role` measured; `to_dict()` is JSON, `table()` the comparison rows."""

    role: str
    tasks: tuple[str, ...]
    config: dict[str, Any]
    data: dict[str, Any]
    stages: dict[str, StageRecord]
    loss_curve: list[dict] = field(default_factory=list)
    reward_curve: list[dict] = field(default_factory=list)
    test: dict[str, dict[str, Any]] | None = None
    test_note: str = ""
    wall_s: float = 0.0
    selected: dict[str, Any] = field(default_factory=dict)
    """The final model: {"stage", "model_dir", "reason"} (`selection.select_stage`); the test
    split judges this stage."""

    def table(self) -> list[dict[str, Any]]:
        """One row per stage and task (base, SFT, SFT+GRPO on the val rows)."""
        rows = []
        for name in STAGES:
            rec = self.stages[name]
            for task in self.tasks:
                g = rec.generation.get(task, {})
                rows.append({"stage": STAGE_LABELS[name], "task": task, "n": g.get("n", 0),
                             "adherence": g.get("adherence"), "format_mean": g.get("format_mean"),
                             "accuracy_name": g.get("accuracy_name"),
                             "accuracy": g.get("accuracy"),
                             "op_accuracy": g.get("op_accuracy"), "steps": rec.steps,
                             "train_s": round(rec.train_s, 1), "eval_s": round(rec.eval_s, 1),
                             "wall_s": round(rec.wall_s, 1),
                             "peak_rss_mb": _round(rec.peak_rss_mb),
                             "peak_cuda_mb": _round(rec.peak_cuda_mb)})
        return rows

    def markdown(self) -> str:
        """The table as Markdown (numbers to 3 places)."""
        cols = [c for c in _COLUMNS if c != "peak_cuda_mb" or any(
            r["peak_cuda_mb"] is not None for r in self.table())]
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for row in self.table():
            lines.append("| " + " | ".join(_cell(row[c]) for c in cols) + " |")
        return "\n".join(lines)

    def samples_text(self, n: int = 3) -> str:
        """The first `n` generations of each stage on the val rows, with their scores."""
        out = []
        for name in STAGES:
            for task, g in self.stages[name].generation.items():
                out.append(f"--- {STAGE_LABELS[name]} ({task}) ---")
                for s in g.get("samples", [])[:n]:
                    out.append(f"prompt: {s['prompt'][-160:]!r}\noutput: {s['output']!r}\n"
                               f"format={s['format']} task_score={s['task_score']}")
        return "\n".join(out)

    def metrics(self) -> dict[str, Any]:
        """Compact numbers: adherence and accuracy per stage and task, timings, the targets."""
        per_stage = {name: {task: _task_numbers(g) for task, g in rec.generation.items()}
                     | {"wall_s": rec.wall_s, "train_s": rec.train_s, "eval_s": rec.eval_s,
                        "steps": rec.steps, "lora_max_change": rec.lora_max_change,
                        "peak_rss_mb": rec.peak_rss_mb,
                        "peak_cuda_mb": rec.peak_cuda_mb}
                     | ({"mining": rec.mining} if rec.mining else {})
                     for name, rec in self.stages.items()}
        out: dict[str, Any] = {"role": self.role, "stages": per_stage, "wall_s": self.wall_s,
                               "targets": self.targets(), "data": self.data}
        if self.selected:
            out["selected_stage"] = self.selected.get("stage")
        if self.test is not None:
            out["test"] = {t: _task_numbers(g) | {"stage": self.selected.get("stage")}
                           for t, g in self.test.items()}
        else:
            out["test_note"] = self.test_note
        if self.reward_curve:
            out["reward_first"] = self.reward_curve[0].get("reward")
            out["reward_last"] = self.reward_curve[-1].get("reward")
        return out

    def targets(self) -> dict[str, Any]:
        """The issue's targets, per task: final adherence >= 95% (no grammar) and, for ask,
        a recall hit rate after GRPO above the SFT-only one: per block (some query finds the
        rule at the reward's depth, the stage accuracy) and per query (hit@1 of each query).
        With per-row hits in both reports (same rows), `recall_gain` holds each unit's paired
        gain with a 95% bootstrap interval over the rows' games (`compare.paired_gain`) and
        `beyond_noise` (the interval's low end above 0)."""
        out: dict[str, Any] = {}
        for task in self.tasks:
            sft = self.stages["sft"].generation.get(task, {})
            grpo = self.stages["grpo"].generation.get(task, {})
            adherence = grpo.get("adherence")
            out[task] = {"adherence": adherence,
                         "adherence_met": adherence is not None and adherence >= ADHERENCE_TARGET}
            if task == "ask":
                a, b = sft.get("accuracy"), grpo.get("accuracy")
                qa, qb = _query_hit_at_1(sft), _query_hit_at_1(grpo)
                out[task].update(recall_sft=a, recall_grpo=b,
                                 recall_grpo_above_sft=None if a is None or b is None else b > a,
                                 query_recall_sft=qa, query_recall_grpo=qb,
                                 query_recall_grpo_above_sft=(None if qa is None or qb is None
                                                              else qb > qa))
                gain = _recall_gain(sft, grpo)
                if gain:
                    out[task]["recall_gain"] = gain
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "table": self.table()}

    @classmethod
    def load(cls, path: str | Path) -> RoleReport:
        """A report back from its saved `<role>_report.json` (for later notebooks)."""
        import json

        data = json.loads(Path(path).read_text())
        data.pop("table", None)
        data["tasks"] = tuple(data["tasks"])
        data["stages"] = {k: StageRecord(**v) for k, v in data["stages"].items()}
        return cls(**data)

    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write <role>_table.json / .csv, <role>_curves.json and the full <role>_report.json."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"table": write_json(out / f"{self.role}_table.json", self.table()),
                 "curves": write_json(out / f"{self.role}_curves.json",
                                      {"sft_loss": self.loss_curve,
                                       "grpo_reward": self.reward_curve}),
                 "report": write_json(out / f"{self.role}_report.json", self.to_dict())}
        csv_path = out / f"{self.role}_table.csv"
        with csv_path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(_COLUMNS))
            writer.writeheader()
            writer.writerows(self.table())
        paths["csv"] = csv_path
        return paths


def _recall_gain(sft: dict[str, Any], grpo: dict[str, Any]) -> dict[str, Any] | None:
    """GRPO against SFT on the same ask rows, per query and per block: the paired gain, its
    interval with whole games resampled, the games where each is ahead; None without per-row
    hits (reports from before they were kept) or when the rows differ."""
    from mags_lib.train.compare import hits_to_pairs, paired_gain

    a, b = sft.get("row_hits_at_1"), grpo.get("row_hits_at_1")
    games = sft.get("row_games")
    if not a or not b or len(a) != len(b) or games != grpo.get("row_games"):
        return None
    if all(h is None for h in a):
        return None
    out = {}
    for unit in ("per_query", "per_block"):
        g = paired_gain(hits_to_pairs(a, unit == "per_query"),
                        hits_to_pairs(b, unit == "per_query"), groups=games)
        out[unit] = {**g, "beyond_noise": g["ci"][0] > 0}
    return out


def _task_numbers(g: dict[str, Any]) -> dict[str, Any]:
    """A generation report's headline numbers (and an ask model's hit rate at other depths)."""
    out = {"adherence": g.get("adherence"), "accuracy": g.get("accuracy"),
           "accuracy_name": g.get("accuracy_name"), "n": g.get("n")}
    for key in ("hit_at", "query_hit_at", "queries_per_row", "op_accuracy", "op_confusion"):
        if g.get(key) is not None:
            out[key] = g[key]
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.0f}"
    return "-" if value is None else str(value)


def compare_single_model(single: RoleReport, separate: dict[str, list[dict]]) -> list[dict]:
    """The single (mixed) model next to the separate role models, per task and stage.

    `separate` maps a task to the saved table of its own model (`<role>_table.json` rows);
    a task without one gets None in the separate columns.
    """
    rows = []
    for row in single.table():
        theirs = next((r for r in separate.get(row["task"], [])
                       if r["stage"] == row["stage"] and r["task"] == row["task"]), {})
        rows.append({"task": row["task"], "stage": row["stage"],
                     "accuracy_name": row["accuracy_name"],
                     "separate_adherence": theirs.get("adherence"),
                     "single_adherence": row["adherence"],
                     "separate_accuracy": theirs.get("accuracy"),
                     "single_accuracy": row["accuracy"]})
    return rows


def _query_hit_at_1(generation: dict[str, Any]) -> float | None:
    """The share of an ask report's queries that find the rule at rank 1 (keys are ints, or
    strings once the report went through JSON)."""
    at = generation.get("query_hit_at") or {}
    return at.get(1, at.get("1"))
