"""LoCoMo's long real conversations, read into plain dataclasses with their gold.

    from mags_lib.conversations.locomo import load_locomo, locomo_path, SPLITS

    convs = load_locomo(locomo_path(), ids=SPLITS["train"])
    for turn in convs[0].turns():          # every turn in order, with its session's date
        ...
    convs[0].qa[0].evidence                # ("D1:3",): the gold for recall
    convs[0].gold_facts[0]                 # a session fact with its D<s>:<t> evidence: a gold write

LoCoMo (Maharana et al., ACL 2024, "Evaluating Very Long-Term Conversational Memory of LLM
Agents"; github snap-research/LoCoMo, `data/locomo10.json`) is CC BY-NC 4.0: it is read from
where it lies and never committed. `locomo_path()` looks at `$MAGS_LOCOMO`, then
`data/external/locomo10.json` (where `make data` puts it), then the workplace's shared copy.

The split is by conversation: the first five are for training and every choice made while
tuning; the last five are the test set, run once a configuration is frozen.

A few evidence ids in the file are malformed ("D8:6; D9:17", "D:11:26", "D"): the ids in them
are read where they can be ("D8:6", "D9:17", "D11:26", "D30:05" as "D30:5") and a bare "D"
is dropped; every such
repair is counted in `Conversation.repairs`, so a report can say how many there were.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mags_lib.conversations.types import QA, Conversation, GoldFact, Turn
from mags_lib.errors import CorruptFileError, MagsError
from mags_lib.paths import DATA_DIR, PROJ_ROOT

ENV_VAR = "MAGS_LOCOMO"
FILE_NAME = "locomo10.json"
SPLITS: dict[str, tuple[str, ...]] = {
    "train": ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43"),
    "test": ("conv-44", "conv-47", "conv-48", "conv-49", "conv-50"),
}
# The file numbers the categories without naming them; these names follow LoCoMo's own scorer
# (category 1 is scored by comma-split F1 as multi-hop, 5 is adversarial). Papers disagree.
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
              5: "adversarial"}
_FIX = (f"point ${ENV_VAR} at an unmodified copy of LoCoMo's data/locomo10.json, or run "
        "`make data` where there is internet")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


def locomo_path(explicit: str | Path | None = None) -> Path | None:
    """Where LoCoMo lies: `explicit`, else `$MAGS_LOCOMO`, else `data/external/locomo10.json`,
    else the shared copy beside the repository; None when none exists. A path given
    explicitly or by the environment is returned even if missing, so that loading it names it."""
    if explicit is not None:
        return Path(explicit)
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    for candidate in (DATA_DIR / "external" / FILE_NAME,
                      PROJ_ROOT.parent / "shared" / "data" / FILE_NAME):
        if candidate.is_file():
            return candidate
    return None


def missing_message() -> str:
    """What a notebook cell prints when LoCoMo is absent (nothing else fails for it)."""
    return (f"LoCoMo is not on this machine: set ${ENV_VAR} to locomo10.json, put it at "
            f"{DATA_DIR / 'external' / FILE_NAME}, or run `make data` where there is internet. "
            "The LoCoMo cells are skipped; everything else runs.")


def load_locomo(path: str | Path | None = None,
                ids: Sequence[str] | None = None) -> list[Conversation]:
    """The conversations in `path` (default `locomo_path()`), in file order, or those named in
    `ids` in that order. A missing file, one that is not JSON (truncated?) or one of the
    wrong shape is a MagsError naming the file and the fix."""
    where = locomo_path(path)
    if where is None or not where.is_file():
        raise MagsError(f"no LoCoMo file at {where or 'any of the usual places'}", _FIX)
    try:
        doc = json.loads(where.read_bytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"{where} is not valid JSON (truncated?): {str(exc)[:160]}",
                               _FIX) from None
    if not isinstance(doc, list) or not doc:
        raise CorruptFileError(f"{where} does not hold a list of conversations", _FIX)
    convs = [_conversation(item, where, i) for i, item in enumerate(doc)]
    if ids is None:
        return convs
    by_id = {c.sample_id: c for c in convs}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise MagsError(f"{where} has no conversation {', '.join(unknown)}",
                        f"use ids among {', '.join(by_id)}")
    return [by_id[i] for i in ids]


def _conversation(item: Any, where: Path, index: int) -> Conversation:
    at = f"{where}: conversation {index}"
    _need(isinstance(item, dict), at, "is not an object")
    for key in ("sample_id", "conversation", "qa"):
        _need(key in item, at, f"has no {key!r}")
    at = f"{where}: {item['sample_id']}"
    conv = item["conversation"]
    _need(isinstance(conv, dict) and "speaker_a" in conv and "speaker_b" in conv, at,
          "has no speakers")
    repairs: list[str] = []
    sessions = {}
    for key, turns in conv.items():
        m = _SESSION.fullmatch(key)
        if m:
            s = int(m.group(1))
            _need(isinstance(turns, list), at, f"{key} is not a list of turns")
            sessions[s] = [_turn(t, s, str(conv.get(f"{key}_date_time", "")), at)
                           for t in turns]
    _need(bool(sessions), at, "has no sessions")
    _need(isinstance(item["qa"], list), at, "'qa' is not a list")
    qa = [_qa(q, at, repairs) for q in item["qa"]]
    gold_facts = _gold_facts(item.get("observation") or {}, at, repairs)
    return Conversation(item["sample_id"], (conv["speaker_a"], conv["speaker_b"]), sessions,
                        qa, gold_facts, repairs)


def _turn(t: Any, session: int, date: str, at: str) -> Turn:
    _need(isinstance(t, dict) and all(isinstance(t.get(k), str)
                                      for k in ("speaker", "dia_id", "text")),
          at, f"session {session} has a turn without speaker, dia_id and text")
    return Turn(t["dia_id"], session, t["speaker"], t["text"], date, t.get("blip_caption"))


def _qa(q: Any, at: str, repairs: list[str]) -> QA:
    _need(isinstance(q, dict) and isinstance(q.get("question"), str)
          and isinstance(q.get("category"), int), at, "has a QA row without question/category")
    answer = q.get("answer")
    adversarial = q.get("adversarial_answer")
    return QA(q["question"], None if answer is None else str(answer),
              evidence_ids(q.get("evidence") or [], repairs), q["category"],
              None if adversarial is None else str(adversarial))


def _gold_facts(obs: Any, at: str, repairs: list[str]) -> list[GoldFact]:
    _need(isinstance(obs, dict), at, "'observation' is not an object")
    out = []
    for key, by_speaker in obs.items():
        m = re.fullmatch(r"session_(\d+)_observation", key)
        _need(m is not None and isinstance(by_speaker, dict), at, f"has an odd key {key!r}")
        for speaker, facts in by_speaker.items():
            for fact in facts:
                _need(isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str),
                      at, f"{key} has a fact that is not [text, evidence]")
                out.append(GoldFact(int(m.group(1)), speaker, fact[0],
                                    evidence_ids(fact[1], repairs)))
    return out


def evidence_ids(raw: Any, repairs: list[str] | None = None) -> tuple[str, ...]:
    """Evidence as clean 'D<s>:<t>' ids; malformed entries are read leniently and noted.

    >>> evidence_ids(["D1:3", "D8:6; D9:17", "D:11:26", "D"])
    ('D1:3', 'D8:6', 'D9:17', 'D11:26')
    """
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        found = [f"D{int(s)}:{int(t)}" for s, t in _EVIDENCE.findall(str(item))]
        if [str(item)] != found and repairs is not None:
            repairs.append(f"{item!r} -> {found}")
        out.extend(found)
    return tuple(dict.fromkeys(out))


def _need(ok: bool, at: str, what: str) -> None:
    if not ok:
        raise CorruptFileError(f"{at} {what}: not LoCoMo's shape", _FIX)
