"""Chains of memory: one game's per-turn ground truth turned into ask / write / answer rows.

A perfect memory is replayed along the episode (`Known`: every rule version revealed so far,
every distractor fact seen); each turn becomes rows about the state *before* that turn:

* decide turn -> an **ask** row: the question plus an instruction to emit `<recall>`; the
  completion is a canonical recall block with 1-3 queries for the governing rule (phrased at
  random, see `surface.QUERIES`); gold = `memory_facts` (the gold rule among every other rule
  known in the game so far, as a real memory would hold them, topped up with distractor facts
  to `n_distractor_facts`, and preceded by the rule's superseded older versions under the same
  key, so the memory supersedes them), `gold_node_text`, `gold_key`. Rules about the same
  creature in another condition, or another creature in the same condition, are among them,
  so a query must name both to find the rule near the top.
* decide turn -> an **answer** row: the agents' own decision prompt (`mags_lib.agents.prompt`,
  "completion" format as one user message, or the "chat" messages) with `answer_lines` memory
  lines, and `<answer>ITEM</answer>`; gold = `answer` (the item) + `options`. Memory condition
  `gold` (the rule among distractors, usually last), `stale` (its superseded version listed
  before it) or `none` (no line about the rule: `answerable` False, a guess).
* announce / feedback / distractor turn -> a **write** row: the observation plus what memory
  already holds about it (the rule's stored version, if any, and mostly the known facts nearest
  the observation, as the closed loop's recall shows them: `nearest_facts`), so that add /
  update / nothing is decidable next to look-alike rules; the completion is a canonical
  `<engram>` block, `add semantic 0.95: RULE` (first sight), `update semantic ...` (a new item for a known rule) or
  the empty block `NOTHING_TO_STORE` (a repeat, an irrelevant fact); gold = `ops`.

The empty block parses as complete and scores 1.0 against empty gold ops, but the engram GBNF
grammar (1-3 lines) cannot produce it: a grammar-constrained write model must always store.

    >>> from mags_lib.game import GameConfig, generate_episode
    >>> from mags_lib.synth.config import SynthConfig
    >>> rows, skips = episode_rows(generate_episode(GameConfig(seed=3, episode_length=40)),
    ...                            SynthConfig())
    >>> sorted(rows), all(r["game_seed"] == 3 for r in rows["ask"])
    (['answer', 'ask', 'write'], True)
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from mags_lib.actions import EngramAdd, EngramUpdate, format_actions
from mags_lib.agents.prompt import chat_messages, completion_prompt
from mags_lib.errors import MagsError
from mags_lib.game import (
    Episode,
    GameConfig,
    Observation,
    StepTruth,
    generate_episode,
    phrasing,
    vocab,
)
from mags_lib.game.senseless import ALIAS_KEY, ANNOUNCE_PREFIX, parse_rule
from mags_lib.game.vocab import ITEMS
from mags_lib.synth import surface
from mags_lib.synth.config import SynthConfig

NOTHING_TO_STORE = "<engram>\n</engram>"
HAND_WRITTEN_SEED = -1  # game_seed of the hand-written rows in data/seed


@dataclass
class Known:
    """What a perfect memory holds: rule versions by key (oldest first), distractor facts."""

    versions: dict[str, list[str]] = field(default_factory=dict)
    facts: list[str] = field(default_factory=list)

    def current(self, key: str) -> str | None:
        versions = self.versions.get(key)
        return versions[-1] if versions else None

    def others(self, key: str | None) -> list[dict[str, str]]:
        """Every other fact held: other rules' current versions, then distractor facts."""
        rules = [{"text": v[-1], "block": "semantic", "key": k}
                 for k, v in sorted(self.versions.items()) if k != key]
        return rules + [{"text": f, "block": "episodic"} for f in self.facts]

    def learn(self, truth: StepTruth, text: str) -> None:
        """Update after a turn: a revealed rule version, or a distractor fact seen."""
        if truth.rule_key and truth.engram_ops:
            versions = self.versions.setdefault(truth.rule_key, [])
            if not versions or versions[-1] != truth.rule_text:
                versions.append(truth.rule_text)
        elif truth.kind == "distractor" and text not in self.facts:
            self.facts.append(text)


def game_config(cfg: SynthConfig, seed: int, index: int = 0) -> GameConfig:
    """The GameConfig of training game `seed` (the `index`-th of its split)."""
    return GameConfig(seed=seed, episode_length=cfg.episode_length, n_rules=cfg.n_rules,
                      n_items=cfg.n_items[index % len(cfg.n_items)],
                      drift_every=cfg.drift_every, silent_fraction=cfg.silent_fraction,
                      surface=cfg.surfaces[index % len(cfg.surfaces)], phrasings="train")


def _row(task: str, prompt: list[dict], completion: str, gold: dict, seed: int) -> dict[str, Any]:
    return {"prompt": prompt, "completion": [{"role": "assistant", "content": completion}],
            "task": task, "gold": {**gold, "origin": "chain"}, "game_seed": seed}


def _interleave(rng: random.Random, others: list, chain: list) -> list:
    """`others` with `chain` inserted at random positions, `chain` keeping its order."""
    n = len(others) + len(chain)
    slots = set(rng.sample(range(n), len(chain)))
    it_chain, it_other = iter(chain), iter(others)
    return [next(it_chain) if i in slots else next(it_other) for i in range(n)]


def ask_row(obs: Observation, truth: StepTruth, known: Known, rng: random.Random,
            cfg: SynthConfig, seed: int) -> dict | None:
    """The ask row of a decide turn, or None when memory cannot answer it yet."""
    key = truth.rule_key
    if key is None or known.current(key) != truth.rule_text:
        return None
    creature, condition = key.split("|")
    versions = known.versions[key]
    chain = [{"text": v, "block": "semantic", "key": key} for v in versions]
    pool = known.others(key)
    rules = [f for f in pool if f.get("key")]  # every other rule: the confusable facts
    facts = [f for f in pool if not f.get("key")]
    distractors = rules + rng.sample(facts, min(len(facts), max(0, cfg.n_distractor_facts
                                                                - len(rules))))
    rng.shuffle(distractors)
    completion = format_actions(surface.recall_lines(creature, condition, rng))
    gold = {"memory_facts": _interleave(rng, distractors, chain), "gold_node_text": truth.rule_text,
            "gold_key": key, "n_stale": len(versions) - 1, "observation": obs.text,
            "entities": [creature, condition, *obs.legal_actions], "turn": obs.turn}
    return _row("ask", surface.ask_prompt(obs.text, obs.turn, rng), completion, gold, seed)


def answer_row(obs: Observation, truth: StepTruth, known: Known, rng: random.Random,
               cfg: SynthConfig, seed: int) -> dict | None:
    """The answer row of a decide turn (memory condition gold / stale / none), or None."""
    key = truth.rule_key
    if key is None or known.current(key) != truth.rule_text:
        return None
    stale = [v for v in known.versions[key][:-1] if v != truth.rule_text]
    pool = [f["text"] for f in known.others(key)]
    n, u = cfg.answer_lines, rng.random()
    if u < cfg.no_memory_share:
        condition, lines = "none", rng.sample(pool, min(rng.randint(0, n), len(pool)))
    elif u < cfg.no_memory_share + cfg.stale_share and stale and n >= 2:
        condition = "stale"
        lines = _interleave(rng, rng.sample(pool, min(n - 2, len(pool))), [stale[-1]])
        lines.append(truth.rule_text)
    else:
        condition = "gold"
        lines = rng.sample(pool, min(max(n - 1, 0), len(pool)))
        lines.insert(len(lines) if rng.random() < 0.6 else rng.randint(0, len(lines)),
                     truth.rule_text)
    fmt = rng.choice(cfg.answer_prompt_formats)
    prompt = (chat_messages(lines, obs.text) if fmt == "chat"
              else [{"role": "user", "content": completion_prompt(lines, obs.text)}])
    gold = {"answer": truth.correct_action, "options": list(obs.legal_actions),
            "memory": condition, "answerable": condition != "none", "prompt_format": fmt,
            "rule_key": key, "observation": obs.text, "turn": obs.turn}
    return _row("answer", prompt, f"<answer>{truth.correct_action}</answer>", gold, seed)


def order_twins(row: dict) -> list[dict]:
    """An answer row once per cyclic rotation of the options' places in its question (the row
    itself first), memory lines and answer unchanged: the pairs that say the order does not
    decide. A row whose question does not name each option exactly once comes back alone.

    >>> row = {"prompt": [{"role": "user", "content": "x\\nGive the a or the b?\\nAnswer:"}],
    ...        "completion": [{"role": "assistant", "content": "<answer>a</answer>"}],
    ...        "gold": {"observation": "Give the a or the b?", "options": ["a", "b"]}}
    >>> [t["gold"]["observation"] for t in order_twins(row)]
    ['Give the a or the b?', 'Give the b or the a?']
    >>> order_twins(row)[1]["prompt"][0]["content"]
    'x\\nGive the b or the a?\\nAnswer:'
    """
    from mags_lib.agents.option_order import rotations

    gold = row.get("gold") or {}
    question, options = gold.get("observation"), tuple(gold.get("options") or ())
    if not question or sum(question in m.get("content", "") for m in row["prompt"]) != 1:
        return [row]
    twins = [row]
    for k, q in enumerate(rotations(question, options)[1:], start=1):
        prompt = [{**m, "content": m["content"].replace(question, q)} for m in row["prompt"]]
        twins.append({**row, "prompt": prompt, "gold": {**gold, "observation": q,
                                                         "order_rotation": k}})
    return twins


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2}


def nearest_facts(text: str, pool: list[str], n: int, rng: random.Random) -> list[str]:
    """The `n` facts of `pool` sharing most words (3+ letters) with `text`, ties broken at
    random: a stand-in for the loop's recall on the observation, which shows the write model
    the same creature's other rules and other creatures' rules in the same condition.

    >>> nearest_facts("The red zib eats figs when it rains.",
    ...               ["The blue quax hums.", "On rainy turns, the red zib eats only corn.",
    ...                "On foggy turns, the red zib eats only figs."], 2, random.Random(0))
    ['On foggy turns, the red zib eats only figs.', 'On rainy turns, the red zib eats only corn.']
    """
    words = _words(text)
    scored = sorted(pool, key=lambda f: (-len(words & _words(f)), rng.random()))
    return scored[:n]


def garble(rule_text: str, rng: random.Random) -> str | None:
    """A wrong copy of `rule_text`, as a write model's mistakes leave one in memory: the item
    replaced by the creature's own name, or dropped (None if the text is not a rule sentence).

    >>> garble("On rainy turns, the purple glarb eats only the stone.", random.Random(1))
    'On rainy turns, the purple glarb eats only the glarb.'
    """
    rule = parse_rule(rule_text)
    if rule is None or rule.item not in rule_text:
        return None
    head = rule_text[: rule_text.rindex(rule.item)].rstrip()
    if rng.random() < 0.5:
        return f"{head} {rule.creature.split()[-1]}."
    return re.sub(r"\s+only( the)?$", ".", head) if re.search(r"\sonly( the)?$", head) else None


def imperfect_memory(truth: StepTruth, op: str, own: list[str], known: Known,
                     rng: random.Random, cfg: SynthConfig) -> tuple[str, list[str], str | None]:
    """What a real memory may hold about the turn's rule instead of a perfect memory's version:
    with probability `cfg.imperfect_memory_share` (on announce and feedback turns about a rule
    memory already holds), the stored version is *missing* (recall did not show it, or it was
    never written: gold becomes add), *stale* (an older item: update) or *garbled* (a wrong
    copy, `garble`: update). Returns (op, the memory lines about the rule, the imperfection)."""
    key = truth.rule_key
    if (not key or key.startswith(ALIAS_KEY) or truth.kind not in ("announce", "feedback")
            or op not in ("none", "update") or not own
            or rng.random() >= cfg.imperfect_memory_share):
        return op, own, None
    rule = parse_rule(truth.rule_text)
    modes = ["missing", "garbled"] + (["stale"] if op == "none" and rule else [])
    mode = rng.choice(modes)
    if mode == "missing":
        return "add", [], mode
    if mode == "stale":
        older = [v for v in known.versions.get(key, [])[:-1] if v != truth.rule_text]
        other = rng.choice([i for i in ITEMS if i != rule.item])
        shown = older[-1] if older else replace(rule, item=other).text
        return "update", [shown], mode
    shown = garble(own[0], rng)
    return ("update", [shown], mode) if shown else (op, own, None)


def neutral_frame(obs_text: str, surface_name: str, rng: random.Random) -> str | None:
    """A rule change's announcement re-framed as a first sight or an added rule of the
    *training* bank (the rule sentence kept), or None when `obs_text` is no change frame.

    >>> neutral_frame("Rule change: On icy turns, the red yip eats only the cup.", "varied",
    ...               random.Random(0))
    'A new rule: On icy turns, the red yip eats only the cup.'
    """
    rule = phrasing.unframe(obs_text, "change", "train")
    if rule is None:
        return None
    how = rng.choice(["first", "add"])
    if surface_name == "fixed":
        return ANNOUNCE_PREFIX[how] + rule
    return phrasing.announcement(rule, how, "train", rng)


# The announcement frames each engram op of an announced rule can come in.
FRAMES_OF_OP = {"add": ("first", "add"), "update": ("change",), "none": ("repeat",)}


def writer_frame(obs_text: str, op: str, old_item: str | None,
                 rng: random.Random) -> str | None:
    """An announcement of the training bank (varied surface) put in a frame of
    `phrasing.WRITER_FRAMES` of the same kind (a change stays a change, a repeat a repeat),
    the rule sentence kept; `old_item` fills a frame naming the item a change replaces (None:
    only frames without it). None when `obs_text` is in no training frame of `op`'s kinds (the
    bare "{rule}" frame, "As before, {rule_lc}").

    >>> writer_frame("Rule change: On icy turns, the red yip eats only the cup.", "update",
    ...              "pen", random.Random(6))
    'The pen is history. On icy turns, the red yip eats only the cup.'
    """
    for how in FRAMES_OF_OP.get(op, ()):
        rule = phrasing.unframe(obs_text, how, "train")
        if rule is not None:
            frames = phrasing.WRITER_FRAMES[how]
            if old_item is None:
                frames = tuple(f for f in frames if "{old}" not in f)
            return rng.choice(frames).format(rule=rule, old=old_item or "")
    return None


def lookalike(condition: str, items: list[str], avoid: set[str], rng: random.Random) -> str:
    """A sentence that looks like a rule and is not one (`phrasing.WRITER_LOOKALIKES`): an
    invented creature whose noun is not in `avoid` (the nouns of the creatures rules are
    about), on `condition` turns, with one of `items`, in a relation that is not eating.

    >>> lookalike("icy", ["cup"], {"yip"}, random.Random(1))
    'Only on icy turns does the bristly greknolb bury the cup.'
    """
    creature = vocab.creature_names(1, rng, avoid=avoid)[0]
    template = rng.choice(phrasing.WRITER_LOOKALIKES)
    return template.format(d=creature, w=condition, i=rng.choice(items))


def _contrast(obs_text: str, truth: StepTruth, known: Known, text: str | None,
              rng: random.Random, avoid: set[str] = frozenset()) -> str | None:
    """`obs_text` with a look-alike (`lookalike`) beside the rule of an announcement (before
    or after it; its condition, and its item or the item it replaces), or a look-alike in
    place of a distractor (a rule memory holds gives the condition and item); None when no
    rule is at hand. `avoid`: more nouns the look-alike's creature must not have (the game's
    own creatures)."""
    nouns = {k.split("|")[0].split()[-1] for k in known.versions} | set(avoid)
    if truth.kind == "announce":
        rule = parse_rule(text or "")
        if rule is None:
            return None
        old = parse_rule(known.current(truth.rule_key or "") or "")
        items = [rule.item] + ([old.item] if old and old.item != rule.item else [])
        sentence = lookalike(rule.condition, items, nouns | {rule.creature.split()[-1]}, rng)
        return f"{sentence} {obs_text}" if rng.random() < 0.5 else f"{obs_text} {sentence}"
    rules = [r for r in (parse_rule(v[-1]) for _, v in sorted(known.versions.items()))
             if r is not None]
    if not rules:
        return None
    rule = rng.choice(rules)
    return lookalike(rule.condition, [rule.item], nouns, rng)


def write_row(obs: Observation, truth: StepTruth, known: Known, rng: random.Random,
              cfg: SynthConfig, seed: int, wrong_feedback: str | None = None,
              imperfect_rng: random.Random | None = None,
              reframe_rng: random.Random | None = None, surface_name: str = "fixed",
              frame_rng: random.Random | None = None,
              contrast_rng: random.Random | None = None, avoid: set[str] = frozenset(),
              ) -> tuple[dict | None, str | None]:
    """The write row of an information turn, or (None, reason) when it cannot be one.
    `wrong_feedback` is the turn's "wrong answer" text (the game shows either verdict).
    A share of the rows about a rule memory already holds show an imperfect memory
    (`imperfect_memory`, drawn from `imperfect_rng`, its own stream, so that every other row
    stays as it was; None: a perfect memory); `gold["imperfect"]` names the imperfection and
    `gold["memory_edit"]` how the row's memory differs from the perfect one. A share
    (`cfg.reframe_update_share`, drawn from `reframe_rng`, its own stream; None: never) of the
    announced rule changes is re-framed as a first sight or an added rule (`neutral_frame`), so
    that the op must be read from the memory lines, not from the word "change";
    `gold["reframed"]` says which. Before that, a share (`cfg.writer_frame_share`, drawn from
    `frame_rng`, its own stream; None: never) of the announcements on the varied surface is put
    in a frame of the same kind that only the write model's training text uses
    (`writer_frame`); `gold["writer_frame"]` says which. Last, a share
    (`cfg.writer_contrast_share`, drawn from `contrast_rng`, its own stream; None: never) of the
    announcements get a look-alike beside the rule and of the distractors one in their place
    (`_contrast`), the gold unchanged; `gold["contrast"]` says which (written only when the
    share is above 0, so that off the rows are the bytes they were before the option)."""
    if not truth.engram_ops:
        return None, "no_engram_truth"
    op, text, key = truth.engram_ops[0]
    obs_text = obs.text
    if truth.kind == "feedback" and wrong_feedback and rng.random() < 0.3:
        obs_text = wrong_feedback
    reframed = writer_framed = False
    if (frame_rng is not None and truth.kind == "announce" and surface_name == "varied"
            and frame_rng.random() < cfg.writer_frame_share):
        old = parse_rule(known.current(key) or "") if op == "update" and key else None
        framed = writer_frame(obs_text, op, old.item if old else None, frame_rng)
        obs_text, writer_framed = framed or obs_text, framed is not None
    if (reframe_rng is not None and truth.kind == "announce" and op == "update"
            and reframe_rng.random() < cfg.reframe_update_share):
        neutral = neutral_frame(obs_text, surface_name, reframe_rng)
        obs_text, reframed = neutral or obs_text, neutral is not None
    contrasted = False
    if (contrast_rng is not None and truth.kind in ("announce", "distractor")
            and contrast_rng.random() < cfg.writer_contrast_share):
        with_lookalike = _contrast(obs_text, truth, known, text, contrast_rng, avoid)
        obs_text, contrasted = with_lookalike or obs_text, with_lookalike is not None
    own = [known.current(key)] if key and known.current(key) else []
    if truth.kind == "distractor" and obs.text in known.facts:  # as without a look-alike
        own = [obs.text]
    perfect_own = list(own)
    imperfect = None
    if imperfect_rng is not None:
        op, own, imperfect = imperfect_memory(truth, op, own, known, imperfect_rng, cfg)
    pool = [f["text"] for f in known.others(key) if f["text"] not in perfect_own]
    if rng.random() < cfg.write_context_nearest:  # what the loop's recall would show
        memory = perfect_own + nearest_facts(obs_text, pool,
                                             max(0, cfg.write_context - len(perfect_own)), rng)
    else:
        memory = perfect_own + rng.sample(pool, min(rng.randint(0, cfg.write_context),
                                                    len(pool)))
    rng.shuffle(memory)  # then the imperfect version in the perfect one's place (same draws)
    if own != perfect_own:
        memory = [x for line in memory for x in (own if line in perfect_own else [line])]
    if op == "none":
        ops, completion = [], NOTHING_TO_STORE
    elif not surface.fits_grammar(text):
        return None, "over_grammar_limits"
    else:
        cls = EngramAdd if op == "add" else EngramUpdate
        confidence = 0.95 if truth.kind == "announce" else 0.9
        ops = [{"op": op, "text": text, "block": "semantic"}]
        completion = format_actions([cls("semantic", text, confidence)])
    entities = key.split("|") + [text.rstrip(".").split()[-1]] if key else []
    gold = {"ops": ops, "op": op, "key": key, "kind": truth.kind, "observation": obs_text,
            "entities": entities, "turn": obs.turn, "memory_shown": memory,
            "imperfect": imperfect, "reframed": reframed, "writer_frame": writer_framed,
            "memory_edit": {"remove": perfect_own, "add": own} if imperfect else None}
    if cfg.writer_contrast_share > 0:  # off, the rows stay the bytes they were before the option
        gold["contrast"] = contrasted
    return _row("write", surface.write_prompt(obs_text, memory, rng), completion, gold, seed), None


def outcome_probes(known: Known, key: str | None, rng: random.Random,
                   max_probes: int = 8) -> list[dict[str, Any]]:
    """What the write model's outcome reward (`objectives.outcome`) asks the memory after a turn: one
    question per rule a perfect memory holds after it (the turn's own rule first), in the
    training phrasings, with the item the memory should give and its older versions' items."""
    out = []
    for k in sorted(known.versions, key=lambda k: (k != key, k))[:max_probes]:
        versions = [r for r in map(parse_rule, known.versions[k]) if r is not None]
        if not versions:
            continue
        rule = versions[-1]
        stale = sorted({v.item for v in versions[:-1]} - {rule.item})
        other = stale[-1] if stale else rng.choice([i for i in ITEMS if i != rule.item])
        options = rng.sample([rule.item, other], 2)
        out.append({"question": phrasing.decision_sentence(rule.creature, rule.condition,
                                                           options, "train", rng),
                    "creature": rule.creature, "condition": rule.condition,
                    "item": rule.item, "stale": stale})
    return out


def memory_before(known: Known, edit: dict | None) -> list[dict[str, str]]:
    """What memory held before a write turn: the perfect memory's facts, with a row's
    imperfection (`edit`: lines removed, lines put in their place) applied."""
    facts = [{"text": f["text"], "block": f["block"]} for f in known.others(None)]
    if not edit:
        return facts
    facts = [f for f in facts if f["text"] not in edit["remove"]]
    return facts + [{"text": t, "block": "semantic"} for t in edit["add"]]


def episode_rows(episode: Episode, cfg: SynthConfig) -> tuple[dict[str, list[dict]], Counter]:
    """Every candidate row of one episode by task, and why turns gave no row.

    Write rows also carry what the outcome reward needs (`gold["memory_before"]`: what a perfect
    memory held before the turn; `gold["probes"]`: `outcome_probes` after it), drawn from their
    own random stream so the rows themselves do not change."""
    seed = episode.config.seed
    rng = random.Random(f"synth:{cfg.seed}:{seed}")
    rows: dict[str, list[dict]] = {"ask": [], "write": [], "answer": []}
    skips: Counter = Counter()
    known = Known()
    probe_rng = random.Random(f"probes:{cfg.seed}:{seed}")
    imperfect_rng = random.Random(f"imperfect:{cfg.seed}:{seed}")
    reframe_rng = (random.Random(f"reframe:{cfg.seed}:{seed}")
                   if cfg.reframe_update_share > 0 and episode.config.phrasings == "train"
                   else None)
    frame_rng = (random.Random(f"writer-frames:{cfg.seed}:{seed}")
                 if cfg.writer_frame_share > 0 and episode.config.phrasings == "train" else None)
    nouns = {c.split()[-1] for c in episode.world.creatures}  # no look-alike names one
    contrast_rng = (random.Random(f"writer-contrast:{cfg.seed}:{seed}")
                    if cfg.writer_contrast_share > 0 and episode.config.phrasings == "train"
                    else None)
    for obs, truth in zip(episode.observations, episode.truths, strict=True):
        written = None
        if obs.kind == "decide":
            for task, make in (("ask", ask_row), ("answer", answer_row)):
                row = make(obs, truth, known, rng, cfg, seed)
                if row is None:
                    skips[f"{task}:unanswerable"] += 1
                else:
                    rows[task].append(row)
        else:
            row, reason = write_row(obs, truth, known, rng, cfg, seed,
                                    episode.wrong_feedback.get(obs.turn), imperfect_rng,
                                    reframe_rng, episode.config.surface, frame_rng,
                                    contrast_rng, nouns)
            if row is None:
                skips[f"write:{reason}"] += 1
            else:
                row["gold"]["memory_before"] = memory_before(known, row["gold"]["memory_edit"])
                rows["write"].append(row)
                written = row
        known.learn(truth, obs.text)
        if written is not None:  # the probes ask what memory should hold after the turn
            probes = outcome_probes(known, truth.rule_key, probe_rng)
            edit = written["gold"]["memory_edit"]
            if edit and probes:  # a wrong version the row's memory held is stale after it
                wrong = {r.item for r in map(parse_rule, edit["add"]) if r is not None}
                own = probes[0]
                own["stale"] = sorted(set(own["stale"]) | (wrong - {own["item"]}))
            written["gold"]["probes"] = probes
    return rows, skips


def heldout_write_rows(seeds: list[int], cfg: SynthConfig, n_per_op: int,
                       seed: int = 0, phrasings: str = "heldout") -> list[dict[str, Any]]:
    """Write rows for *judging* a write model on text it was not trained on: the games of
    `seeds` on the varied surface in the **held-out** phrasings (never in a dataset: these rows
    are built where they are judged and never saved under data/), each with the closed loop's
    own write messages (`play_write_messages`: the observation and the memory lines shown);
    up to `n_per_op` rows per gold op (add / update / none), drawn with `seed`.
    `phrasings="test"`: the game's test bank instead (notebooks 13 and 14)."""
    if phrasings == "train":
        raise MagsError("heldout_write_rows judges text the writer never trained on",
                        "use phrasings='heldout' (the development bank) or 'test'")
    from mags_lib.agents.role_prompts import play_write_messages

    by_op: dict[str, list[dict]] = {}
    for i, game_seed in enumerate(seeds):
        gc = replace(game_config(cfg, game_seed, i), surface="varied", phrasings=phrasings)
        for row in episode_rows(generate_episode(gc), cfg)[0]["write"]:
            g = row["gold"]
            row["prompt"] = play_write_messages(g["observation"], g["memory_shown"])
            row["gold"] = {**g, "phrasings": phrasings}
            by_op.setdefault(g["op"], []).append(row)
    rng = random.Random(f"heldout-write:{seed}")
    out = []
    for op in sorted(by_op):
        rows = by_op[op]
        out += rng.sample(rows, min(n_per_op, len(rows)))
    rng.shuffle(out)  # ops mixed, so that the first rows (samples shown) are not all one op
    return out
