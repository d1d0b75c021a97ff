"""Training rows from conversations: what a person's facts and LoCoMo's observations teach the
write and ask models, in the game's row format, so that one set of models learns every task.

    from mags_lib.synth.conversation_rows import conversation_rows
    rows, skips = conversation_rows(cfg)          # rows["write"]["train"], skips["write"]
    write_rows(conv, random.Random(0), cfg, source="persona", seed=3)

Write rows: one per turn, as the loop shows it to the write model (the dated turn,
`turn_text(dated=True)`, and up to `write_context` stored facts, the nearest first, the fact it
replaces always among them). Gold: the conversation's gold writes of that turn (`add`, or
`update` for a fact that replaces one the memory holds); a turn with none (chit-chat, a
repeat, the assistant's reply) is "nothing to store". A LoCoMo observation citing several turns
is written at the last of them (the fact is whole once its last turn is read).

Ask rows: one per question with evidence (not 'unknown', not category 5): the question as the
agent reads it (`QA.asked`, with its asker), the memory holding the conversation's gold facts
(every version, so a changed fact's old value stands beside the new), the gold fact(s) those of
the evidence turns. The target query is the question's own content words with "I" / "my"
resolved to the asker: a query the model can write from the question alone. Rows whose query
misses the gold in the top `recall_k` are dropped by the synthesis's check, as game rows are.

Answer rows: one per question, in the conversation evaluation's own prompt
(`agents.open_answer.open_messages`): the memory lines a perfect writer's memory would show
(`open_answer_lines` of them: the facts of the question's evidence turns, each after its
earlier version marked "(no longer true)", among other current facts of the conversation, every
line dated with the day it was said, as `agents.history_lines` dates recalled facts), and the
short gold answer in `<answer>` tags. Two other styles show what imperfect memories show: at
`answer_unmarked_share` the earlier version is not marked (a writer that added instead of
updating), and at `answer_turn_share` the lines are dialogue turns (`_turn_row_lines`: the
turns that said the fact and its earlier version, dated and unmarked, among other turns and
facts, as an episodic memory or static RAG shows them); in both the later day decides. A
question nothing said answers (the persona's 'unknown', LoCoMo's category 5), and at
`no_memory_share` an answerable one whose facts (and, in turns, whose turns and value) are left
out of the lines, answers "I don't know". So the answer model learns to read dated memory
lines, current against earlier values, and to abstain, beside the game's decisions.

Splits (never a test conversation, persona or phrasing): persona training seeds and phrasings
for train, development seeds and phrasings for val; LoCoMo's training conversations, minus
`SynthConfig.locomo_val`, for train, those for val. Where LoCoMo is absent its rows are skipped
and counted (`locomo_missing`), and everything else runs.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from mags_lib.actions import EngramAdd, EngramUpdate, RecallQuery, format_actions
from mags_lib.conversations.types import Conversation, turn_text
from mags_lib.synth import surface
from mags_lib.synth.chains import NOTHING_TO_STORE, nearest_facts

CONVERSATION_TASKS = ("ask", "write", "answer")

_WH = frozenset(["what", "which", "where", "when", "who", "whom", "whose", "how", "why", "do", "does", "did", "is", "are", "was", "were", "am", "has", "have", "had", "the", "a", "an", "of", "to", "ever"])
_ME = {"i": "{a}", "me": "{a}", "my": "{a}'s", "mine": "{a}'s", "i'm": "{a} is",
       "myself": "{a}"}


def question_query(question: str, asker: str | None) -> str:
    """The question's content words, "I" / "my" resolved to the asker, within the grammar.

    >>> question_query("What car do I drive now?", "Hugo")
    'car Hugo drive now'
    >>> question_query("When did Caroline go to the LGBTQ support group?", None)
    'Caroline go LGBTQ support group'
    """
    words = []
    for w in re.findall(r"[A-Za-z0-9'’]+", question):
        low = w.lower().replace("’", "'")
        if asker and low in _ME:
            words.append(_ME[low].format(a=asker))
        elif low not in _WH:
            words.append(w)
    text = " ".join(words)
    while len(text) > surface.MAX_TEXT:
        text = text.rsplit(" ", 1)[0]
    return text or question[:surface.MAX_TEXT].strip()


def _fact_turns(conv: Conversation) -> dict[str, list[Any]]:
    """Gold writes by the turn at which each is complete (its last evidence turn)."""
    order = {t.dia_id: i for i, t in enumerate(conv.turns())}
    out: dict[str, list[Any]] = defaultdict(list)
    for o in conv.gold_facts:
        known = [e for e in o.evidence if e in order]
        if known:
            out[max(known, key=order.__getitem__)].append(o)
    return out


def _row(task: str, prompt: list[dict], completion: str, gold: dict, seed: int) -> dict:
    return {"prompt": prompt, "completion": [{"role": "assistant", "content": completion}],
            "task": task, "gold": {**gold, "origin": "conversation"}, "game_seed": seed}


def _twin_text(text: str, rng: random.Random, cue_share: float = 0.0
               ) -> tuple[str, str] | None:
    """A training-only rewording of a user turn that carries no fact, and its kind: a repeat
    ("As I said, X.") in another repeat frame, anything else as other small talk; at
    `cue_share` from the banks whose words sound like a change (`persona_train_phrases.
    CUE_WORD_REPEAT` / `CUE_WORD_SMALL_TALK`; at 0 the stream draws exactly as before)."""
    from mags_lib.conversations import persona_phrases as P
    from mags_lib.conversations import persona_train_phrases as T

    cued = cue_share > 0 and rng.random() < cue_share
    for frame in P.split_of(P.REPEAT, "train"):
        head, tail = frame.split("{s}")
        if text.startswith(head) and text.endswith(tail) and len(text) > len(head) + len(tail):
            bank = T.CUE_WORD_REPEAT if cued else P.TRAIN_REPEAT
            return rng.choice(bank).format(s=text[len(head):len(text) - len(tail)]), \
                "cued_repeat" if cued else "repeat"
    if cued:
        return rng.choice(T.CUE_WORD_SMALL_TALK), "cued_small_talk"
    return rng.choice(P.TRAIN_SMALL_TALK), "small_talk"


def contrast_turn(turn: Any, facts: list[Any], known: list[str], user: str,
                  rng: random.Random) -> tuple[Any, str | None]:
    """`turn` with a look-alike of a fact (`persona_train_phrases.lookalike`) and the look-alike
    (None, and the turn as it was, where nothing is at hand). A turn with a fact gets it before
    or after its text: half the time the fact's own attribute with its new or its old value,
    else the attribute and value of another fact memory holds (`known`); its person is never
    the fact's subject ("I", another person of the conversation, or "my <relation>"). A turn of
    small talk is replaced by one, with a value memory holds and anyone; a repeat keeps its
    text and gets one after it."""
    from dataclasses import replace

    from mags_lib.conversations import persona_phrases as P
    from mags_lib.conversations import persona_train_phrases as T

    held = [v for v in map(P.fact_value, known) if v is not None]
    people = sorted({who for _, who, _ in held} - {user})
    own = [v for v in (P.fact_value(o.text) for o in facts) if v is not None]
    if own:
        attr, subject, value = own[0]
        old = next((P.fact_value(o.replaces) for o in facts if o.replaces), None)
        others = [(a, v) for a, _, v in held if a.name != attr.name]
        if others and rng.random() < 0.5:
            attr, value = rng.choice(others)
        elif old is not None and rng.random() < 0.5:
            value = old[2]
        names = ([] if subject == user else ["I"]) + [p for p in people if p != subject] \
            + [f"my {rel}" for rel in P.RELATIONS]
    elif held:
        attr, _, value = rng.choice(held)
        names = ["I", *people] + [f"my {rel}" for rel in P.RELATIONS]
    else:
        return turn, None
    look = T.lookalike(attr.name, value, rng.choice(names), rng)
    if not own and turn.text in (*P.CHIT_CHAT, *P.GREETING, *P.TRAIN_SMALL_TALK):
        text = look
    elif own and rng.random() < 0.5:
        text = f"{look} {turn.text}"
    else:
        text = f"{turn.text} {look}"
    return replace(turn, text=text), look


def repeated_fact(text: str, known: list[str], user: str) -> str | None:
    """The one known fact a turn restates: its value is in the turn and its subject is the
    speaker ("I", `user`) or named in the turn (None where no known fact, or more than one,
    fits; LoCoMo's facts never do).

    >>> repeated_fact("Like I told you, I drive a Volvo.", ["Ana drives a Volvo.",
    ...               "Ana lives in Porto."], "Ana")
    'Ana drives a Volvo.'
    >>> repeated_fact("Like I told you, I drive a Volvo.", ["Ana lives in Porto."], "Ana") is None
    True
    """
    from mags_lib.conversations import persona_phrases as P

    low = f" {text.lower()} "
    found = []
    for fact in known:
        parsed = P.fact_value(fact)
        if parsed is None or parsed[2].lower() not in low:
            continue
        who = parsed[1]
        if (who == user and re.search(r"\b(i|i'm|i've|my|me)\b", low)) or who in text:
            found.append(fact)
    return found[0] if len(found) == 1 else None


def memory_twin(ops: list[dict], facts: list[Any], memory: list[str], repeated: str | None,
                rng: random.Random, limit: int = 3
                ) -> tuple[list[str], list[dict], list[Any], str] | None:
    """The same turn with a memory that changes the right op, so that only the memory tells it
    (`SynthConfig.memory_twin_share`): an update whose old fact is left out of the memory is an
    add; a repeat whose fact is left out is an add of that fact; an add beside an older value of
    the same attribute and person is an update (the memory kept to `limit` lines, as
    `SynthConfig.write_context`). Returns (memory, ops, actions, kind), or None where the turn
    is none of these (small talk, several facts, a fact of no attribute)."""
    from mags_lib.conversations import persona_phrases as P

    if len(ops) == 1 and ops[0]["op"] == "update" and facts[0].replaces in memory:
        text = ops[0]["text"]
        return ([m for m in memory if m != facts[0].replaces],
                [{"op": "add", "text": text, "block": "semantic"}],
                [EngramAdd("semantic", text, 0.9)], "memory:update->add")
    if not ops and repeated is not None and repeated in memory:
        return ([m for m in memory if m != repeated],
                [{"op": "add", "text": repeated, "block": "semantic"}],
                [EngramAdd("semantic", repeated, 0.9)], "memory:none->add")
    if len(ops) == 1 and ops[0]["op"] == "add":
        parsed = P.fact_value(ops[0]["text"])
        if parsed is None:
            return None
        attr, who, value = parsed
        others = [v for v in attr.values if v != value]
        if not others:
            return None
        old = attr.fact.format(who=who, v=rng.choice(others))
        kept = memory[:max(0, limit - 1)] if len(memory) >= limit else list(memory)
        twin = [*kept, old]
        rng.shuffle(twin)
        text = ops[0]["text"]
        return (twin, [{"op": "update", "text": text, "block": "semantic"}],
                [EngramUpdate("semantic", text, 0.9)], "memory:add->update")
    return None


def judge_memory_twin(gold: dict, rng: random.Random, limit: int = 3
                      ) -> tuple[list[str], list[dict], list[Any], str] | None:
    """`memory_twin` of a judge row (`persona_judge_rows`), from its gold alone: the fact an
    update replaces is the one line of the memory shown on the same attribute and person (None
    where not exactly one is), a repeat's fact is `repeated_fact` of the turn as said. For
    probing whether a write model's op follows the memory (`tools/op_memory_probe.py`)."""
    from types import SimpleNamespace

    from mags_lib.conversations import persona_phrases as P

    speaker, said = gold["observation"].split("] ", 1)[-1].split(": ", 1)
    memory, ops, facts = list(gold["memory_shown"]), gold["ops"], []
    if len(ops) == 1 and ops[0]["op"] == "update":
        topic = P.fact_topic(ops[0]["text"])
        old = [m for m in memory if topic is not None and P.fact_topic(m) == topic]
        if len(old) != 1:
            return None
        facts = [SimpleNamespace(replaces=old[0])]
    repeated = repeated_fact(said, memory, speaker) if not ops else None
    return memory_twin(ops, facts, memory, repeated, rng, limit)


def write_rows(conv: Conversation, rng: random.Random, cfg: Any, *, source: str, seed: int,
               skips: Counter | None = None, twins: bool = False) -> list[dict]:
    """One write row per turn of `conv` (the assistant's turns at `cfg.assistant_turn_share`).

    With `twins` (persona training rows only), a user turn that carries no fact also gives,
    at `cfg.no_fact_twin_share`, a twin row: the same memory, the turn reworded from the
    training-only banks (`persona_phrases.TRAIN_SMALL_TALK` / `TRAIN_REPEAT`), "nothing to
    store". The twins draw from their own stream, so the other rows stay as they were.
    With `twins` and `cfg.persona_contrast_share` > 0, that share of the user's turns carries
    a look-alike of a fact (`contrast_turn`, its own stream too; `gold["contrast"]` holds it,
    None where a row has none): the memory shown is the nearest to the turn as said."""
    from dataclasses import replace

    skips = skips if skips is not None else Counter()
    twin_rng = random.Random(f"twin:{getattr(cfg, 'seed', 0)}:{conv.sample_id}")
    share = getattr(cfg, "persona_contrast_share", 0.0) if twins else 0.0
    contrast_rng = random.Random(f"persona-contrast:{getattr(cfg, 'seed', 0)}:{conv.sample_id}")
    memory_share = getattr(cfg, "memory_twin_share", 0.0) if twins else 0.0
    memory_rng = random.Random(f"memory-twin:{getattr(cfg, 'seed', 0)}:{conv.sample_id}")
    by_turn, known, rows = _fact_turns(conv), [], []
    user = conv.speakers[0]
    for i, turn in enumerate(conv.turns()):
        facts = by_turn.get(turn.dia_id, [])
        look = None
        if share > 0 and turn.speaker == user and contrast_rng.random() < share:
            turn, look = contrast_turn(turn, facts, known, user, contrast_rng)
        obs = turn_text(turn, dated=True)
        repeated = (repeated_fact(turn.text, known, user)
                    if memory_share > 0 and turn.speaker == user and not facts else None)
        own = [o.replaces for o in facts if o.replaces in known]
        pool = [f for f in known if f not in own]
        keep = bool(facts) or source != "persona" or turn.speaker == user \
            or rng.random() < cfg.assistant_turn_share
        if rng.random() < cfg.write_context_nearest:
            memory = own + nearest_facts(obs, pool, max(0, cfg.write_context - len(own)), rng)
        else:
            memory = own + rng.sample(pool, min(rng.randint(0, cfg.write_context), len(pool)))
        rng.shuffle(memory)
        if repeated is not None and repeated not in memory:
            # a repeat shows what it repeats, placed by the twins' own stream so that `rng`
            # (shared with the ask rows) draws as it does with the option off
            if len(memory) >= cfg.write_context:
                memory[memory_rng.randrange(len(memory))] = repeated
            else:
                memory.insert(memory_rng.randrange(len(memory) + 1), repeated)
        ops, actions = [], []
        for o in facts:
            op = "update" if o.replaces in known else "add"
            ops.append({"op": op, "text": o.text, "block": "semantic"})
            actions.append((EngramUpdate if op == "update" else EngramAdd)("semantic", o.text, 0.9))
        for o in facts:  # the memory after this turn, as a perfect writer leaves it
            if o.replaces in known:
                known.remove(o.replaces)
            if o.text not in known:
                known.append(o.text)
        if not keep:
            skips["assistant_turn"] += 1
            continue
        if any(not surface.fits_grammar(o["text"]) for o in ops) or len(ops) > surface.MAX_LINES:
            skips["over_grammar_limits"] += 1
            continue
        gold = {"ops": ops, "op": ops[0]["op"] if ops else "none", "observation": obs,
                "kind": "fact" if ops else "no_fact", "memory_shown": memory, "source": source,
                "conversation": conv.sample_id, "turn": i}
        if share > 0:
            gold["contrast"] = look
        completion = format_actions(actions) if actions else NOTHING_TO_STORE
        rows.append(_row("write", surface.write_prompt(obs, memory, rng), completion, gold, seed))
        if twins and not ops and turn.speaker == user \
                and twin_rng.random() < cfg.no_fact_twin_share:
            text, kind = _twin_text(turn.text, twin_rng, getattr(cfg, "cue_twin_share", 0.0))
            twin_obs = turn_text(replace(turn, text=text), dated=True)
            rows.append(_row("write", surface.write_prompt(twin_obs, memory, twin_rng),
                             NOTHING_TO_STORE, {**gold, "observation": twin_obs, "twin": kind,
                                                **({"contrast": None} if share > 0 else {})},
                             seed))
        if memory_share > 0 and turn.speaker == user and memory_rng.random() < memory_share:
            made = memory_twin(ops, facts, memory, repeated, memory_rng, cfg.write_context)
            if made is not None:
                twin_memory, twin_ops, twin_actions, kind = made
                rows.append(_row("write", surface.write_prompt(obs, twin_memory, memory_rng),
                                 format_actions(twin_actions),
                                 {**gold, "ops": twin_ops, "op": twin_ops[0]["op"],
                                  "kind": "fact", "memory_shown": twin_memory, "twin": kind},
                                 seed))
    return rows


def ask_rows(conv: Conversation, rng: random.Random, cfg: Any, *, source: str, seed: int,
             skips: Counter | None = None) -> list[dict]:
    """One ask row per question of `conv` that has evidence and an answer."""
    skips = skips if skips is not None else Counter()
    by_turn = _fact_turns(conv)
    every = list(dict.fromkeys(o.text for o in conv.gold_facts))
    rows = []
    for i, qa in enumerate(conv.qa):
        if qa.answer is None or qa.category == 5 or not qa.evidence:
            skips["no_evidence"] += 1
            continue
        gold = list(dict.fromkeys(o.text for e in qa.evidence for o in by_turn.get(e, [])))
        if not gold:
            skips["no_gold_fact"] += 1
            continue
        others = [f for f in every if f not in gold]
        facts = gold + rng.sample(others, min(len(others), cfg.n_distractor_facts))
        rng.shuffle(facts)
        query = question_query(qa.question, qa.asker)
        asked = qa.asked()
        completion = format_actions([RecallQuery(query)])
        row_gold = {"memory_facts": [{"text": f, "block": "semantic"} for f in facts],
                    "gold_node_text": gold[0], "gold_texts": gold, "observation": asked,
                    "source": source, "conversation": conv.sample_id, "question": i,
                    "kind": qa.kind, "category": qa.category}
        rows.append(_row("ask", surface.ask_prompt(asked, 0, rng), completion, row_gold, seed))
    return rows


IDK = "I don't know"
"""The answer to a question the memory lines do not answer (`agents.open_answer`'s prompt)."""


def _fact_chains(conv: Conversation) -> tuple[list[list[Any]], dict[str, str]]:
    """The gold facts as version chains (oldest first; an update extends the chain of the fact
    it replaces) and the day each fact was said (the session day of the turn that completes
    it, as `_fact_turns` places it)."""
    from mags_lib.conversations.types import day_of

    by_turn = _fact_turns(conv)
    said: dict[str, str] = {}
    chains: list[list[Any]] = []
    by_text: dict[str, list[Any]] = {}
    for turn in conv.turns():
        for o in by_turn.get(turn.dia_id, []):
            said.setdefault(o.text, day_of(turn.date))
            chain = by_text.get(o.replaces) if o.op == "update" and o.replaces else None
            if chain is None:
                chain = []
                chains.append(chain)
            if o.text not in by_text:
                chain.append(o)
                by_text[o.text] = chain
    return chains, said


def _turn_row_lines(gold: list[tuple[int, str]], spare: list[tuple[int, str]],
                    others: Callable[[int], list[list[Any]]], said: dict[str, str], n_lines: int,
                    rng: random.Random, max_chars: int, fit: bool = True) -> list[str] | None:
    """An answer row's lines in the turn style: the `gold` turns ((place in the conversation,
    dated text)), topped up to `n_lines` with `spare` turns and other chains' current facts
    (about half each; `others(k)` picks k chains at most); turns in conversation
    order, facts at random places among them (the prompt's `timeline` then orders the days, a
    day's lines as given). Over `max_chars`, with `fit` the longest lines that are not gold go
    first until the rest fits; None when they still exceed it (the row keeps fact lines)."""
    from mags_lib.agents.history_lines import dated_line

    gold = gold[:n_lines]
    room = max(0, n_lines - len(gold))
    n_turns = min(len(spare), sum(rng.random() < 0.5 for _ in range(room)))
    placed = [(j, text, True) for j, text in gold] \
        + [(j, text, False) for j, text in rng.sample(spare, n_turns)]
    end = max((j for j, _, _ in placed), default=0) + 1
    placed += [(rng.uniform(0, end), dated_line(c[-1].text, said.get(c[-1].text)), False)
               for c in others(max(0, room - n_turns))]
    extra = sorted((p for p in placed if not p[2]), key=lambda p: len(p[1]))
    while fit and sum(len(p[1]) for p in placed) > max_chars and extra:
        drop = extra.pop()
        placed = [p for p in placed if p is not drop]
    lines = [text for _, text, _ in sorted(placed, key=lambda p: p[0])]
    return lines if sum(map(len, lines)) <= max_chars else None


def answer_rows(conv: Conversation, rng: random.Random, cfg: Any, *, source: str, seed: int,
                skips: Counter | None = None, twins: bool = False) -> list[dict]:
    """One open-answer row per question of `conv` (see the module docstring).

    With `twins` (persona training rows only), each question for an earlier value also gives
    `cfg.earlier_question_twins` twin rows: the same question reworded from the training-only
    bank (`persona_train_phrases.EARLIER_TWINS`), its lines drawn afresh, never withheld. The
    twins draw from their own stream, so the other rows stay as they were."""
    from dataclasses import replace

    from mags_lib.agents.history_lines import dated_line
    from mags_lib.agents.open_answer import open_messages
    from mags_lib.conversations.persona_phrases import fact_topic
    from mags_lib.conversations.persona_train_phrases import earlier_twin

    skips = skips if skips is not None else Counter()
    n_lines = cfg.open_answer_lines.get(source, 5)
    chains, said = _fact_chains(conv)
    chain_of = {o.text: c for c in chains for o in c}
    by_turn = _fact_turns(conv)
    rows = []

    turns = list(conv.turns())
    turn_of = {t.dia_id: t for t in turns}
    said_at = {o.text: tid for tid, facts in by_turn.items() for o in facts}
    user = conv.speakers[0]

    def versions(chain: list[Any], answer: str) -> list[Any]:
        """The current version after the one before; where neither names `answer` (the
        version before was a correction, so the earlier value is older), the latest older
        version that does comes first."""
        shown = chain[-2:]
        if not any(answer.lower() in o.text.lower() for o in shown):
            named = [o for o in chain[:-2] if answer.lower() in o.text.lower()]
            shown = named[-1:] + shown
        return shown

    def lines_of(chain: list[Any], answer: str, marked: bool) -> list[str]:
        """`versions` as fact lines, the older ones marked no longer true where `marked`."""
        shown = versions(chain, answer)
        out = [dated_line(o.text, said.get(o.text), valid=not marked) for o in shown[:-1]]
        return out + [dated_line(shown[-1].text, said.get(shown[-1].text))]

    def turn_ids(chains: list[list[Any]], answer: str | None = None) -> set[str]:
        """The turns that said each chain's `versions` (every version without `answer`)."""
        return {said_at[o.text] for c in chains
                for o in (versions(c, answer) if answer is not None else c) if o.text in said_at}

    def distractors(others: list[list[Any]], topic_chains: list[list[Any]], rng: random.Random
                    ) -> Callable[[int], list[list[Any]]]:
        """A picker of up to k of `others` for a row's other lines: at random, or at
        `cfg.answer_same_attribute_share` the chains of the question's attribute about other
        people first (what recall brings for "Which car does Nadia drive?": everyone's cars).
        At share 0 it draws exactly what `rng.sample` did before the option existed."""
        topics = {t[0].name for c in topic_chains if (t := fact_topic(c[-1].text))}

        def pick(k: int) -> list[list[Any]]:
            if not (cfg.answer_same_attribute_share > 0 and topics
                    and rng.random() < cfg.answer_same_attribute_share):
                return rng.sample(others, min(len(others), k))
            order = rng.sample(others, len(others))
            same = [c for c in order if (t := fact_topic(c[-1].text)) and t[0].name in topics]
            return (same + [c for c in order if all(c is not x for x in same)])[:k]
        return pick

    def row_of(i: int, qa: Any, rng: random.Random, may_withhold: bool = True,
               extra: dict | None = None) -> dict | None:
        """The answer row of `qa` (None, counted in `skips`, where it gives none); lines and
        style drawn from `rng`; `may_withhold` False keeps the question's facts shown."""
        answer = IDK if qa.answer is None else str(qa.answer).strip()
        if not answer or len(answer) > cfg.open_answer_chars:
            skips["long_answer" if answer else "no_answer"] += 1
            return None
        style = rng.random()  # fact lines (earlier versions marked), unmarked, or turns
        as_turns = style < cfg.answer_turn_share
        marked = style >= cfg.answer_turn_share + cfg.answer_unmarked_share
        gold_chains: list[list[Any]] = []
        pool = chains
        withheld = ""  # the value of an answerable question whose facts are left out
        withheld_turns: set[str] = set()
        topic_chains: list[list[Any]] = []
        if qa.answer is not None:
            gold_chains = topic_chains = chains_of(qa)
            if not gold_chains:
                skips["no_gold_fact"] += 1
                return None
            if may_withhold and rng.random() < cfg.no_memory_share:  # no other line names it
                pool = [c for c in chains if answer.lower() not in c[-1].text.lower()]
                withheld, answer = answer, IDK
                withheld_turns = turn_ids(gold_chains) | set(qa.evidence)
                gold_chains = []
        others = distractors([c for c in pool if all(c is not g for g in gold_chains)],
                             topic_chains, rng)
        lines = None
        if as_turns:
            if answer == IDK:  # none of the question's turns, none naming its value
                gold, avoid = [], withheld_turns
            else:
                ids = turn_ids(gold_chains, answer) | {e for e in qa.evidence if e in turn_of}
                gold = [(j, turn_text(t, dated=True)) for j, t in enumerate(turns)
                        if t.dia_id in ids]
                avoid = turn_ids(gold_chains) | ids
            spare = [(j, turn_text(t, dated=True)) for j, t in enumerate(turns)
                     if t.dia_id not in avoid
                     and not (withheld and withheld.lower() in t.text.lower())]
            lines = _turn_row_lines(gold, spare, others, said, n_lines, rng,
                                    cfg.answer_turn_chars, fit=cfg.answer_turn_fit)
            skips["turn_lines" if lines is not None else "turn_lines_too_long"] += 1
        if lines is None:
            blocks = [lines_of(c, answer, marked) for c in gold_chains]  # after the earlier
            room = max(0, n_lines - sum(map(len, blocks)))
            for c in others(room):
                if room <= 0:
                    break
                block = [dated_line(c[-1].text, said.get(c[-1].text))]
                if cfg.answer_other_versions_share > 0 and len(c) > 1 and room > 1 \
                        and rng.random() < cfg.answer_other_versions_share \
                        and not (withheld and withheld.lower() in c[-2].text.lower()):
                    block = [dated_line(c[-2].text, said.get(c[-2].text),
                                        valid=not marked)] + block
                blocks.append(block)
                room -= len(block)
            rng.shuffle(blocks)
            lines = [ln for b in blocks for ln in b]
        row_gold = {"answer": answer, "observation": qa.asked(), "lines": lines,
                    "source": source, "conversation": conv.sample_id, "question": i,
                    "kind": qa.kind or ("unknown" if qa.answer is None else "answer"),
                    "category": qa.category, "stale": list(qa.stale),
                    "answerable": answer != IDK, **(extra or {})}
        return _row("answer", open_messages(lines, qa.asked()), f"<answer>{answer}</answer>",
                    row_gold, seed)

    def chains_of(qa: Any) -> list[list[Any]]:
        """The version chains of the facts said at `qa`'s evidence turns, in order."""
        out: list[list[Any]] = []
        for e in qa.evidence:
            for o in by_turn.get(e, []):
                c = chain_of.get(o.text)
                if c is not None and all(c is not g for g in out):
                    out.append(c)
        return out

    for i, qa in enumerate(conv.qa):
        row = row_of(i, qa, rng)
        if row is not None:
            rows.append(row)
    twin_rng = random.Random(f"answer-twin:{getattr(cfg, 'seed', 0)}:{conv.sample_id}")
    for i, qa in enumerate(conv.qa):
        if not twins or qa.kind != "earlier" or qa.answer is None:
            continue
        chain = next(iter(chains_of(qa)), None)
        for _ in range(cfg.earlier_question_twins):
            question = None if chain is None else earlier_twin(chain[-1].text, user, twin_rng)
            if question is None:
                skips["earlier_twin_unphrased"] += 1
                break
            row = row_of(i, replace(qa, question=question), twin_rng, may_withhold=False,
                         extra={"twin": "earlier_phrasing"})
            if row is not None:
                rows.append(row)
    return rows


def _rows_of(convs: list[Conversation], source: str, cfg: Any, skips: dict[str, Counter],
             twins: bool = False) -> dict[str, list[dict]]:
    """Write, ask and answer rows of `convs`, each conversation drawing from its own seeded
    streams; a row's seed is the persona's or the LoCoMo conversation's number. `twins`: see
    `write_rows`."""
    out: dict[str, list[dict]] = {task: [] for task in CONVERSATION_TASKS}
    for conv in convs:
        seed = int(conv.sample_id.rsplit("-", 1)[-1])
        rng = random.Random(f"conversation:{cfg.seed}:{conv.sample_id}")
        out["write"] += write_rows(conv, rng, cfg, source=source, seed=seed,
                                   skips=skips["write"], twins=twins)
        out["ask"] += ask_rows(conv, rng, cfg, source=source, seed=seed, skips=skips["ask"])
        out["answer"] += answer_rows(conv, random.Random(f"answer:{cfg.seed}:{conv.sample_id}"),
                                     cfg, source=source, seed=seed, skips=skips["answer"],
                                     twins=twins)
    return out


def _persona(cfg: Any, split: str, skips: dict[str, Counter]) -> dict[str, list[dict]]:
    from mags_lib.tasks.registry import get_task

    n = cfg.n_persona_train if split == "train" else cfg.n_persona_val
    if n <= 0:
        return {task: [] for task in CONVERSATION_TASKS}
    name, twins = ("train" if split == "train" else "dev"), split == "train"
    own = {task: Counter() for task in CONVERSATION_TASKS}
    rows = _rows_of(get_task("persona").episodes(name, n), "persona", cfg, own, twins=twins)
    cue_options = {"train_cue_phrases": getattr(cfg, "persona_cue_phrases", False),
                   "train_cue_words": getattr(cfg, "persona_cue_words", False)}
    if split == "train" and any(cue_options.values()):
        # The cue phrases are write-model text: the write rows come from the personas that say
        # them, the ask and answer rows stay those of the plain personas, so that a writer
        # recipe leaves notebook 02's data (and so its models) as they were.
        cued = {task: Counter() for task in CONVERSATION_TASKS}
        cue_task = get_task("persona", **{k: v for k, v in cue_options.items() if v})
        rows["write"] = _rows_of(cue_task.episodes(name, n), "persona", cfg, cued,
                                 twins=twins)["write"]
        own["write"] = cued["write"]
    for task, counts in own.items():
        skips[task].update(counts)
    return rows


def _locomo(cfg: Any, split: str, skips: dict[str, Counter]) -> dict[str, list[dict]]:
    from mags_lib.tasks.registry import get_task

    out: dict[str, list[dict]] = {task: [] for task in CONVERSATION_TASKS}
    locomo = get_task("locomo")
    ids = [c for c in locomo.ids("train") if (c in cfg.locomo_val) == (split == "val")]
    if not ids:
        return out
    if not locomo.available():
        for task in out:
            skips[task]["locomo_missing"] += 1
        return out
    return _rows_of(locomo.episodes("train", ids=ids), "locomo", cfg, skips)


def cap_unknown(rows: list[dict], share: float, rng: random.Random) -> tuple[list[dict], int]:
    """`rows` with at most `share` of them answering "I don't know" (`gold["answerable"]`
    false): the excess, drawn by `rng`, left out, the rest in their order; and how many were.

    >>> rows = [{"gold": {"answerable": i % 2 == 0}} for i in range(10)]
    >>> kept, dropped = cap_unknown(rows, 0.2, random.Random(0))
    >>> len(kept), dropped, sum(not r["gold"]["answerable"] for r in kept)
    (6, 4, 1)
    """
    unknown = [i for i, r in enumerate(rows) if not r["gold"].get("answerable", True)]
    known = len(rows) - len(unknown)
    room = len(unknown) if share >= 1.0 else int(share * known / (1.0 - share))
    if room >= len(unknown):
        return rows, 0
    drop = set(unknown) - set(rng.sample(unknown, room))
    return [r for i, r in enumerate(rows) if i not in drop], len(drop)


def conversation_rows(cfg: Any) -> tuple[dict[str, dict[str, list[dict]]],
                                          dict[str, Counter]]:
    """Ask, write and answer rows of `cfg.sources`' conversations by split (train, val; test
    stays empty: test conversations never enter a dataset), shuffled, and why turns gave none."""
    rows = {t: {"train": [], "val": [], "test": []} for t in CONVERSATION_TASKS}
    skips = {t: Counter() for t in CONVERSATION_TASKS}
    makers = {"persona": _persona, "locomo": _locomo}
    caps = getattr(cfg, "answer_unknown_cap", {}) or {}
    for source in cfg.sources:
        if source not in makers:
            continue
        for split in ("train", "val"):
            got = makers[source](cfg, split, skips)
            if split == "train" and source in caps:
                got["answer"], dropped = cap_unknown(
                    got["answer"], caps[source],
                    random.Random(f"answer-unknown-cap:{cfg.seed}:{source}"))
                skips["answer"]["unknown_capped"] += dropped
            for task in rows:
                rows[task][split] += got[task]
    for task in rows:
        for split in rows[task]:
            random.Random(f"shuffle:{cfg.seed}:conversation:{task}:{split}").shuffle(
                rows[task][split])
    return rows, skips


def as_in_play(rows: list[dict]) -> list[dict]:
    """`rows` with the loop's own messages as prompts (the first phrasing, as the closed loop
    sends them), for judging a model exactly as it is used."""
    from mags_lib.agents.role_prompts import play_ask_messages, play_write_messages

    out = []
    for r in rows:
        g = r["gold"]
        prompt = (play_write_messages(g["observation"], g["memory_shown"]) if r["task"] == "write"
                  else play_ask_messages(g["observation"]))
        out.append({**r, "prompt": prompt})
    return out


def persona_judge_rows(split: str, n: int, cfg: Any = None, offset: int = 0
                       ) -> dict[str, list[dict]]:
    """Write and ask rows of `n` persona conversations of `split` ('dev' or 'test'), prompted
    as in play: for judging trained models, never for a dataset."""
    from mags_lib.synth.config import SynthConfig
    from mags_lib.tasks.registry import get_task

    cfg = cfg or SynthConfig(assistant_turn_share=0.0)
    out: dict[str, list[dict]] = {"write": [], "ask": []}
    for conv in get_task("persona").episodes(split, n, offset=offset):
        seed = int(conv.sample_id.rsplit("-", 1)[-1])
        rng = random.Random(f"judge:{conv.sample_id}")
        out["write"] += write_rows(conv, rng, cfg, source="persona", seed=seed)
        out["ask"] += ask_rows(conv, rng, cfg, source="persona", seed=seed)
    return {task: as_in_play(rows) for task, rows in out.items()}


PERSONA_JUDGE_SETS = ("persona-fresh", "persona-dev-new", "persona-dev-nb12")
"""The persona development sets a write model is judged on (`persona_judge_set`)."""


def persona_judge_set(name: str, fresh: int = 12, personas: int = 12, offset: int = 6
                      ) -> list[dict]:
    """The write rows of one of `PERSONA_JUDGE_SETS`, prompted as in play: `persona-fresh`, the
    first `fresh` personas of the fresh split (`persona_fresh_phrases`, which no model was
    steered by); `persona-dev-new`, `personas` development personas from `offset` on (after
    notebook 12's six); `persona-dev-nb12`, notebook 12's six development personas."""
    if name == "persona-fresh":
        return persona_judge_rows("fresh", fresh)["write"]
    if name == "persona-dev-new":
        return persona_judge_rows("dev", personas, offset=offset)["write"]
    if name == "persona-dev-nb12":
        return persona_judge_rows("dev", 6)["write"]
    raise ValueError(f"unknown persona judge set {name!r}; use one of {PERSONA_JUDGE_SETS}")


def locomo_judge_rows(split: str, n: int | None, turns: int, cfg: Any = None,
                      path: str | None = None) -> list[dict]:
    """Write rows of LoCoMo's conversations of `split` ('train', 'dev' or 'test'; the first
    `n`, all when None), prompted as in play: each conversation's rows in order of its turns,
    then a seeded sample of `turns` of them (all when fewer). The gold op is `add` where the
    turn carries a session observation, else `none`. For judging trained models, never for a
    dataset; [] where the LoCoMo file is absent (the caller says so)."""
    from mags_lib.synth.config import SynthConfig
    from mags_lib.tasks.registry import get_task

    locomo = get_task("locomo", path=path)
    if not locomo.available():
        return []
    cfg = cfg or SynthConfig()
    out: list[dict] = []
    for conv in locomo.episodes(split, n):
        seed = int(conv.sample_id.rsplit("-", 1)[-1])
        rng = random.Random(f"judge:{conv.sample_id}")
        rows = write_rows(conv, rng, cfg, source="locomo", seed=seed)
        keep = sorted(random.Random(f"judge-sample:{conv.sample_id}").sample(
            range(len(rows)), min(turns, len(rows))))
        out += [rows[i] for i in keep]
    return as_in_play(out)
