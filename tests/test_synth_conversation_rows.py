"""Conversation rows for the write and ask models: their gold, their split, LoCoMo's absence."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

from mags_lib.conversations import locomo
from mags_lib.conversations import persona_phrases as P
from mags_lib.conversations.persona import SEEDS, make_persona
from mags_lib.objectives.data import row_problem
from mags_lib.synth import SynthConfig
from mags_lib.synth.build import verify_rows
from mags_lib.synth.conversation_rows import (
    IDK,
    answer_rows,
    ask_rows,
    conversation_rows,
    question_query,
    write_rows,
)

CFG = SynthConfig(n_persona_train=3, n_persona_val=1, sources=["persona"])


def test_write_rows_follow_the_gold_writes_and_show_what_they_replace():
    conv = make_persona(5, "train")
    rows = write_rows(conv, random.Random(0), CFG, source="persona", seed=5)
    assert all(row_problem(r, "write") is None for r in rows)
    assert all(verify_rows(rows, "write"))
    ops = Counter(r["gold"]["op"] for r in rows)
    gold = Counter(o.op for o in conv.gold_facts)
    assert ops["add"] == gold["add"] and ops["update"] == gold["update"] and ops["none"] > 0
    for r in rows:
        if r["gold"]["op"] == "update":
            replaced = next(o.replaces for o in conv.gold_facts
                            if o.text == r["gold"]["ops"][0]["text"])
            assert replaced in r["gold"]["memory_shown"]  # decidable from the prompt
            assert replaced in r["prompt"][-1]["content"]
            assert "update semantic" in r["completion"][0]["content"]
        assert r["gold"]["observation"] in r["prompt"][-1]["content"]
    # the assistant's replies are mostly left out; the user's chit-chat is kept as 'none'
    speakers = Counter(r["gold"]["observation"].split("] ")[1].split(":")[0] for r in rows)
    assert speakers[conv.speakers[0]] > 3 * speakers["Assistant"]


def test_twins_reword_no_fact_turns_from_training_only_banks_and_leave_the_rest_alone():
    from mags_lib.conversations import persona_phrases as P

    conv = make_persona(5, "train")
    plain = write_rows(conv, random.Random(0), CFG, source="persona", seed=5)
    both = write_rows(conv, random.Random(0), CFG, source="persona", seed=5, twins=True)
    twins = [r for r in both if "twin" in r["gold"]]
    assert [r for r in both if "twin" not in r["gold"]] == plain  # the other rows unchanged
    assert twins and all(r["gold"]["op"] == "none" and r["gold"]["ops"] == [] for r in twins)
    assert {r["gold"]["twin"] for r in twins} == {"small_talk", "repeat"}
    for r in twins:
        said = r["gold"]["observation"].split(": ", 1)[1]
        if r["gold"]["twin"] == "small_talk":
            assert said in P.TRAIN_SMALL_TALK
        else:  # the same state clause in a training-only repeat frame
            assert any(said.startswith(f.split("{s}")[0]) for f in P.TRAIN_REPEAT)
        assert "<engram>\n</engram>" in r["completion"][0]["content"]
    # the training-only banks share no entry with any bank's dev or test phrasings
    held = {x for bank in (P.GREETING, P.CHIT_CHAT, P.REPEAT, P.ASSISTANT)
            for split in ("dev", "test") for x in P.split_of(bank, split)}
    assert not held & (set(P.TRAIN_SMALL_TALK) | set(P.TRAIN_REPEAT))


def test_cue_twins_draw_from_the_cue_word_banks_only_when_asked():
    """SynthConfig.cue_twin_share: 0 leaves every row as it was; 1 makes every twin a cue-word
    one (a repeat in a CUE_WORD_REPEAT frame, small talk from CUE_WORD_SMALL_TALK), still
    nothing to store, the rows that are not twins unchanged."""
    import dataclasses

    from mags_lib.conversations import persona_train_phrases as T

    conv = make_persona(5, "train")
    base = write_rows(conv, random.Random(0), CFG, source="persona", seed=5, twins=True)
    off = write_rows(conv, random.Random(0), dataclasses.replace(CFG, cue_twin_share=0.0),
                     source="persona", seed=5, twins=True)
    assert off == base
    cued = write_rows(conv, random.Random(0), dataclasses.replace(CFG, cue_twin_share=1.0),
                      source="persona", seed=5, twins=True)
    assert [r for r in cued if "twin" not in r["gold"]] == [r for r in base
                                                            if "twin" not in r["gold"]]
    twins = [r for r in cued if "twin" in r["gold"]]
    assert {r["gold"]["twin"] for r in twins} == {"cued_small_talk", "cued_repeat"}
    for r in twins:
        said = r["gold"]["observation"].split(": ", 1)[1]
        assert r["gold"]["op"] == "none" and "<engram>\n</engram>" in r["completion"][0]["content"]
        if r["gold"]["twin"] == "cued_small_talk":
            assert said in T.CUE_WORD_SMALL_TALK
        else:
            assert any(said.startswith(f.split("{s}")[0]) and said.endswith(f.split("{s}")[1])
                       for f in T.CUE_WORD_REPEAT)
    with pytest.raises(Exception, match="cue_twin_share"):
        SynthConfig(cue_twin_share=1.5)


def test_ask_rows_name_the_asker_and_find_the_gold():
    conv = make_persona(5, "train")
    rows = ask_rows(conv, random.Random(0), CFG, source="persona", seed=5)
    assert rows and all(row_problem(r, "ask") is None for r in rows)
    assert all(r["gold"]["observation"].startswith(conv.speakers[0] + ": ") for r in rows)
    assert {r["gold"]["kind"] for r in rows} <= {"current", "earlier", "when"}
    assert sum(verify_rows(rows, "ask", 3)) >= 0.7 * len(rows)
    assert question_query("Where do I live now?", "Ana") == "Ana live now"
    assert "my" not in question_query("What is my favourite food?", "Ana").split()


def test_answer_rows_show_dated_lines_with_the_earlier_version_and_abstain_where_unsaid():
    from mags_lib.agents.open_answer import clean_answer, open_messages

    conv = make_persona(5, "train")
    cfg = SynthConfig(no_memory_share=0.0, answer_turn_share=0.0, answer_unmarked_share=0.0)
    rows = answer_rows(conv, random.Random(0), cfg, source="persona", seed=5)
    assert rows and all(row_problem(r, "answer") is None for r in rows)
    assert all(verify_rows(rows, "answer"))
    assert len(rows) == len([q for q in conv.qa if q.answer is None or len(q.answer) <= 80])
    for r in rows:
        g, qa = r["gold"], conv.qa[r["gold"]["question"]]
        assert r["prompt"] == open_messages(g["lines"], qa.asked())  # the evaluation's prompt
        assert clean_answer(r["completion"][0]["content"]) == g["answer"]
        assert len(g["lines"]) <= cfg.open_answer_lines["persona"]
        assert all(line.startswith("[") for line in g["lines"])  # dated, as recall dates them
        if qa.answer is None:
            assert g["answer"] == IDK and not g["answerable"]
        elif qa.kind in ("current", "earlier"):
            body = "\n".join(g["lines"])
            assert qa.answer in body  # the question's fact is shown
            for stale in qa.stale:  # no stale value is shown as still true
                assert not any(stale in ln and "(no longer true)" not in ln
                               for ln in g["lines"])
    earlier = [r for r in rows if r["gold"]["kind"] == "earlier"]
    assert earlier and all("(no longer true)" in "\n".join(r["gold"]["lines"]) for r in earlier)
    # with the facts left out, an answerable question is answered "I don't know", and no line
    # left names its answer (a 'when' answer is a day, which other lines' dates may show)
    for turn_share in (0.0, 1.0):  # fact lines, dialogue turns
        dropped = answer_rows(conv, random.Random(0), SynthConfig(
            no_memory_share=1.0, answer_turn_share=turn_share), source="persona", seed=5)
        assert all(r["gold"]["answer"] == IDK for r in dropped)
        for r in dropped:
            qa = conv.qa[r["gold"]["question"]]
            if qa.kind in ("current", "earlier"):
                assert not any(qa.answer.lower() in ln.lower() for ln in r["gold"]["lines"])



def test_earlier_question_twins_reword_training_questions_and_leave_the_rest_alone():
    from mags_lib.conversations import persona_train_phrases as T

    cfg = SynthConfig(n_persona_train=3, n_persona_val=1, sources=["persona"],
                      earlier_question_twins=1)
    conv = make_persona(SEEDS["train"][3], "train")
    plain = answer_rows(conv, random.Random(0), cfg, source="persona", seed=3)
    with_twins = answer_rows(conv, random.Random(0), cfg, source="persona", seed=3, twins=True)
    twins = [r for r in with_twins if r["gold"].get("twin")]
    assert [r for r in with_twins if not r["gold"].get("twin")] == plain  # their own stream
    earlier = [q for q in conv.qa if q.kind == "earlier"]
    assert earlier and len(twins) == len(earlier)
    bank = {x.format(name=p) for b in T.EARLIER_TWINS.values() for x in b for p in
            (*P.PEOPLE, "")}
    for r in twins:
        qa = conv.qa[r["gold"]["question"]]
        question = r["gold"]["observation"].split(": ", 1)[1]
        assert qa.kind == "earlier" and question != qa.question and question in bank
        assert r["gold"]["answer"] == qa.answer and r["gold"]["answerable"]  # never withheld
        assert qa.answer in "\n".join(r["gold"]["lines"])
    assert not answer_rows(conv, random.Random(0), SynthConfig(earlier_question_twins=0),
                           source="persona", seed=3, twins=True)[len(plain):]
    # only training personas get twins: dev rows are as without them
    assert not any(r["gold"].get("twin") for r in conversation_rows(CFG)[0]["answer"]["train"])
    rows, _ = conversation_rows(cfg)  # twins are an option (default 0)
    assert any(r["gold"].get("twin") for r in rows["answer"]["train"])
    assert not any(r["gold"].get("twin") for r in rows["answer"]["val"])


def test_answer_rows_show_other_peoples_values_of_the_asked_attribute_and_their_history():
    convs = [make_persona(s, "train") for s in SEEDS["train"][:6]]

    def distractor_topics(**kw) -> tuple[int, int, int]:
        """(other lines, other lines of the question's attribute, marked other lines)."""
        cfg = SynthConfig(no_memory_share=0.0, answer_turn_share=0.0, answer_unmarked_share=0.0,
                          **kw)
        n = same = marked = 0
        for conv in convs:
            for r in answer_rows(conv, random.Random(0), cfg, source="persona", seed=0):
                qa = conv.qa[r["gold"]["question"]]
                if qa.kind != "current":
                    continue
                gold_attr = next(P.fact_topic(o.text)[0].name for o in conv.gold_facts
                                 if qa.evidence[0] in o.evidence)
                for line in r["gold"]["lines"]:
                    fact = line.split("] ", 1)[1].removeprefix("(no longer true) ")
                    attr, who = P.fact_topic(fact)
                    if qa.answer in fact or (qa.stale and any(v in fact for v in qa.stale)):
                        continue  # the question's own chain
                    n += 1
                    same += attr.name == gold_attr
                    marked += "(no longer true)" in line
        return n, same, marked

    n0, same0, marked0 = distractor_topics(answer_same_attribute_share=0.0,
                                           answer_other_versions_share=0.0)
    n1, same1, marked1 = distractor_topics(answer_same_attribute_share=1.0,
                                           answer_other_versions_share=1.0)
    assert marked0 == 0 and marked1 > 0.1 * n1  # other facts' earlier versions, marked
    assert same1 / n1 > 2 * same0 / n0, (same0, n0, same1, n1)

def test_answer_rows_in_turn_style_show_both_values_unmarked_and_the_later_day_answers():
    """A turn-style row shows the turns that said the question's value and the value before
    it, dated and unmarked (as an episodic memory or static RAG shows them); an unmarked fact
    row shows both versions as current. In both, a current value's line is dated on or after
    the stale value's: the later day gives the answer."""
    from datetime import datetime

    from mags_lib.agents.open_answer import timeline
    from mags_lib.conversations.types import turn_text

    def _day(line: str) -> datetime:
        return datetime.strptime(line[1:line.index("]")], "%d %B %Y")

    conv = make_persona(5, "train")
    turns = {turn_text(t, dated=True) for t in conv.turns()}
    for style in ({"answer_turn_share": 1.0}, {"answer_turn_share": 0.0,
                                               "answer_unmarked_share": 1.0}):
        cfg = SynthConfig(no_memory_share=0.0, **style)
        skips: Counter = Counter()
        rows = answer_rows(conv, random.Random(0), cfg, source="persona", seed=5, skips=skips)
        assert all(verify_rows(rows, "answer"))
        assert not any("(no longer true)" in ln for r in rows for ln in r["gold"]["lines"])
        asked = [(r, conv.qa[r["gold"]["question"]]) for r in rows]
        assert any(qa.kind in ("current", "earlier") and qa.stale for _, qa in asked)
        for r, qa in asked:
            g = r["gold"]
            assert len(g["lines"]) <= cfg.open_answer_lines["persona"]
            if qa.kind not in ("current", "earlier") or not qa.stale:
                continue
            lines = timeline(g["lines"])
            said = [i for i, ln in enumerate(lines) if qa.answer.lower() in ln.lower()]
            other = [i for i, ln in enumerate(lines)
                     if any(s.lower() in ln.lower() for s in qa.stale)]
            assert said  # the answer is shown ...
            if other and qa.kind == "current":  # ... after (or on the day of) the stale value
                assert _day(lines[max(said)]) >= _day(lines[min(other)])
        if style["answer_turn_share"]:
            assert skips["turn_lines"] == len(rows)
            assert sum(ln in turns for r in rows for ln in r["gold"]["lines"]) > len(rows)



def test_turn_lines_over_the_cap_drop_the_longest_other_lines_and_keep_the_gold():
    from mags_lib.synth.conversation_rows import _turn_row_lines

    gold = [(3, "[1 May] Ana: I moved to Porto.")]
    spare = [(j, f"[2 May] Bo: {'long words ' * (j + 2)}") for j in range(6)]
    rng = random.Random(1)
    full = _turn_row_lines(gold, spare, lambda k: [], {}, 7, random.Random(1), 10_000)
    lines = _turn_row_lines(gold, spare, lambda k: [], {}, 7, rng, 150)
    assert gold[0][1] in lines and sum(map(len, lines)) <= 150 < sum(map(len, full))
    kept = [ln for ln in full if ln in lines]
    assert kept == lines  # order kept; what went was the longest
    assert max(map(len, set(full) - set(lines))) >= max(map(len, set(lines) - {gold[0][1]}))
    assert _turn_row_lines(gold, spare, lambda k: [], {}, 7, random.Random(1), 10) is None

def test_splits_keep_test_personas_and_test_conversations_out(tmp_path, monkeypatch):
    monkeypatch.delenv(locomo.ENV_VAR, raising=False)
    monkeypatch.setattr(locomo, "locomo_path", lambda explicit=None: None)  # nowhere
    rows, skips = conversation_rows(SynthConfig(n_persona_train=3, n_persona_val=1,
                                                sources=["persona", "locomo"]))
    assert skips["write"]["locomo_missing"] == 2  # absent (train, val): counted, no failure
    for task in ("ask", "write", "answer"):
        assert not rows[task]["test"]
        train = {r["gold"]["conversation"] for r in rows[task]["train"]}
        val = {r["gold"]["conversation"] for r in rows[task]["val"]}
        assert all(c.startswith("persona-train-") for c in train)
        assert all(c.startswith("persona-dev-") for c in val)
        assert all(r["game_seed"] in SEEDS["train"] for r in rows[task]["train"])
    assert any("twin" in r["gold"] for r in rows["write"]["train"])
    assert not any("twin" in r["gold"] for r in rows["write"]["val"])  # val keeps its phrasing


def _locomo_doc(sample_id: str) -> dict:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Lisbon."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!"},
                          {"speaker": "Ana", "dia_id": "D1:3", "text": "And I got a cat."}]},
        "qa": [{"question": "Where does Ana live?", "answer": "Lisbon", "evidence": ["D1:1"],
                "category": 4}],
        "observation": {"session_1_observation": {"Ana": [["Ana moved to Lisbon.", "D1:1"],
                                                          ["Ana has a cat.", "D1:3"]]}},
    }


def test_locomo_rows_come_from_the_training_conversations_only(tmp_path, monkeypatch):
    ids = locomo.SPLITS["train"] + locomo.SPLITS["test"]
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([_locomo_doc(i) for i in ids]))
    monkeypatch.setenv(locomo.ENV_VAR, str(path))
    rows, _ = conversation_rows(SynthConfig(sources=["locomo"], locomo_val=["conv-43"]))
    train = {r["gold"]["conversation"] for r in rows["write"]["train"]}
    val = {r["gold"]["conversation"] for r in rows["write"]["val"]}
    assert train == set(locomo.SPLITS["train"]) - {"conv-43"} and val == {"conv-43"}
    assert not any(rows[t]["test"] for t in ("write", "ask", "answer"))
    assert {r["gold"]["conversation"] for r in rows["answer"]["train"]} <= train
    one = [r for r in rows["write"]["train"] if r["gold"]["conversation"] == "conv-26"]
    assert [r["gold"]["op"] for r in one] == ["add", "none", "add"]
    assert rows["ask"]["train"][0]["gold"]["gold_node_text"] == "Ana moved to Lisbon."


def test_sources_are_checked():
    with pytest.raises(Exception, match="sources"):
        SynthConfig(sources=["dance"])


def test_persona_cue_phrases_change_the_training_rows_only():
    from dataclasses import replace

    base, _ = conversation_rows(CFG)
    cued, _ = conversation_rows(replace(CFG, persona_cue_phrases=True))
    for task in base:
        assert cued[task]["val"] == base[task]["val"], task  # dev personas as written
    for task in ("ask", "answer"):  # writer text: notebook 02's rows stay as they were
        assert cued[task]["train"] == base[task]["train"], task
    texts = [r["prompt"][-1]["content"] for r in cued["write"]["train"]]
    assert cued["write"]["train"] != base["write"]["train"]
    assert any(" instead" in t for t in texts)


def test_persona_cue_words_change_the_training_write_rows_only():
    from dataclasses import replace

    from mags_lib.conversations import persona_train_phrases as T

    base, _ = conversation_rows(CFG)
    cued, _ = conversation_rows(replace(CFG, persona_cue_words=True))
    for task in base:
        assert cued[task]["val"] == base[task]["val"], task
    for task in ("ask", "answer"):
        assert cued[task]["train"] == base[task]["train"], task
    rows = cued["write"]["train"]
    assert rows != base["write"]["train"]
    said = [r["gold"]["observation"] for r in rows]
    assert any("these days" in t for t in said)
    replies = [r for r in rows if any(a in r["gold"]["observation"] for a in T.CUE_WORD_ASSISTANT)]
    assert all(r["gold"]["op"] == "none" for r in replies)


def test_persona_contrast_adds_a_lookalike_keeps_the_gold_and_leaves_val_and_off_as_they_were():
    """persona_contrast_share puts a look-alike of a fact (persona_train_phrases.LOOKALIKES)
    beside a training persona's facts and in place of its small talk: the ops, op, kind and
    completion stay, the look-alike states no persona fact and names someone other than the
    fact's subject; the ask and answer rows and the val (dev) rows are as they were; share 0
    leaves the rows byte for byte as before (no "contrast" key); a share outside [0, 1] is
    refused."""
    from dataclasses import replace

    from mags_lib.conversations import persona_train_phrases as T

    conv = make_persona(5, "train")
    on_cfg = replace(CFG, persona_contrast_share=1.0)
    plain = write_rows(conv, random.Random(0), CFG, source="persona", seed=5, twins=True)
    both = write_rows(conv, random.Random(0), on_cfg, source="persona", seed=5, twins=True)
    assert not any("contrast" in r["gold"] for r in plain)
    main_on = [r for r in both if "twin" not in r["gold"]]
    main_off = [r for r in plain if "twin" not in r["gold"]]
    assert len(main_on) == len(main_off)
    seen = Counter()
    for a, b in zip(main_on, main_off, strict=True):
        ga, gb = a["gold"], b["gold"]
        assert (ga["ops"], ga["op"], ga["kind"], a["completion"]) == \
            (gb["ops"], gb["op"], gb["kind"], b["completion"])
        look = ga["contrast"]
        if look is None:
            assert ga["observation"] == gb["observation"]
            continue
        assert P.fact_topic(look) is None and look in ga["observation"]
        assert any(re.fullmatch(re.escape(t).replace(re.escape("{who}"), "(?i:.+)")
                                .replace(re.escape("{v}"), ".+"), look)
                   for bank in T.LOOKALIKES.values() for t in bank), look
        assert look in a["prompt"][-1]["content"]
        said = ga["observation"].split(": ", 1)[1]
        if ga["ops"]:
            seen["beside a fact"] += 1
            subject = P.fact_topic(ga["ops"][0]["text"])[1]
            who = look.split(" ")[0]
            assert who != subject and (who != "I" or subject != conv.speakers[0]), look
            assert said.replace(look, "").strip() == \
                gb["observation"].split(": ", 1)[1]
        elif said == look:
            seen["alone"] += 1
        else:
            seen["after a repeat"] += 1
            assert said.endswith(look)
    assert seen["beside a fact"] >= 3 and seen["alone"] >= 3, seen
    # every user turn drew a look-alike where one was at hand; the assistant's never
    assert all(r["gold"]["contrast"] is None for r in main_on
               if r["gold"]["observation"].split("] ")[1].startswith("Assistant:"))
    base, _ = conversation_rows(CFG)
    contrasted, _ = conversation_rows(on_cfg)
    for task in base:
        assert contrasted[task]["val"] == base[task]["val"], task  # dev personas as written
    for task in ("ask", "answer"):
        assert contrasted[task]["train"] == base[task]["train"], task
    assert not any("contrast" in r["gold"] for r in base["write"]["train"])
    with pytest.raises(Exception, match="persona_contrast_share"):
        SynthConfig(persona_contrast_share=-0.1)


def test_cap_unknown_keeps_at_most_the_share_and_the_order():
    from mags_lib.synth.conversation_rows import cap_unknown

    rows = [{"gold": {"answerable": i % 3 != 0}, "i": i} for i in range(30)]  # 10 unknown
    for share in (0.0, 0.1, 0.2, 0.5):
        kept, dropped = cap_unknown(rows, share, random.Random(1))
        unknown = sum(not r["gold"]["answerable"] for r in kept)
        assert unknown <= share * len(kept) + 1e-9 and dropped == 10 - unknown
        assert [r["i"] for r in kept] == sorted(r["i"] for r in kept)
        assert sum(r["gold"]["answerable"] for r in kept) == 20
    assert cap_unknown(rows, 1.0, random.Random(1)) == (rows, 0)
    assert cap_unknown(rows, 0.4, random.Random(1)) == (rows, 0)  # 10 of 30 is under 0.4


def test_answer_unknown_cap_changes_the_training_answer_rows_only():
    plain, _ = conversation_rows(CFG)
    capped, skips = conversation_rows(SynthConfig(n_persona_train=3, n_persona_val=1,
                                                  sources=["persona"],
                                                  answer_unknown_cap={"persona": 0.05}))
    for task in ("write", "ask"):
        assert capped[task] == plain[task]
    assert capped["answer"]["val"] == plain["answer"]["val"]
    train = capped["answer"]["train"]
    unknown = sum(not r["gold"]["answerable"] for r in train)
    before = sum(not r["gold"]["answerable"] for r in plain["answer"]["train"])
    assert unknown <= 0.05 * len(train) and unknown < before
    assert skips["answer"]["unknown_capped"] == before - unknown
    assert {json.dumps(r, sort_keys=True) for r in train} <= {
        json.dumps(r, sort_keys=True) for r in plain["answer"]["train"]}
    with pytest.raises(Exception, match="answer_unknown_cap"):
        SynthConfig(answer_unknown_cap={"game": 0.1})
    with pytest.raises(Exception, match="answer_unknown_cap"):
        SynthConfig(answer_unknown_cap={"locomo": 1.5})


def test_memory_twins_change_only_the_memory_and_the_op_follows_it():
    """memory_twin_share: a user turn gives a twin with the same observation and a memory that
    makes another op right (update without its old fact -> add; a repeat without its fact ->
    add of it; an add beside an older value of its attribute -> update). Every twin's gold
    agrees with what it shows; with the option on a repeat's own row shows what it repeats;
    the ask, answer and dev rows do not change; off, the rows are byte for byte as before; a
    share outside [0, 1] is refused."""
    from dataclasses import replace

    from mags_lib.synth.conversation_rows import repeated_fact

    on = replace(CFG, memory_twin_share=1.0)
    kinds = Counter()
    for seed in range(5, 13):
        conv = make_persona(seed, "train")
        user = conv.speakers[0]
        assert write_rows(conv, random.Random(0), CFG, source="persona", seed=seed, twins=True) \
            == write_rows(conv, random.Random(0), replace(CFG, memory_twin_share=0.0),
                          source="persona", seed=seed, twins=True)
        rows = write_rows(conv, random.Random(0), on, source="persona", seed=seed, twins=True)
        stated = {o.text for o in conv.gold_facts}
        for i, r in enumerate(rows):
            g = r["gold"]
            kind = g.get("twin", "")
            if not kind.startswith("memory:"):
                continue
            kinds[kind] += 1
            main = rows[i - 1]["gold"] if "twin" not in rows[i - 1]["gold"] else rows[i - 2]["gold"]
            assert g["observation"] == main["observation"] and g["memory_shown"] != main["memory_shown"]
            text = g["ops"][0]["text"]
            assert text in r["completion"][0]["content"] and g["op"] in r["completion"][0]["content"]
            if kind == "memory:update->add":
                gone = [m for m in main["memory_shown"] if m not in g["memory_shown"]]
                assert main["op"] == "update" and g["op"] == "add" and len(gone) == 1
                assert P.fact_topic(gone[0]) == P.fact_topic(text)
            elif kind == "memory:none->add":
                assert main["op"] == "none" and g["op"] == "add" and text in stated
                assert text in main["memory_shown"] and text not in g["memory_shown"]
                assert repeated_fact(g["observation"].split(": ", 1)[1], [text], user) == text
            else:
                assert kind == "memory:add->update" and main["op"] == "add" and g["op"] == "update"
                older = [m for m in g["memory_shown"] if P.fact_topic(m) == P.fact_topic(text)]
                assert len(older) == 1 and older[0] != text and older[0] not in main["memory_shown"]
    assert kinds["memory:update->add"] and kinds["memory:none->add"] and kinds["memory:add->update"]
    base, _ = conversation_rows(CFG)
    twinned, _ = conversation_rows(replace(CFG, memory_twin_share=0.3))
    for task in base:  # writer text only: notebook 02's rows and the dev rows stay
        assert twinned[task]["val"] == base[task]["val"], task
        if task != "write":
            assert twinned[task]["train"] == base[task]["train"], task
    assert len(twinned["write"]["train"]) > len(base["write"]["train"])
    with pytest.raises(Exception, match="memory_twin_share"):
        SynthConfig(memory_twin_share=1.5)
