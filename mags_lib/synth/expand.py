"""Few-shot expansion: an LLM rewrites chain rows, and only rows that still agree with the
ground truth are kept.

The hand-written rows in `data/seed/{ask,write,answer}.jsonl` (the training row format, with
`game_seed` -1) are the few-shot examples. Two modes, cycled over candidates:

* "completion": the seeds are shown as user / assistant turns, then the candidate's prompt; the
  LLM writes the action. Kept if it parses completely, fits the GBNF limits, differs from the
  chain's completion, and scores against the row's gold: the recall queries hit the gold node
  (`recall_reward`, top `recall_k`) and every query names the creature and no other weather
  word, the engram ops reach `min_engram_f1`, the answer is right.
  The kept completion is the canonical text of the parsed actions (chatter dropped).
* "observation": the seeds' `template_observation` -> `observation` pairs are shown; the LLM
  rewrites the candidate's observation. Kept if it is one clean line, not too long, different,
  and still names every entity (creature, condition, items); the row keeps its gold completion.
  Every kept row names its source row (`gold["base"]`, see `base_id`).
  Answer rows are never rewritten this way: their prompt must stay the agents' prompt.

Every rejection has a reason (`ExpansionReport.reasons`); nothing the LLM writes can raise.
Sampling is at `temperature` with a seed per call, through the generation cache, so a rerun
gives the same rows without a forward pass.

    >>> clean_line('Paraphrase: "Rain falls; the purple glarb eats only the stone."')
    'Rain falls; the purple glarb eats only the stone.'
    >>> check_observation("no idea", {"gold": {"observation": "x", "entities": ["glarb"]}})
    (None, 'lost_entities')
"""

from __future__ import annotations

import random
import re
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mags_lib.actions import format_actions, parse_actions, query_texts
from mags_lib.embed import tokenize
from mags_lib.objectives.completions import parse_answer
from mags_lib.objectives.data import TASK_KIND, data_hash, load_jsonl
from mags_lib.objectives.rewards import answer_reward, engram_reward, recall_reward
from mags_lib.synth.chains import NOTHING_TO_STORE
from mags_lib.synth.surface import ASK_SYSTEM, WRITE_SYSTEM, actions_fit_grammar

ANSWER_SYSTEM = "Use the notes to pick the item the creature eats. Reply as <answer>ITEM</answer>."
TASK_SYSTEM = {"ask": ASK_SYSTEM[0], "write": WRITE_SYSTEM[0], "answer": ANSWER_SYSTEM}
PARAPHRASE_SYSTEM = ("Rewrite the game text in other words. Keep every creature name, weather "
                     "word and item exactly as written. Reply with the new text only, one line.")
_PREFIX = re.compile(r"^\s*(paraphrase|rewrite|rewritten|new text|answer|output)\s*:\s*", re.I)
_EXAMPLES_PER_TASK = 6  # (mode, outcome, text) examples a report quotes per task


@dataclass
class ExpansionReport:
    """What one expansion tried, kept and rejected (a count per reason, a few examples)."""

    tried: int = 0
    kept: int = 0
    reasons: Counter = field(default_factory=Counter)
    by_task: dict[str, dict[str, Any]] = field(default_factory=dict)
    examples: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    cached: int = 0
    replaced: int = 0  # kept rows that took their base row's place (light paraphrases)
    llm: str = ""

    @property
    def rejected(self) -> int:
        return sum(self.reasons.values())

    def add(self, task: str, mode: str, reason: str | None, text: str) -> None:
        """Count one candidate's outcome (`reason` None = kept)."""
        stats = self.by_task.setdefault(task, {"tried": 0, "kept": 0, "reasons": Counter()})
        self.tried += 1
        stats["tried"] += 1
        if reason is None:
            self.kept += 1
            stats["kept"] += 1
        else:
            self.reasons[reason] += 1
            stats["reasons"][reason] += 1
        if sum(e["task"] == task for e in self.examples) < _EXAMPLES_PER_TASK:
            self.examples.append({"task": task, "mode": mode, "outcome": reason or "kept",
                                  "text": text[:160]})

    def reject_kept(self, task: str, reason: str, n: int) -> None:
        """Turn `n` rows counted as kept into rejections (a later check dropped them)."""
        if n <= 0:
            return
        stats = self.by_task.setdefault(task, {"tried": 0, "kept": 0, "reasons": Counter()})
        self.kept -= n
        stats["kept"] -= n
        self.reasons[reason] += n
        stats["reasons"][reason] += n

    def merge(self, other: ExpansionReport) -> None:
        self.tried += other.tried
        self.kept += other.kept
        self.reasons.update(other.reasons)
        self.by_task.update(other.by_task)
        self.examples += other.examples
        self.seconds += other.seconds
        self.cached += other.cached
        self.llm = self.llm or other.llm

    def to_dict(self) -> dict[str, Any]:
        return {"tried": self.tried, "kept": self.kept, "rejected": self.rejected,
                "reasons": dict(self.reasons), "seconds": round(self.seconds, 2),
                "cached": self.cached, "replaced_base": self.replaced, "llm": self.llm,
                "examples": self.examples,
                "by_task": {t: {**s, "reasons": dict(s["reasons"])}
                            for t, s in self.by_task.items()}}


def load_seed_rows(task: str, directory: str | Path | None = None):
    """The hand-written rows of `task` (`data/seed/<task>.jsonl`) and their SkipReport."""
    from mags_lib import paths

    return load_jsonl(Path(directory or paths.SEED_DATA_DIR) / f"{task}.jsonl", task)


def load_expander(model: str = "embedded", threads: int | None = 1):
    """The expansion LLM (through the generation cache)."""
    from mags_lib.llm import LLMConfig, load_llm

    return load_llm(LLMConfig(model=model, n_threads=threads))


# ----- prompts -----------------------------------------------------------------------------


def completion_messages(task: str, shots: list[dict], row: dict) -> list[dict[str, str]]:
    """Seeds as user / assistant turns, then the candidate's prompt."""
    messages = [{"role": "system", "content": TASK_SYSTEM[task]}]
    for s in shots:
        messages += [{"role": "user", "content": s["prompt"][-1]["content"]},
                     {"role": "assistant", "content": s["completion"][-1]["content"]}]
    return messages + [{"role": "user", "content": row["prompt"][-1]["content"]}]


def paraphrase_messages(shots: list[dict], observation: str) -> list[dict[str, str]]:
    """Seeds' template -> hand-written observation pairs, then the candidate's observation."""
    messages = [{"role": "system", "content": PARAPHRASE_SYSTEM}]
    for s in shots:
        messages += [{"role": "user", "content": s["gold"]["template_observation"]},
                     {"role": "assistant", "content": s["gold"]["observation"]}]
    return messages + [{"role": "user", "content": observation}]


def paraphrase_seeds(seeds: list[dict]) -> list[dict]:
    """Seeds that demonstrate a rewrite (a template observation and a different one)."""
    return [s for s in seeds if isinstance(s["gold"].get("template_observation"), str)
            and isinstance(s["gold"].get("observation"), str)
            and s["gold"]["template_observation"] != s["gold"]["observation"]]


# ----- checks (pure: LLM text + row -> new row or reason) ---------------------------------


def _with(row: dict, completion: str | None = None, observation: str | None = None,
          mode: str = "completion") -> dict:
    prompt = [dict(m) for m in row["prompt"]]
    gold = {**row["gold"], "origin": "expanded", "expansion_mode": mode, "base": base_id(row)}
    if observation is not None:
        old = row["gold"]["observation"]
        prompt[-1]["content"] = prompt[-1]["content"].replace(old, observation)
        gold.update(observation=observation, paraphrase_of=old)
    content = completion if completion is not None else row["completion"][-1]["content"]
    return {**row, "prompt": prompt, "completion": [{"role": "assistant", "content": content}],
            "gold": gold}


def base_id(row: dict) -> str:
    """A short content hash naming the row an expanded row was made from (`gold["base"]`)."""
    return data_hash([row])


def _query_problem(queries: list[str], entities: list[str]) -> str | None:
    """Why LLM-written queries are not about the row's rule: a query that does not name the
    creature (entities[0]) or that names another condition (weather word) than entities[1]."""
    from mags_lib.game.vocab import CONDITIONS

    if len(entities) < 2:
        return None
    creature, condition = entities[0], entities[1]
    if not all(_names(q, creature) for q in queries):
        return "missing_subject"
    others = set(CONDITIONS) - {condition}
    if any(others & set(tokenize(q)) for q in queries):
        return "wrong_condition"
    return None


def check_completion(task: str, text: str, row: dict, recall_k: int = 5,
                     min_engram_f1: float = 0.8) -> tuple[dict | None, str | None]:
    """A new row with the LLM's action as completion, or (None, why it was rejected)."""
    if not isinstance(text, str) or not text.strip():
        return None, "empty"
    gold = row["gold"]
    if task == "answer":
        choice, _ = parse_answer(text)
        if choice is None:
            return None, "no_answer"
        canonical = f"<answer>{choice}</answer>"
        score = answer_reward([canonical], gold=[gold])[0]
    else:
        result = parse_actions(text, kind=TASK_KIND[task])
        if result.blocks == 0:
            return None, "no_block"
        if not result.complete:
            return None, "parse_error"
        if result.actions and not actions_fit_grammar(result.actions):
            return None, "over_grammar_limits"
        canonical = format_actions(result.actions) or NOTHING_TO_STORE
        lines = canonical.splitlines()
        if len(set(lines)) < len(lines):
            return None, "repeated_lines"
        if task == "ask":
            reason = _query_problem(query_texts(canonical)[0], gold.get("entities") or [])
            if reason:
                return None, reason
            score = recall_reward([canonical], gold=[gold], k=recall_k)[0]
        else:
            f1 = engram_reward([canonical], gold=[gold])[0]
            score = 1.0 if f1 is not None and f1 >= min_engram_f1 else 0.0
    if canonical == row["completion"][-1]["content"]:
        return None, "unchanged"
    if score != 1.0:
        return None, {"ask": "recall_miss", "write": "ops_mismatch", "answer": "wrong_answer"}[task]
    return _with(row, completion=canonical), None


def clean_line(text: str) -> str:
    """The first non-empty line of an LLM reply, without a 'Paraphrase:' label or quotes."""
    for line in (text or "").splitlines():
        line = _PREFIX.sub("", line).strip().strip('"').strip("'").strip()
        if line:
            return line
    return ""


def _names(text: str, entity: str) -> bool:
    words, want = tokenize(text), tokenize(entity)
    return any(words[i:i + len(want)] == want for i in range(len(words) - len(want) + 1))


def check_observation(text: str, row: dict,
                      max_ratio: float = 2.0) -> tuple[dict | None, str | None]:
    """A new row whose observation is the LLM's rewrite, or (None, why it was rejected)."""
    if not isinstance(text, str):
        return None, "empty"
    line, old = clean_line(text), row["gold"].get("observation", "")
    entities = row["gold"].get("entities") or []
    if not line:
        return None, "empty"
    if "<" in line or ">" in line:
        return None, "markup"
    if len(line) > max_ratio * len(old) + 20:
        return None, "too_long"
    if tokenize(line) == tokenize(old):
        return None, "unchanged"
    if not all(_names(line, e) for e in entities):
        return None, "lost_entities"
    if not old or old not in row["prompt"][-1]["content"]:
        return None, "not_in_prompt"
    return _with(row, observation=line, mode="observation"), None


# ----- the loop ----------------------------------------------------------------------------


def _call_seed(seed: int, task: str, i: int) -> int:
    return zlib.crc32(f"{seed}:{task}:{i}".encode()) & 0x7FFFFFFF


def _eligible(task: str, mode: str, rows: list[dict]) -> list[dict]:
    if mode == "completion":  # an empty engram block would only copy the chain row
        return [r for r in rows if task != "write" or r["gold"].get("ops")]
    if task == "answer":
        return []
    return [r for r in rows if r["gold"].get("entities") and r["gold"].get("observation")
            and r["gold"]["observation"] in r["prompt"][-1]["content"]]


def expand_task(task: str, rows: list[dict], seeds: list[dict], llm: Any, *, n: int, seed: int,
                modes: tuple[str, ...] | list[str] = ("completion", "observation"),
                n_shots: int = 3, temperature: float = 0.8, max_tokens: int = 96,
                recall_k: int = 5,
                min_engram_f1: float = 0.8) -> tuple[list[dict], ExpansionReport]:
    """Up to `n` LLM rewrites of rows of `task`; the rows kept and the report."""
    report, kept = ExpansionReport(llm=str(getattr(llm, "name", type(llm).__name__))), []
    rng = random.Random(f"expand:{seed}:{task}")
    pools = {m: _eligible(task, m, rows) for m in modes}
    shots_of = {"completion": seeds, "observation": paraphrase_seeds(seeds)}
    t0 = time.perf_counter()
    from mags_lib.progress import progress

    for i in progress(range(n if rows else 0), f"expand {task}"):
        mode = modes[i % len(modes)]
        if not pools[mode] or not shots_of[mode]:
            report.add(task, mode, "no_candidates_or_seeds", "")
            continue
        row = rng.choice(pools[mode])
        shots = rng.sample(shots_of[mode], min(n_shots, len(shots_of[mode])))
        messages = (completion_messages(task, shots, row) if mode == "completion"
                    else paraphrase_messages(shots, row["gold"]["observation"]))
        try:
            out = llm.chat(messages, temperature=temperature, seed=_call_seed(seed, task, i),
                           max_tokens=max_tokens, stop=["\n"] if mode == "observation" else None)
            text = out.text
            report.cached += bool(getattr(out, "cached", False))
        except Exception as exc:  # noqa: BLE001  (a backend failure costs one row, not the run)
            report.add(task, mode, "llm_error", repr(exc))
            continue
        if mode == "completion":
            new, reason = check_completion(task, text, row, recall_k, min_engram_f1)
        else:
            new, reason = check_observation(text, row)
        report.add(task, mode, reason, text if isinstance(text, str) else repr(text))
        if new is not None:
            kept.append(new)
    report.seconds = time.perf_counter() - t0
    return kept, report
