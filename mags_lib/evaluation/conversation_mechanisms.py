"""Which memory mechanisms pay off on conversations: paired ablations (notebook 15).

    cfg = ConversationMechanismsConfig(smoke=True)
    result = run_conversation_mechanisms(cfg)    # {"persona": {...}, "locomo": {...} or a note}
    print(mechanisms_markdown(result))

Notebook 09 switches the memory's mechanisms off one at a time in the game; this does the same
on conversations. Each agent of `agents` (the closed loop on MAGS's trained ask and write
models) reads every conversation once with its whole memory and once per mechanism of
`mechanisms` switched off (`agents.MECHANISMS`, by name: `traversal` recalls the anchors alone,
`hebbian` learns no edge from co-recall, `decay` lets no edge or confidence fade, `contradiction`
merges nothing below cosine 0.99 and supersedes nothing), then answers the same questions with
the same reader (`conversation_qa`, agent names 'mags/no_hebbian').

The effect of a mechanism is paired by question: the score with the whole memory minus the score
without it, on token F1 (answerable questions), the persona rates of a question on a fact's value
(current named, stale named, earlier named) and evidence recall@k, with a 95% interval by
bootstrap over conversations (over questions where one conversation is all there is; the
result says which). A positive effect means the mechanism helps. Memory size and supersession
(against the gold updates) are reported beside, unpaired.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mags_lib.evaluation.conversation_qa import (
    ConversationEvalConfig,
    ablated_name,
    dialogue_memory,
    run_conversation_eval,
)

DEFAULT_MECHANISMS = ("traversal", "hebbian", "decay", "contradiction")
"""The four mechanisms issue 40 asks to ablate on conversations (notebook 09's in the game)."""

METRICS = ("f1", "current", "stale", "earlier", "recall@5", "recall@10")
"""Paired per question: F1 on answerable questions, the persona rates (1 / 0 on a question of
that kind; `stale` is lower-is-better), evidence recall@k where the agent's lines name turns."""


@dataclass
class ConversationMechanismsConfig:
    persona_split: str = field(default="test", metadata={
        "help": "persona split: 'test' (no choice was made on it, and none is made here: an "
                "ablation measures, it does not tune) or 'dev'"})
    personas: int = field(default=6, metadata={"help": "persona conversations (first seeds)"})
    persona_questions: int | None = field(default=None, metadata={
        "help": "questions per persona conversation (None: all)"})
    locomo_split: str = field(default="dev", metadata={
        "help": "LoCoMo split: 'dev' is conv-43 (a write pass costs ~3 min a conversation and "
                "mechanism on 2 cores, so the five test conversations would take hours)"})
    locomo_conversations: int = field(default=1, metadata={"help": "LoCoMo conversations"})
    locomo_questions: int | None = field(default=60, metadata={
        "help": "questions per LoCoMo conversation, a seeded sample (None: all)"})
    agents: list[str] = field(default_factory=lambda: ["mags", "mags_episodic"], metadata={
        "help": "closed-loop agents ablated on the persona set"})
    locomo_agents: list[str] = field(default_factory=lambda: ["mags_episodic"], metadata={
        "help": "closed-loop agents ablated on LoCoMo (MAGS's LoCoMo agent keeps the turns)"})
    mechanisms: list[str] = field(default_factory=lambda: list(DEFAULT_MECHANISMS), metadata={
        "help": "mechanisms switched off one at a time (names of agents.MECHANISMS)"})
    answer_llm: str = field(default="auto", metadata={
        "help": "the reader: 'auto' (notebook 04's trained answer model, else the base model), "
                "'embedded' or a .gguf path"})
    embedder: str = field(default="embedded", metadata={
        "help": "'embedded' (all-MiniLM-L6-v2) or 'hashing' (a fast fake)"})
    k: int = field(default=5, metadata={"help": "memory lines per persona question"})
    locomo_k: int = field(default=10, metadata={
        "help": "memory lines per LoCoMo question, and hits per ask query there"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={"help": "the ask and write models ('auto': "
                                                     "notebook 04's GGUFs; a .gguf path)"})
    memory: dict[str, Any] = field(default_factory=dialogue_memory, metadata={
        "help": "MemoryConfig overrides under every ablation (default memory.DIALOGUE_MEMORY)"})
    seed: int = field(default=0, metadata={"help": "question sample, generation and bootstrap"})
    smoke: bool = field(default=False, metadata={"help": "shrink every size"})

    def __post_init__(self) -> None:
        from mags_lib.agents import MECHANISMS
        from mags_lib.errors import MagsError

        unknown = [m for m in self.mechanisms if m not in MECHANISMS]
        if unknown:
            raise MagsError(f"unknown mechanism(s) {unknown}",
                            f"switch off one of {', '.join(MECHANISMS)}")

    def resolved(self) -> ConversationMechanismsConfig:
        """The sizes actually run (SMOKE shrinks them; the code is the same)."""
        if not self.smoke:
            return self
        return ConversationMechanismsConfig(**{
            **asdict(self), "personas": 1, "persona_questions": 6, "locomo_questions": 4,
            "agents": self.agents[:1], "locomo_agents": [], "smoke": True})


def question_outcomes(row: dict[str, Any], qa: Any) -> dict[str, float]:
    """The scores of one answered question that `METRICS` pairs (only those that apply).

    >>> from mags_lib.conversations.types import QA
    >>> qa = QA("Where do I live now?", "Lisbon", (), 4, kind="current", stale=("Porto",))
    >>> question_outcomes({"f1": 0.5, "prediction": "Porto", "recall@5": 1.0}, qa)
    {'f1': 0.5, 'recall@5': 1.0, 'current': 0.0, 'stale': 1.0}
    """
    from mags_lib.evaluation.qa_metrics import persona_flags

    out = {key: float(row[key]) for key in ("f1", "recall@5", "recall@10") if key in row}
    if qa.kind in ("current", "earlier"):
        names = {"current_accuracy": "current", "stale_rate": "stale",
                 "earlier_accuracy": "earlier"}
        out |= {names[k]: float(v) for k, v in persona_flags(qa, row["prediction"]).items()}
    return out


def _interval(diffs: list[tuple[str, float]], seed: int = 0) -> tuple[list[float] | None, str]:
    """95% percentile interval of the mean paired difference by
    `evidence_recall.bootstrap_by_conversation`: whole conversations resampled where there are
    two or more, else each question as its own group. ([lo, hi] or None, what was resampled)."""
    from mags_lib.evaluation.evidence_recall import bootstrap_by_conversation

    if len(diffs) < 2:
        return None, "none"
    by = "conversations" if len({conv for conv, _ in diffs}) >= 2 else "questions"
    rows = [{"conversation": conv if by == "conversations" else f"{conv}:{i}", "diff": d}
            for i, (conv, d) in enumerate(diffs)]
    lo, hi = bootstrap_by_conversation(rows, "diff", seed=seed)
    return [lo, hi], by


def paired_effects(rows: list[dict[str, Any]], qas: dict[tuple[str, int], Any], full: str,
                   ablated: str, seed: int = 0) -> dict[str, Any]:
    """Per metric of `METRICS`: questions paired, the mean with the whole memory (`full`) and
    without the mechanism (`ablated`), the effect (full - ablated: positive where the mechanism
    helps, except `stale`, where it helps when negative), its 95% interval and what was
    resampled, and whether the interval excludes 0."""
    def scored(name: str) -> dict[tuple[str, int], dict[str, float]]:
        return {(r["conversation"], r["question"]):
                question_outcomes(r, qas[(r["conversation"], r["question"])])
                for r in rows if r["agent"] == name}

    on, off = scored(full), scored(ablated)
    out: dict[str, Any] = {}
    for metric in METRICS:
        pairs = [(key, on[key][metric], off[key][metric]) for key in sorted(set(on) & set(off))
                 if metric in on[key] and metric in off[key]]
        if not pairs:
            continue
        ci, by = _interval([(key[0], a - b) for key, a, b in pairs], seed=seed)
        effect = float(np.mean([a - b for _, a, b in pairs]))
        out[metric] = {"n": len(pairs), "full": float(np.mean([a for _, a, _ in pairs])),
                       "ablated": float(np.mean([b for _, _, b in pairs])),
                       "effect": effect, "ci95": ci, "resampled": by,
                       "separated": bool(ci and (ci[0] > 0 or ci[1] < 0))}
    return out


def ablation_table(qa: dict[str, Any], agents: list[str], mechanisms: list[str],
                   qas: dict[tuple[str, int], Any], seed: int = 0) -> list[dict[str, Any]]:
    """One entry per (agent, mechanism): the paired effects and, unpaired, the memory size and
    supersession of each side, from a `run_conversation_eval` result over the agents and their
    ablated names."""
    summary = qa["summary"]
    out = []
    for agent in agents:
        if agent not in summary:
            continue
        for mechanism in mechanisms:
            name = ablated_name(agent, mechanism)
            if name not in summary:
                continue
            sides = {side: {"memory_size": summary[n].get("memory_size_mean"),
                            "supersession": (summary[n].get("writing") or {}).get("supersession")}
                     for side, n in (("full", agent), ("ablated", name))}
            out.append({"agent": agent, "mechanism": mechanism,
                        "effects": paired_effects(qa["rows"], qas, agent, name, seed), **sides})
    return out


def run_conversation_mechanisms(cfg: ConversationMechanismsConfig,
                                on_part: Callable[[dict[str, Any]], None] | None = None
                                ) -> dict[str, Any]:
    """The study's result: per source the QA runs (every row) and the ablation table;
    `on_part(result so far)` after the persona part and after LoCoMo's."""
    from mags_lib.evaluation.conversation_study import (
        reader_model,
        role_models,
        study_embedder,
    )
    from mags_lib.llm import load_llm
    from mags_lib.tasks.registry import get_task

    run = cfg.resolved()
    t0 = time.perf_counter()
    embedder = study_embedder(run.embedder)
    reader, reader_note = reader_model(run.answer_llm)
    llm = load_llm(model=reader)
    roles, why = role_models(run.models)
    result: dict[str, Any] = {"config": asdict(run), "reader": reader_note}
    if why:
        result["missing"] = why
        return result

    def part(convs: list[Any], agents: list[str], k: int, questions: int | None,
             loop: dict[str, Any]) -> dict[str, Any]:
        names = [n for a in agents for n in (a, *(ablated_name(a, m) for m in run.mechanisms))]
        qa_cfg = ConversationEvalConfig(agents=names, k=k, memory=dict(run.memory), loop=loop,
                                        max_questions=questions, seed=run.seed)
        qa = run_conversation_eval(convs, llm, qa_cfg, embedder=embedder, roles=roles)
        qas = {(c.sample_id, i): q for c in convs for i, q in enumerate(c.qa)}
        return {"conversations": [c.sample_id for c in convs], "qa": qa,
                "ablations": ablation_table(qa, agents, run.mechanisms, qas, run.seed)}

    personas = get_task("persona").episodes(run.persona_split, run.personas)
    result["persona"] = {"split": run.persona_split,
                         **part(personas, run.agents, run.k, run.persona_questions, {})}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if on_part:
        on_part(result)
    locomo = get_task("locomo")
    if not run.locomo_agents:
        result["locomo"] = {"skipped": "no LoCoMo agents in this run (SMOKE runs none: a "
                                       "write pass is minutes a conversation)"}
    elif not locomo.available():
        result["locomo"] = {"missing": locomo.missing_message()}
    else:
        convs = locomo.episodes(run.locomo_split, run.locomo_conversations)
        result["locomo"] = {"split": run.locomo_split,
                            **part(convs, run.locomo_agents, run.locomo_k, run.locomo_questions,
                                   {"query_k": run.locomo_k})}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if on_part:
        on_part(result)
    return result


LOWER_IS_BETTER = frozenset({"stale"})


def _cell(e: dict[str, Any] | None) -> str:
    if not e:
        return "–"
    ci = e.get("ci95")
    interval = f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""
    text = f"{e['full']:.3f} → {e['ablated']:.3f}: {e['effect']:+.3f}{interval}"
    return f"**{text}**" if e.get("separated") else text


def mechanisms_markdown(result: dict[str, Any]) -> str:
    """One table per source: each agent and mechanism switched off, each metric as 'with it ->
    without it: effect [95% interval]' (bold where the interval excludes 0), memory items."""
    if result.get("missing"):
        return f"Not run: {result['missing']}."
    out = [f"Every agent answers with {result['reader']}. Effect = with the mechanism minus "
           "without it, paired by question (for `stale`, lower is better)."]
    for source in ("persona", "locomo"):
        part = result.get(source) or {}
        if "missing" in part or "skipped" in part:
            out.append(f"\n**{source}**: {part.get('missing') or part.get('skipped')}")
            continue
        if not part.get("ablations"):
            continue
        table = part["ablations"]
        metrics = [m for m in METRICS if any(m in t["effects"] for t in table)]
        resampled = sorted({e["resampled"] for t in table for e in t["effects"].values()}
                           - {"none"})
        out.append(f"\n**{source}** ({part['split']} split: {', '.join(part['conversations'])};"
                   f" intervals by bootstrap over {' / '.join(resampled) or 'nothing'})\n")
        counts = {m: max(t["effects"][m]["n"] for t in table if m in t["effects"])
                  for m in metrics}
        out.append("| agent | mechanism off | " + " | ".join(
            f"{m} (n {counts[m]}{', lower better' if m in LOWER_IS_BETTER else ''})"
            for m in metrics) + " | memory items with → without |")
        out.append("|---|---|" + "---|" * (len(metrics) + 1))
        for t in table:
            size = (f"{t['full']['memory_size'] or 0:.0f} → "
                    f"{t['ablated']['memory_size'] or 0:.0f}")
            out.append(f"| {t['agent']} | {t['mechanism']} | "
                       + " | ".join(_cell(t["effects"].get(m)) for m in metrics)
                       + f" | {size} |")
    return "\n".join(out)


def separated_effects(result: dict[str, Any]) -> list[str]:
    """One phrase per (source, agent, mechanism, metric) whose interval excludes 0."""
    out = []
    for source in ("persona", "locomo"):
        for t in (result.get(source) or {}).get("ablations") or []:
            for metric, e in t["effects"].items():
                if e["separated"]:
                    out.append(f"{source} {t['agent']} without {t['mechanism']}: {metric} "
                               f"{e['full']:.3f} -> {e['ablated']:.3f}")
    return out


HEADLINE_METRICS = {"persona": "current", "locomo": "f1"}
"""The metric the README's line shows of each source (the rest: `reports/RESULTS.md`)."""


def mechanisms_headline(result: dict[str, Any]) -> str | None:
    """The README's sentence: each mechanism's effect on each source's headline metric with
    its interval, per agent, then every effect whose interval excludes 0."""
    parts = []
    for source, metric in HEADLINE_METRICS.items():
        part = result.get(source) or {}
        by_agent: dict[str, list[str]] = {}
        for t in part.get("ablations") or []:
            e = t["effects"].get(metric)
            if e:
                ci = e.get("ci95")
                by_agent.setdefault(t["agent"], []).append(
                    f"{t['mechanism']} {e['effect']:+.3f}"
                    + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else ""))
        if by_agent:
            parts.append(f"{source} {part['split']} {metric}: " + "; ".join(
                f"`{agent}` " + ", ".join(cells) for agent, cells in by_agent.items()))
    if not parts:
        return None
    separated = separated_effects(result)
    return (". ".join(parts) + ". Intervals that exclude 0: "
            + ("; ".join(separated) if separated else "none") + ".")
