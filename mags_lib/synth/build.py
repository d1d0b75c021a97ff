"""`synthesize(cfg)`: games -> chain rows -> dedupe, cap, verify -> expansion -> JSONL splits.

    from mags_lib.synth import SynthConfig, synthesize
    result = synthesize(SynthConfig(smoke=True).resolved())
    result.counts["ask"]["train"], result.expansion.kept, result.paths["write"]["val"]

Steps, per split (games disjoint by seed, see `SynthConfig.split_seeds`):

1. every game's candidate rows (`chains.episode_rows`), shuffled with the config seed;
2. near-duplicates dropped, keep first (`diversity.dedupe_indices`, cosine >= threshold);
   val / test rows also when they near-duplicate a train row (no leak through templates);
3. write rows: "nothing to store" capped at `max_none_share`; then at most `max_rows` (train)
   or `max_eval_rows` rows, each checked to score 1.0 on its own reward (`verify_rows`);
   then the conversations' rows (`conversation_rows`, by `SynthConfig.sources`), capped and
   checked the same way (`max_conversation_rows`), merged in;
4. train only: LLM expansion of the kept rows (`expand.expand_task`), merged in by
   `merge_expanded` (a light paraphrase replaces its own base row, a near-duplicate of any
   other row is dropped), and the hand-written seed rows; then every split is written to
   `data/synth/<task>/<split>.jsonl`.

The result carries counts, per-group diversity (train candidates before dedupe: near-duplicate
rate only; then chain / expanded / seed / final train rows), the
nearest-neighbour cosines of the final train rows, skip and reject reasons, and hashes.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mags_lib.objectives.data import TASKS, data_hash, row_problem, write_jsonl
from mags_lib.objectives.rewards import answer_reward, engram_reward, recall_reward
from mags_lib.synth import diversity
from mags_lib.synth.chains import episode_rows, game_config, order_twins
from mags_lib.synth.config import SPLITS, SynthConfig
from mags_lib.synth.expand import (
    ExpansionReport,
    base_id,
    expand_task,
    load_expander,
    load_seed_rows,
)

GROUPS = ("chain", "expanded", "seed")
MIN_SAMPLE = 10  # diversity is compared at the smallest group's size, but never below this


@dataclass
class SynthResult:
    """What `synthesize` wrote and measured."""

    counts: dict[str, dict[str, int]]
    paths: dict[str, dict[str, str]]
    hashes: dict[str, dict[str, str]]
    diversity: dict[str, dict[str, dict[str, float]]]
    nn_cosines: dict[str, list[float]]
    skips: dict[str, dict[str, int]]
    expansion: ExpansionReport
    seed_skips: dict[str, dict[str, Any]]
    seconds: dict[str, float] = field(default_factory=dict)
    rows: dict[str, dict[str, list[dict]]] = field(default_factory=dict, repr=False)

    def metrics(self) -> dict[str, Any]:
        """Everything JSON-friendly (no rows, no raw cosines) for metrics.json."""
        return {"counts": self.counts, "hashes": self.hashes, "diversity": self.diversity,
                "skips": self.skips, "expansion": self.expansion.to_dict(),
                "seed_rows": self.seed_skips, "seconds": self.seconds,
                "nn_cosine_mean": {t: float(np.mean(v)) if v else None
                                   for t, v in self.nn_cosines.items()}}


def verify_rows(rows: list[dict], task: str, recall_k: int = 5) -> list[bool]:
    """Whether each row is valid (`row_problem`) and its gold completion scores 1.0 on its
    own reward (ask: recall hit in the top `recall_k`, hashing embedder)."""
    if not rows:
        return []
    comps, golds = [r["completion"] for r in rows], [r["gold"] for r in rows]
    if task == "ask":
        scores = recall_reward(comps, gold=golds, k=recall_k)
    elif task == "write":
        scores = engram_reward(comps, gold=golds)
    else:
        scores = answer_reward(comps, gold=golds)
    return [row_problem(r, task) is None and s == 1.0 for r, s in zip(rows, scores, strict=True)]


def _cap_none(rows: list[dict], share: float, skips: Counter, cap: int) -> list[dict]:
    """Write rows with at most `share` of 'nothing to store' rows (the first ones kept), also
    among the first `cap` rows that selection keeps (the budget is the smaller of the two:
    capping the whole pool alone let the kept rows' head run to 46% none)."""
    n_store = sum(bool(r["gold"]["ops"]) for r in rows)
    budget = int(share / (1 - share) * n_store) if share < 1 else len(rows)
    budget = min(budget, int(share * cap))
    out = []
    for r in rows:
        if not r["gold"]["ops"]:
            if budget <= 0:
                skips["none_share_cap"] += 1
                continue
            budget -= 1
        out.append(r)
    return out


def facts_first(rows: list[dict], sources: list[str]) -> list[dict]:
    """Write rows with those of `sources` that store a fact first, each part in its order.

    >>> rows = [{"gold": {"source": s, "ops": ops}} for s, ops in
    ...         [("persona", [1]), ("locomo", []), ("locomo", [1]), ("persona", [])]]
    >>> [(r["gold"]["source"], bool(r["gold"]["ops"])) for r in facts_first(rows, ["locomo"])]
    [('locomo', True), ('persona', True), ('locomo', False), ('persona', False)]
    """
    head = [r for r in rows if r["gold"].get("source") in sources and r["gold"]["ops"]]
    chosen = {id(r) for r in head}
    return head + [r for r in rows if id(r) not in chosen]


def _select(rows: list[dict], task: str, cap: int, cfg: SynthConfig, skips: Counter) -> list[dict]:
    """The first `cap` rows that verify (checked in chunks, so only what is kept is scored)."""
    out: list[dict] = []
    checked = misses = 0
    while len(out) < cap and checked < len(rows):
        chunk = rows[checked:checked + cap - len(out)]
        checked += len(chunk)
        ok = verify_rows(chunk, task, cfg.recall_k)
        misses += ok.count(False)
        out += [r for r, good in zip(chunk, ok, strict=True) if good]
    skips["gold_miss"] += misses
    skips["over_cap"] += len(rows) - checked
    return out


def merge_expanded(train: list[dict], new: list[dict], embedder, threshold: float
                   ) -> tuple[list[dict], list[dict], Counter]:
    """Train rows with the expanded rows merged in, the expanded rows that made it, and why
    others did not. A rewrite that near-duplicates only its own base row (a light paraphrase)
    takes the base row's place (counted as `replaced_base`); one that near-duplicates any other
    row is dropped; the rest are added."""
    train = list(train)
    vecs = list(_vectors(train, embedder))
    index = {base_id(r): i for i, r in enumerate(train)}
    added, why_not = [], Counter()
    for row, vec in zip(new, _vectors(new, embedder), strict=True):
        close = set(np.flatnonzero(np.asarray(vecs) @ vec >= threshold).tolist()) if vecs else set()
        base = index.get(row["gold"].get("base"))
        if close - {base}:
            why_not["near_duplicate_of_train"] += 1
            continue
        if close:  # only its own base: replace it
            train[base], vecs[base] = row, vec
            index.pop(row["gold"]["base"], None)
            why_not["replaced_base"] += 1
        else:
            train.append(row)
            vecs.append(vec)
        added.append(row)
    return train, added, why_not


def _vectors(rows: list[dict], embedder) -> np.ndarray:
    if not rows:
        return np.zeros((0, getattr(embedder, "dim", 1)), dtype=np.float32)
    return np.asarray(embedder.encode([diversity.row_text(r) for r in rows]), dtype=np.float32)


def _split_rows(cfg: SynthConfig) -> tuple[dict[str, dict[str, list[dict]]], dict[str, Counter]]:
    """Candidate rows by task and split, shuffled, and why turns gave none."""
    out = {t: {s: [] for s in SPLITS} for t in TASKS}
    skips = {t: Counter() for t in TASKS}
    for split, seeds in cfg.split_seeds().items():
        from mags_lib.game import generate_episode
        from mags_lib.progress import progress

        for i, seed in progress(list(enumerate(seeds)), f"{split} episodes"):
            rows, why = episode_rows(generate_episode(game_config(cfg, seed, i)), cfg)
            for task in TASKS:
                if "game" in cfg.sources or task == "answer":
                    out[task][split] += rows[task]
            for reason, n in why.items():
                task, _, reason = reason.partition(":")
                skips[task][reason] += n
        for task in TASKS:
            random.Random(f"shuffle:{cfg.seed}:{task}:{split}").shuffle(out[task][split])
    return out, skips


def _add_conversation_rows(cfg: SynthConfig, final: dict, why: dict[str, Counter],
                           embedder: Any) -> None:
    """The conversations' ask and write rows (`conversation_rows`), deduplicated, capped and
    checked as game rows are (their skips counted as 'conversation:REASON'), merged into
    `final` and shuffled."""
    if not set(cfg.sources) - {"game"}:
        return
    from mags_lib.synth.conversation_rows import conversation_rows

    rows, skips = conversation_rows(cfg)
    thr = cfg.near_dup_threshold
    for task, by_split in rows.items():
        local = Counter(skips[task])
        reference = None
        for split in SPLITS:
            cap = cfg.max_conversation_rows.get(task, 0) if split == "train" \
                else cfg.max_eval_rows
            pool = by_split[split]
            own = _vectors(pool, embedder)
            keep = diversity.dedupe_indices(own, thr, reference=reference)
            local["near_duplicate" if split == "train" else f"near_duplicate_{split}"] += \
                len(pool) - len(keep)
            pool = [pool[i] for i in keep]
            if task == "write" and split == "train" and cfg.write_facts_first:
                pool = facts_first(pool, cfg.write_facts_first)
            if task == "write":
                pool = _cap_none(pool, cfg.conversation_none_share, local, cap)
            final[task][split] = final[task][split] + _select(pool, task, cap, cfg, local)
            random.Random(f"merge:{cfg.seed}:{task}:{split}").shuffle(final[task][split])
            if split == "train":  # val / test rows may not near-duplicate a train row either
                reference = _vectors(final[task]["train"], embedder)
        for reason, n in local.items():
            why[task][f"conversation:{reason}"] += n


def _expand(cfg: SynthConfig, rows: dict[str, list[dict]], seeds: dict[str, list[dict]],
            llm: Any) -> tuple[dict[str, list[dict]], ExpansionReport]:
    report, kept = ExpansionReport(), {t: [] for t in TASKS}
    if not cfg.expand or not cfg.expand_tasks or cfg.n_expansions <= 0:
        return kept, report
    llm = llm if llm is not None else load_expander(cfg.expansion_llm, cfg.expansion_threads)
    for task in cfg.expand_tasks:
        kept[task], part = expand_task(
            task, rows[task], seeds[task], llm, n=cfg.n_expansions, seed=cfg.seed,
            modes=cfg.expansion_modes, n_shots=cfg.n_shots, temperature=cfg.temperature,
            max_tokens=cfg.max_tokens, recall_k=cfg.expansion_recall_k,
            min_engram_f1=cfg.min_engram_f1)
        report.merge(part)
    return kept, report


def synthesize(cfg: SynthConfig | None = None, *, llm: Any = None,
               out_dir: str | Path | None = None, seed_dir: str | Path | None = None,
               embedder: Any = None) -> SynthResult:
    """Build, check and write the ask / write / answer datasets (see the module docstring).

    `llm` replaces the expansion LLM (tests pass a fake), `embedder` the near-duplicate
    embedder, `out_dir` / `seed_dir` the data folders (default `data/synth`, `data/seed`).
    """
    from mags_lib import paths

    cfg = (cfg or SynthConfig()).resolved()
    out_dir = Path(out_dir or paths.SYNTH_DATA_DIR)
    embedder = embedder or diversity.embedder_for(cfg.embedder)
    thr, t0, seconds = cfg.near_dup_threshold, time.perf_counter(), {}
    seeds, seed_skips = {}, {}
    for task in TASKS:
        seeds[task], report = load_seed_rows(task, seed_dir)
        seed_skips[task] = report.to_dict()
    candidates, why = _split_rows(cfg)
    seconds["chains"] = time.perf_counter() - t0
    final, candidates_report = {t: {} for t in TASKS}, {}
    for task in TASKS:
        train_vecs = None
        for split in SPLITS:
            rows = candidates[task][split]
            vecs = _vectors(rows, embedder)
            if split == "train":  # how templated the raw chains are, before dedupe
                candidates_report[task] = {"n": len(rows), "sample_size": len(rows),
                                           "near_dup_rate": diversity.near_dup_rate(vecs, thr)}
            keep = diversity.dedupe_indices(vecs, thr, reference=train_vecs)
            why[task]["near_duplicate" if split == "train" else f"near_duplicate_{split}"] += \
                len(rows) - len(keep)
            rows = [rows[i] for i in keep]
            cap = cfg.max_rows.get(task, 0) if split == "train" else cfg.max_eval_rows
            if task == "write":
                rows = _cap_none(rows, cfg.max_none_share, why[task], cap)
            final[task][split] = _select(rows, task, cap, cfg, why[task])
            if split == "train":
                train_vecs = _vectors(final[task]["train"], embedder)
    seconds["select"] = time.perf_counter() - t0 - seconds["chains"]
    t1 = time.perf_counter()
    _add_conversation_rows(cfg, final, why, embedder)
    seconds["conversations"] = time.perf_counter() - t1
    expanded, expansion = _expand(cfg, {t: [r for r in final[t]["train"]  # the game's rows:
                                            if r["gold"].get("origin") == "chain"]  # its checks
                                        for t in TASKS}, seeds, llm)
    seconds["expand"] = expansion.seconds
    groups: dict[str, dict[str, list[dict]]] = {t: {"chain": list(final[t]["train"])}
                                                for t in TASKS}
    for task in TASKS:
        new = [r for r, ok in zip(expanded[task], verify_rows(expanded[task], task, cfg.recall_k),
                                  strict=True) if ok]
        expansion.reject_kept(task, "failed_recheck", len(expanded[task]) - len(new))
        train, added, why_not = merge_expanded(final[task]["train"], new, embedder, thr)
        expansion.replaced += why_not.pop("replaced_base", 0)
        for reason, n in why_not.items():
            expansion.reject_kept(task, reason, n)
        groups[task]["expanded"] = added
        groups[task]["seed"] = list(seeds[task])
        final[task]["train"] = train + (groups[task]["seed"] if cfg.include_seed_rows else [])
    if cfg.answer_all_orders:
        final["answer"]["train"] = [t for r in final["answer"]["train"] for t in order_twins(r)]
    result = _finish(cfg, final, groups, why, expansion, seed_skips, embedder, out_dir, seconds,
                     t0)
    for task, report in candidates_report.items():
        result.diversity[task] = {"candidates": report, **result.diversity[task]}
    return result


def _finish(cfg, final, groups, why, expansion, seed_skips, embedder, out_dir, seconds, t0):
    thr = cfg.near_dup_threshold
    counts, paths_, hashes, div, nn = {}, {}, {}, {}, {}
    for task in TASKS:
        counts[task] = {s: len(final[task][s]) for s in SPLITS}
        paths_[task] = {s: str(write_jsonl(Path(out_dir) / task / f"{s}.jsonl", final[task][s]))
                        for s in SPLITS}
        hashes[task] = {s: data_hash(final[task][s]) for s in SPLITS}
        named = [*groups[task].items(), ("final_train", final[task]["train"])]
        sizes = [len(rows) for name, rows in named if rows and name != "final_train"]
        matched = max(min(sizes), MIN_SAMPLE) if sizes else None
        div[task] = {}
        for name, rows in named:
            vecs = _vectors(rows, embedder)
            completions = [r["completion"][-1]["content"] for r in rows]
            div[task][name] = diversity.diversity_report(completions, vecs, thr, matched,
                                                         seed=cfg.seed)
            div[task][name]["prompt_distinct_2"] = diversity.diversity_report(
                [r["prompt"][-1]["content"] for r in rows], vecs, thr, matched,
                seed=cfg.seed)["distinct_2"]
            if name == "final_train":
                nn[task] = diversity.nearest_cosines(vecs).round(4).tolist()
                div[task][name]["near_dup_rate_full"] = diversity.near_dup_rate(vecs, thr)
    seconds["total"] = time.perf_counter() - t0
    return SynthResult(counts=counts, paths=paths_, hashes=hashes, diversity=div, nn_cosines=nn,
                       skips={t: dict(c) for t, c in why.items()}, expansion=expansion,
                       seed_skips=seed_skips, seconds={k: round(v, 2) for k, v in seconds.items()},
                       rows=final)
