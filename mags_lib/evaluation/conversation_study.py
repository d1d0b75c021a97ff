"""Notebook 12's study: memory on conversations, the persona set and LoCoMo side by side.

    cfg = ConversationStudyConfig(smoke=True)
    result = run_conversation_study(cfg)      # {"persona": {...}, "locomo": {...} or a note}
    print(study_markdown(result))

Three measurements on each source, all on the splits meant for development (persona 'dev',
LoCoMo's training conversations); the test splits are run once a configuration is frozen:

1. evidence recall@5 / @10 of raw turns in a `LiquidMemory` against flat BM25
   (`evidence_recall.py`);
2. supersession by `LiquidMemory`'s defaults (persona only, where gold updates are known): the
   gold facts written in order, and the user's raw turns written in order (`supersession.py`);
3. question answering by the agents with one answer model (`conversation_qa.py`), with
   `gold_writes` as the labelled upper bound.

Where LoCoMo is not on the machine the LoCoMo part says so (`locomo.missing_message`) and the
rest runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.evaluation.conversation_qa import (
    ConversationEvalConfig,
    ask_validity,
    bound_breaches,
    dialogue_memory,
    run_conversation_eval,
    write_validity,
)


@dataclass
class ConversationStudyConfig:
    persona_split: str = field(default="dev", metadata={"help": "persona split studied"})
    personas: int = field(default=6, metadata={"help": "persona conversations (first seeds)"})
    persona_questions: int | None = field(default=None, metadata={
        "help": "questions per persona conversation (None: all)"})
    locomo_split: str = field(default="dev", metadata={
        "help": "LoCoMo split studied: 'dev' is conv-43, the training conversation no dataset "
                "holds (the other four trained the models, so `mags` is judged on it alone)"})
    locomo_conversations: int = field(default=1, metadata={"help": "LoCoMo conversations"})
    locomo_questions: int | None = field(default=60, metadata={
        "help": "questions per LoCoMo conversation for QA (evidence recall of raw turns uses "
                "all); each costs a few seconds an agent on 2 cores, full_context most"})
    agents: list[str] = field(default_factory=lambda: ["bare", "full_context", "static_rag",
                                                       "mem0", "gold_writes"], metadata={
        "help": "agents answering on the persona set (gold_writes: the upper bound)"})
    locomo_agents: list[str] = field(default_factory=lambda: ["bare", "full_context",
                                                              "static_rag", "gold_writes"],
                                     metadata={"help": "agents answering on LoCoMo (mem0 makes "
                                                       "an LLM call a turn: ~40 min a "
                                                       "conversation on 2 cores)"})
    answer_llm: str = field(default="auto", metadata={
        "help": "the reader every agent shares: 'auto' (notebook 04's trained answer model, else "
                "the embedded base model, said so in the result's `reader`), 'embedded' (the "
                "base model) or a .gguf path"})
    embedder: str = field(default="embedded", metadata={
        "help": "'embedded' (all-MiniLM-L6-v2) or 'hashing' (a fast fake)"})
    k: int = field(default=5, metadata={"help": "memory lines per persona question"})
    locomo_k: int = field(default=10, metadata={
        "help": "memory lines per LoCoMo question (so that evidence recall@10 is measured); "
                "the closed loop recalls as many per ask query"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={
        "help": "the ask and write models of 'mags' ('auto': notebook 04's GGUFs of the selected "
                "stages; a .gguf path). Where they are missing, 'mags' is left out and the "
                "result says why"})
    memory: dict[str, Any] = field(default_factory=dialogue_memory, metadata={
        "help": "MemoryConfig overrides of every reader's memory and of the 'memory' retriever "
                "(default memory.DIALOGUE_MEMORY, the dialogue's settings)"})
    smoke: bool = field(default=False, metadata={"help": "shrink every size"})

    def resolved(self) -> ConversationStudyConfig:
        """The sizes actually run (SMOKE shrinks them; the code is the same)."""
        if not self.smoke:
            return self
        return ConversationStudyConfig(
            persona_split=self.persona_split, personas=1, persona_questions=6,
            locomo_split=self.locomo_split, locomo_conversations=1, locomo_questions=4,
            agents=self.agents,  # LoCoMo: no agent that calls a model on each of ~600 turns
            locomo_agents=[a for a in self.locomo_agents
                           if not a.startswith("mags") and a != "mem0"],
            answer_llm=self.answer_llm,
            embedder=self.embedder, k=self.k, locomo_k=self.locomo_k, models=dict(self.models),
            memory=dict(self.memory), smoke=True)


def role_models(models: dict[str, str],
                needed: tuple[str, ...] = ("ask", "write")) -> tuple[dict[str, Any], str | None]:
    """The loaded trained models of `mags` named in `needed` (by default its ask and write
    models; `agents.registry.trained_roles` says which an agent reads), each from `models`
    ("auto": the latest of notebook 04's files), or ({}, the reason) when one is missing."""
    from mags_lib.checkpoints import final_model_name
    from mags_lib.evaluation.answer_model import find_gguf
    from mags_lib.llm import LLMConfig, load_llm

    roles = {}
    for role in needed:
        spec = models.get(role, "auto")
        path = find_gguf(final_model_name(role)) if spec == "auto" else spec
        if path is None:
            return {}, (f"no trained {role} model (models/gguf/{role}-*.gguf): run notebooks "
                        "02-04 (make reproduce) or name a .gguf in models")
        roles[role] = load_llm(LLMConfig(model=str(path), n_ctx=1024))
    return roles, None


def model_ids(reader: Any, roles: dict[str, Any]) -> dict[str, str]:
    """Which model produced a result, by name and content: {"reader": ..., role: ...}, each
    the backend's name (a GGUF's carries its sha256 prefix, `llm/llamacpp.py`), so that a table
    says which training draw it came from (two trainings of one recipe on two machines give two
    files and different numbers).

    >>> class M: name = "llamacpp:write-grpo-q8_0.gguf:b979339cb3bd4d82"
    >>> model_ids(M(), {"write": M(), "prompted": None})
    {'reader': 'llamacpp:write-grpo-q8_0.gguf:b979339cb3bd4d82', 'write': 'llamacpp:write-grpo-q8_0.gguf:b979339cb3bd4d82'}
    """
    out = {"reader": str(getattr(reader, "name", reader))}
    out.update({role: str(getattr(m, "name", m)) for role, m in roles.items() if m is not None})
    return out


def prompted_role(agents: list[str], reader: str, llm: Any) -> dict[str, Any]:
    """{"prompted": the embedded base model} where a prompted baseline (`mem0`,
    `mags_prompted`) is among `agents`, else {}. They are the base model prompted with examples,
    never the trained reader: that model answers `<answer>...</answer>` whatever it is asked,
    so as `mem0`'s writer it wrote 6 parsable lines of 408 on the persona test set. `llm` is
    reused where the reader (`reader`, an LLMConfig.model) is the base model."""
    from mags_lib.agents.registry import PROMPTED_AGENTS

    if not any(a in PROMPTED_AGENTS for a in agents):
        return {}
    from mags_lib.llm import load_llm

    return {"prompted": llm if reader == "embedded" else load_llm(model="embedded")}


def reader_model(spec: str) -> tuple[str, str]:
    """(LLMConfig.model, what it is) of the answer model every agent shares: `spec` 'auto' is
    notebook 04's GGUF of the selected answer stage where there is one, else the embedded base
    model; 'embedded' the base model; anything else a .gguf path, which must exist."""
    from mags_lib.checkpoints import final_model_name
    from mags_lib.evaluation.answer_model import find_gguf

    if spec == "auto":
        trained = find_gguf(final_model_name("answer"))
        if trained is not None:
            return str(trained), f"the trained answer model {trained.name}"
        return "embedded", ("the embedded base model (no trained answer model in models/gguf/: "
                            "run notebooks 02 and 04)")
    if spec == "embedded":
        return spec, "the embedded base model"
    if not Path(spec).is_file():
        raise MagsError(f"answer model {spec} not found", "name a .gguf file, 'embedded' or 'auto'")
    return spec, f"the answer model {Path(spec).name}"


def study_embedder(kind: str) -> Any:
    """The study's embedder: 'hashing' (a fast fake) or all-MiniLM-L6-v2, memoised."""
    from mags_lib.embed import HashingEmbedder, MemoEmbedder, default_embedder

    return HashingEmbedder() if kind == "hashing" else MemoEmbedder(default_embedder())


def evidence_summary(convs: list[Any], embedder: Any,
                     memory: dict[str, Any] | None = None) -> dict[str, Any]:
    """recall@k over the same raw turns: of the memory as the dialogue's readers configure it
    (`memory` overrides, default `memory.DIALOGUE_MEMORY`) and of flat BM25."""
    from mags_lib.evaluation.evidence_recall import conversation_rows, summarize
    from mags_lib.memory import MemoryConfig

    config = MemoryConfig.from_dict(dialogue_memory() if memory is None else memory)
    return {name: summarize(r for c in convs for r in conversation_rows(
        c, retriever=name, embedder=embedder, config=config)) for name in ("memory", "bm25")}


def supersession_summary(convs: list[Any], embedder: Any) -> dict[str, Any]:
    """Supersession by the memory's defaults against the gold updates, pooled: once with the
    gold facts written, once with the user's raw turns written (what a memory without a write
    model gets)."""
    from mags_lib.evaluation.supersession import (
        gold_source_pairs,
        gold_write_pairs,
        supersession_scores,
        write_gold,
    )
    from mags_lib.memory import LiquidMemory

    out: dict[str, Any] = {}
    for how in ("gold_facts", "raw_turns"):
        total = {"correct": 0, "predicted": 0, "gold": 0}
        false: list[Any] = []
        for conv in convs:
            mem = LiquidMemory(embedder=embedder)
            if how == "gold_facts":
                write_gold(mem, conv)
                s = supersession_scores(mem, gold_write_pairs(conv))
            else:
                mem.observe_many([{"text": t.text, "block": "semantic", "source": t.dia_id}
                                  for t in conv.turns() if t.speaker == conv.speakers[0]])
                s = supersession_scores(mem, gold_source_pairs(conv), by="source")
            for key in total:
                total[key] += s[key]
            false += s["false"]
        out[how] = {**total,
                    "precision": total["correct"] / total["predicted"] if total["predicted"]
                    else None,
                    "recall": total["correct"] / total["gold"] if total["gold"] else None,
                    "false_examples": false[:5]}
    return out


def run_conversation_study(cfg: ConversationStudyConfig,
                           on_part: Callable[[dict[str, Any]], None] | None = None
                           ) -> dict[str, Any]:
    """The study's result; `on_part(result so far)` is called after the persona part and again
    after the LoCoMo part, so a caller can save each as it finishes (LoCoMo's write pass takes
    an hour on 2 cores)."""
    from mags_lib.llm import load_llm
    from mags_lib.tasks.registry import get_task

    run = cfg.resolved()
    t0 = time.perf_counter()
    embedder = study_embedder(run.embedder)
    reader, reader_note = reader_model(run.answer_llm)
    llm = load_llm(model=reader)
    personas = get_task("persona").episodes(run.persona_split, run.personas)
    locomo = get_task("locomo")
    roles, why = ({}, None)
    if any(a.startswith("mags") and a != "mags_prompted"
           for a in (*run.agents, *run.locomo_agents)):
        roles, why = role_models(run.models)
    agents = [a for a in run.agents if roles or not a.startswith("mags") or a == "mags_prompted"]
    locomo_agents = [a for a in run.locomo_agents
                     if roles or not a.startswith("mags") or a == "mags_prompted"]
    roles = {**roles, **prompted_role([*agents, *locomo_agents], reader, llm)}
    qa_cfg = ConversationEvalConfig(agents=agents, k=run.k, memory=dict(run.memory),
                                    max_questions=run.persona_questions)
    result: dict[str, Any] = {"config": asdict(run), "reader": reader_note,
                              "models": model_ids(llm, roles), "persona": {
        "split": run.persona_split, "conversations": len(personas),
        "evidence": evidence_summary(personas, embedder, run.memory),
        "supersession": supersession_summary(personas, embedder),
        "qa": run_conversation_eval(personas, llm, qa_cfg, embedder=embedder, roles=roles)}}
    if why:
        result["left_out"] = {"agents": sorted(set(run.agents + run.locomo_agents)
                                               - set(agents + locomo_agents)), "why": why}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if on_part:
        on_part(result)
    if not locomo.available():
        result["locomo"] = {"missing": locomo.missing_message()}
    else:
        convs = locomo.episodes(run.locomo_split, run.locomo_conversations)
        qa_cfg = ConversationEvalConfig(agents=locomo_agents, k=run.locomo_k,
                                        memory=dict(run.memory),
                                        max_questions=run.locomo_questions,
                                        loop={"query_k": run.locomo_k})
        result["locomo"] = {"split": run.locomo_split, "conversations": len(convs),
                            "evidence": evidence_summary(convs, embedder, run.memory),
                            "qa": run_conversation_eval(convs, llm, qa_cfg, embedder=embedder,
                                                        roles=roles)}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if on_part:
        on_part(result)
    return result


def _f(x: Any, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(entry: dict[str, Any], key: str) -> str:
    lo, hi = entry.get(f"{key}_ci95") or (None, None)
    return f"{_f(entry.get(key))} ({_f(lo, 2)}–{_f(hi, 2)})" if lo is not None else _f(
        entry.get(key))


def _rate(entry: dict[str, Any], key: str) -> str:
    """A persona rate with its 95% interval where the run saved one (`persona_ci95`)."""
    lo, hi = (entry.get("persona_ci95") or {}).get(key) or (None, None)
    value = (entry.get("persona") or {}).get(key)
    return f"{_f(value)} ({_f(lo, 2)}–{_f(hi, 2)})" if lo is not None else _f(value)


def _validity(counts: dict[str, int]) -> str:
    write, ask = write_validity(counts), ask_validity(counts)
    return _f(write) if ask is None else f"{_f(write)} / {_f(ask)}"


def study_markdown(result: dict[str, Any]) -> str:
    """The study's tables: evidence recall, supersession, QA per agent, and where the questions
    on a fact's value were lost (`failure_stages`; results saved before it have none), per
    source."""
    from mags_lib.evaluation.failure_stages import stages_markdown

    out = [f"Every agent answers with {result['reader']}."] if result.get("reader") else []
    if result.get("models"):  # results saved before 2026-12-01 do not name them
        out.append("Model files (name and sha256 prefix): " + ", ".join(
            f"{role} `{name.split(':', 1)[-1]}`" for role, name in result["models"].items())
            + ".")
    for source in ("persona", "locomo"):
        part = result.get(source)
        if not part:
            continue
        if "missing" in part:
            out.append(f"**{source}**: {part['missing']}")
            continue
        out.append(f"**{source}** ({part['split']} split, {part['conversations']} "
                   "conversations)\n\n| retriever | recall@5 (95% CI) | recall@10 (95% CI) |\n"
                   "|---|---|---|")
        for name, s in part["evidence"].items():
            out.append(f"| {name} | {_ci(s['all'], 'recall@5')} | {_ci(s['all'], 'recall@10')} |")
        if "supersession" in part:
            out.append("\n| written | supersession precision | recall | gold updates |\n"
                       "|---|---|---|---|")
            for how, s in part["supersession"].items():
                out.append(f"| {how} | {_f(s['precision'])} | {_f(s['recall'])} | {s['gold']} |")
        out.append("\n| agent | F1 (95% CI) | EM | evidence@5 | evidence@10 | abstains when "
                   "unanswerable | abstains when answerable | current | stale | earlier | "
                   "memory items | supersession P / R | write / ask validity |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, s in part["qa"]["summary"].items():
            sup = (s.get("writing") or {}).get("supersession") or {}
            label = f"{name} (upper bound)" if s["upper_bound"] else name
            out.append(f"| {label} | {_ci(s, 'f1')} | {_f(s.get('em'))} | "
                       f"{_f(s.get('recall@5'))} | {_f(s.get('recall@10'))} | "
                       f"{_f(s.get('abstention_unanswerable'))} | "
                       f"{_f(s.get('abstention_answerable'))} | {_rate(s, 'current_accuracy')} | "
                       f"{_rate(s, 'stale_rate')} | {_rate(s, 'earlier_accuracy')} | "
                       f"{_f(s.get('memory_size_mean'), 0)} | "
                       f"{_f(sup.get('precision'))} / {_f(sup.get('recall'))} | "
                       f"{_validity((s.get('writing') or {}).get('counts') or {})} |")
        breaches = bound_breaches(part["qa"]["summary"])
        if breaches:
            out += ["", "An upper bound beaten is not a bound: " + "; ".join(breaches) + ". "
                    "It bounds the writing (the gold facts in the memory's recall), not the "
                    "reading: one reader answers from what it is shown, turns kept as said can "
                    "carry words a gold fact leaves out, and on the persona set it is also "
                    "shown retired versions, marked, which the reader can take; where the run "
                    "has stage tables they say where each answer was lost."]
        stages = {name: s["stages"] for name, s in part["qa"]["summary"].items()
                  if s.get("stages")}
        if stages:
            out += ["", stages_markdown(stages)]
        out.append("")
    if result.get("left_out"):
        out.append(f"Left out: {', '.join(result['left_out']['agents'])} "
                   f"({result['left_out']['why']}).")
    return "\n".join(out)
