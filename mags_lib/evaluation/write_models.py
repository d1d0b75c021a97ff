"""Play several write (or ask) models in the closed loop on the same games, and compare them
by group.

    cfg = WriterLoopConfig()                        # notebook 06's varied held-out games
    out = play_writers({"f1-s0": "a.gguf", "outcome-s0": "b.gguf"}, cfg)
    out["writers"]["f1-s0"]["after_drift"]          # pooled accuracy with a Wilson interval
    compare_groups(out, {"f1-s0": "f1", "outcome-s0": "outcome"})  # means over seeds, t CI

Each write model plays `mags` (the trained ask model, notebook 04's answer model) with
everything else fixed, so a difference between two writers is the writer's. With
`role="ask"` the models played are ask models instead, beside notebook 04's write model
(notebook 11). By default the
games are the ones notebook 06 reports (seeds 0-2, varied surface, held-out phrasings);
`tools/writer_in_loop.py` passes notebook 01's val seeds in the *training* phrasings instead,
for choosing a recipe without the evaluation games. Games go to
`results/<output>/<writer name>/` (resumable, as every evaluation run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.evaluation.config import EvalConfig
from mags_lib.evaluation.metrics import accuracy, after_drift, t_interval


@dataclass
class WriterLoopConfig:
    """Which games the write models play and with what."""

    seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "game seeds (notebook 06's: 0-2); notebook 01's val seeds come from "
                "SynthConfig().resolved().split_seeds()['val']"})
    phrasings: str = field(default="heldout", metadata={
        "help": "'heldout' (notebook 06's varied surface) or 'train' (the phrasings the "
                "models were trained on: for choosing a recipe on val seeds)"})
    turns: int = field(default=200, metadata={"help": "turns per game"})
    agents: list[str] = field(default_factory=lambda: ["mags"], metadata={
        "help": "closed-loop agents each write model plays (registry names)"})
    decision_llm: str = field(default="auto", metadata={
        "help": "decision LLM as notebook 06's DECISION_LLM ('auto': the trained answer model)"})
    ask_model: str = field(default="auto", metadata={
        "help": "the loop's ask model ('auto': notebook 04's GGUF of the selected ask stage)"})
    write_model: str = field(default="auto", metadata={
        "help": "the loop's write model when the models played are ask models"})
    role: str = field(default="write", metadata={
        "help": "the role the played models fill: 'write' (notebook 08) or 'ask' (notebook 11)"})
    loop: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "LoopConfig overrides for the closed-loop agents (EvalConfig.loop)"})
    output: str = field(default="writers_in_loop", metadata={
        "help": "results/<output>/<writer name>/ receives each writer's games"})
    smoke: bool = field(default=False, metadata={
        "help": "one game of the evaluation config's SMOKE length"})

    def __post_init__(self) -> None:
        if self.role not in ("write", "ask"):
            raise MagsError(f"unknown role {self.role!r}", "use 'write' or 'ask'")
        if self.phrasings not in ("heldout", "train"):
            raise MagsError(f"unknown phrasings {self.phrasings!r}", "use 'heldout' or 'train'")
        if not self.seeds or self.turns < 1:
            raise MagsError(f"no seeds ({self.seeds}) or turns < 1 ({self.turns})",
                            "pass at least one seed and a positive number of turns")

    def eval_config(self, name: str, model: str) -> EvalConfig:
        """The evaluation run of one played model (`model`, a GGUF, in `self.role`)."""
        from mags_lib.evaluation.answer_model import decision_llm_settings
        from mags_lib.game import GameConfig
        from mags_lib.llm import LLMConfig

        decision = decision_llm_settings(self.decision_llm, "completion")
        return EvalConfig(
            agents=list(self.agents), seeds=list(self.seeds),
            game=GameConfig(episode_length=self.turns, surface="varied",
                            phrasings=self.phrasings),
            llm=LLMConfig(model=decision["model"], n_ctx=1024),
            answer_tags=decision["answer_tags"], prompt_format="completion",
            models={"ask": self.ask_model, "write": self.write_model, self.role: model},
            embedder="embedded", k=3, loop=dict(self.loop),
            smoke=self.smoke, smoke_seeds=1, output=f"{self.output}/{name}", verbose=False)


def play_writers(writers: dict[str, str], cfg: WriterLoopConfig) -> dict[str, Any]:
    """Each write model (name -> .gguf) plays `cfg.agents` on the same games. Per writer and
    agent: pooled accuracy and after-drift accuracy (Wilson intervals), per game accuracy,
    after-drift accuracy and what the writer stored (rule sentences, exact ones, ops)."""
    from mags_lib.evaluation.runner import run_eval

    shape = cfg.eval_config("-", "-").resolved()  # SMOKE cuts seeds and turns
    out: dict[str, Any] = {"role": cfg.role, "phrasings": cfg.phrasings,
                           "seeds": list(shape.seeds),
                           "turns": shape.game.episode_length, "writers": {}}
    for name, path in writers.items():
        result = run_eval(cfg.eval_config(name, path))
        for agent in cfg.agents:
            games = [g for g in result.games if g.agent == agent]
            decisions = [d for g in games for d in g.decisions]
            key = name if len(cfg.agents) == 1 else f"{name}/{agent}"
            out["writers"][key] = {
                "model": str(path), "agent": agent,
                "accuracy": accuracy(decisions), "after_drift": after_drift(decisions),
                "per_game": [{"seed": g.seed, "accuracy": g.accuracy,
                              "after_drift": after_drift(g.decisions)["accuracy"],
                              "rule_stores": g.loop.get("rule_stores", 0),
                              "rule_stores_exact": g.loop.get("rule_stores_exact", 0),
                              "ops": {k: v for k, v in g.loop.items() if k.startswith("op_")}}
                             for g in games]}
    return out


def compare_groups(played: dict[str, Any], group_of: dict[str, str],
                   reference: str | None = None) -> dict[str, dict[str, Any]]:
    """Per group (e.g. a training objective, its seeds the writers): the mean over its writers
    of pooled accuracy and after-drift accuracy, with a 95% t interval over writers. With
    `reference` (a group), each other group also gets its difference in after-drift accuracy
    to it, paired by position within the groups (seed i against seed i) when they are the same
    size, with a t interval over the pairs."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for name, group in group_of.items():
        if name not in played["writers"]:
            raise MagsError(f"writer {name!r} was not played",
                            f"play it first; played: {sorted(played['writers'])}")
        groups.setdefault(group, []).append(played["writers"][name])
    out: dict[str, dict[str, Any]] = {}
    for group, runs in groups.items():
        row: dict[str, Any] = {"n": len(runs)}
        for key in ("accuracy", "after_drift"):
            values = [r[key]["accuracy"] for r in runs]  # None: no such decision was played
            known = [v for v in values if v is not None]
            lo, hi = t_interval(known)
            row[key] = {"mean": mean(known) if known else None, "ci_low": lo, "ci_high": hi,
                        "values": values}
        out[group] = row
    if reference is not None and reference in out:
        ref = out[reference]["after_drift"]["values"]
        for group, row in out.items():
            own = row["after_drift"]["values"]
            if group == reference or len(own) != len(ref):
                continue
            diffs = [a - b for a, b in zip(own, ref, strict=True)
                     if a is not None and b is not None]
            if diffs:
                lo, hi = t_interval(diffs)
                row["after_drift_minus_reference"] = {"reference": reference,
                                                      "mean": mean(diffs), "n": len(diffs),
                                                      "ci_low": lo, "ci_high": hi}
    return out


def markdown(played: dict[str, Any], groups: dict[str, dict[str, Any]] | None = None) -> str:
    """The writers' closed-loop table (and the groups' means, if given) as markdown."""
    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.3f}"

    role = f"{played.get('role', 'write')} model"
    article = "an" if role.startswith("ask") else "a"
    lines = [f"{len(played['seeds'])} games {article} {role} (varied surface, "
             f"{played['phrasings']} phrasings, seeds {played['seeds']}), "
             f"{played['turns']} turns", "",
             f"| {role} | accuracy [95% CI] | after drift [95% CI] | per game | rule sentences "
             "stored (exact) |", "|---|---|---|---|---|"]
    for name, w in played["writers"].items():
        a, d = w["accuracy"], w["after_drift"]
        per = " / ".join(f(g["accuracy"]) for g in w["per_game"])
        stores = " / ".join(f"{g['rule_stores']} ({g['rule_stores_exact']})"
                            for g in w["per_game"])
        lines.append(f"| {name} | {f(a['accuracy'])} [{f(a['ci_low'])}, {f(a['ci_high'])}] | "
                     f"{f(d['accuracy'])} [{f(d['ci_low'])}, {f(d['ci_high'])}] | {per} | "
                     f"{stores} |")
    if groups:
        lines += ["", f"| group | {role}s | accuracy, mean [95% t CI] | after drift, mean [95% t "
                  "CI] | after drift minus reference [95% t CI] |", "|---|---|---|---|---|"]
        for group, g in groups.items():
            cells = [f"{f(g[k]['mean'])} [{f(g[k]['ci_low'])}, {f(g[k]['ci_high'])}]"
                     for k in ("accuracy", "after_drift")]
            diff = g.get("after_drift_minus_reference")
            cells.append(f"{diff['mean']:+.3f} [{f(diff['ci_low'])}, {f(diff['ci_high'])}] vs "
                         f"{diff['reference']}" if diff else "-")
            lines.append(f"| {group} | {g['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
