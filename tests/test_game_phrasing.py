"""The varied surface: phrasings split into training and held-out, and kept apart.

Held-out phrasings are for evaluation only: no dataset row may contain a sentence built from
one. The fixed surface must not change (earlier results replay bit for bit), and the surface
never changes what a turn is about (the ground truth is the same on every surface).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace

import pytest

from mags_lib.errors import MagsError
from mags_lib.game import GameConfig, generate_episode
from mags_lib.game import phrasing as ph
from mags_lib.paths import BANKS_DIR


def _regex(template: str) -> re.Pattern:
    """A template as a pattern: its literal words, any text for each placeholder."""
    parts = re.split(r"\{[a-zA-Z_0-9]+\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts))


FILE_BANKS = sorted(str(p) for p in BANKS_DIR.glob("*.json"))  # scored once, never trained on
HELDOUT = [_regex(t) for t in ph.all_templates("heldout") + ph.all_templates("test")
           + [t for bank in FILE_BANKS for t in ph.all_templates(bank)]]


def heldout_hits(text: str) -> list[str]:
    """The held-out (development) and test templates `text` matches (the committed file banks'
    too)."""
    return [p.pattern for p in HELDOUT if p.search(text)]


def test_the_committed_file_banks_load_and_share_no_template_with_the_built_in_ones():
    assert FILE_BANKS  # data/banks/ holds at least the one written on 2026-12-01
    built_in = {t for split in ph.PHRASING_SETS for t in ph.all_templates(split)}
    for bank in FILE_BANKS:
        assert not set(ph.all_templates(bank)) & built_in, bank


def test_the_writers_training_frames_are_no_banks_and_match_no_held_out_template():
    """phrasing.WRITER_FRAMES are training text only: none is a frame of a built-in set, no
    held-out, test or committed file bank's template matches one, and every kind has several,
    every change frame holding the rule (some also the old item)."""
    built_in = {t for split in ph.PHRASING_SETS for t in ph.all_templates(split)}
    filled = {how: [f.format(rule="On icy turns, the red yip eats only the cup.", old="pen")
                    for f in frames] for how, frames in ph.WRITER_FRAMES.items()}
    assert set(ph.WRITER_FRAMES) == set(ph.HOWS)
    for how, frames in ph.WRITER_FRAMES.items():
        assert len(frames) >= 3 and not set(frames) & built_in, how
        assert all(f.count("{rule}") == 1 for f in frames)
        assert not [t for t in filled[how] if heldout_hits(t.replace(
            "On icy turns, the red yip eats only the cup.", "Zz"))], how
    assert any("{old}" in f for f in ph.WRITER_FRAMES["change"])


def test_the_writers_lookalikes_are_no_banks_no_rules_and_match_no_held_out_template():
    """phrasing.WRITER_LOOKALIKES are training text only: none is a template of a built-in set
    or a committed file bank, none filled matches a held-out or test template, and none says
    what a creature eats, so none reads as a rule (the game's rule parser finds none); each
    names one creature, one condition and one item."""
    from mags_lib.game.senseless import parse_rule

    built_in = {t for split in ph.PHRASING_SETS for t in ph.all_templates(split)}
    banks = {t for bank in FILE_BANKS for t in ph.all_templates(bank)}
    looks = ph.WRITER_LOOKALIKES
    assert len(looks) >= 8 and len(set(looks)) == len(looks)
    assert not set(looks) & (built_in | banks)
    for template in looks:
        assert [template.count(k) for k in ("{d}", "{w}", "{i}")] == [1, 1, 1], template
        filled = template.format(d="lanky grilb", w="icy", i="cup")
        assert parse_rule(filled) is None and "eat" not in filled.lower(), filled
        assert not heldout_hits(filled), filled


def test_train_heldout_and_test_banks_share_no_template_and_have_several_each():
    train, held = set(ph.all_templates("train")), set(ph.all_templates("heldout"))
    test = set(ph.all_templates("test"))
    assert not train & held and not train & test and not held & test
    for bank in (ph.RULES, ph.DECISIONS, ph.FEEDBACK):
        assert len(bank["train"]) >= 3 and len(bank["heldout"]) >= 2 and len(bank["test"]) >= 2
    assert not set(ph.DISTRACTORS["test"]) & set(ph.DISTRACTORS["train"])


def test_a_test_game_shows_its_own_distractors_and_the_same_truths():
    cfg = GameConfig(seed=4, episode_length=300, surface="varied", phrasings="test")
    test = generate_episode(cfg)
    held = generate_episode(replace(cfg, phrasings="heldout"))
    own = [_regex(t) for t in ph.DISTRACTORS["test"]]
    shown = [o.text for o in test.observations if o.kind == "distractor"]
    assert shown and all(any(p.fullmatch(t) for p in own) for t in shown)
    assert [t.kind for t in test.truths] == [t.kind for t in held.truths]
    assert [t.rule_key for t in test.truths] == [t.rule_key for t in held.truths]


def test_every_phrasing_names_the_rule_and_every_option():
    rng = random.Random(0)
    for split in ph.PHRASING_SETS:
        for _ in range(50):
            s = ph.rule_sentence("purple glarb", "rainy", "carrot", split, rng)
            assert all(w in s.lower() for w in ("purple glarb", "rainy", "carrot")), s
            d = ph.decision_sentence("purple glarb", "rainy", ["stone", "carrot"], split, rng)
            assert all(w in d.lower() for w in ("purple glarb", "rainy", "stone", "carrot")), d


def test_the_heldout_pattern_check_can_fail():
    rng = random.Random(1)
    sentence = ph.rule_sentence("teal quorb", "windy", "harp", "heldout", rng)
    assert heldout_hits(sentence)
    assert not heldout_hits("On windy turns, the teal quorb eats only the harp.")


@pytest.mark.parametrize("seed", [0, 3])
def test_a_training_phrasings_game_never_shows_a_heldout_sentence(seed):
    ep = generate_episode(GameConfig(seed=seed, episode_length=300, surface="varied",
                                     phrasings="train"))
    texts = [o.text for o in ep.observations] + list(ep.wrong_feedback.values())
    assert not [t for t in texts if heldout_hits(t)]
    assert len({o.text.split(":")[0] for o in ep.observations if o.kind == "announce"}) > 3


def test_the_surface_changes_the_words_not_the_game():
    fixed = generate_episode(GameConfig(seed=5, episode_length=200))
    varied = generate_episode(GameConfig(seed=5, episode_length=200, surface="varied"))
    assert [t.to_dict() for t in fixed.truths] == [t.to_dict() for t in varied.truths]
    assert [o.legal_actions for o in fixed.observations] == \
           [o.legal_actions for o in varied.observations]
    changed = sum(a.text != b.text for a, b in zip(fixed.observations, varied.observations,
                                                  strict=True) if a.kind != "distractor")
    assert changed > 100


def test_the_fixed_surface_is_unchanged():
    ep = generate_episode(GameConfig(seed=1, episode_length=6))
    assert [o.text for o in ep.observations][:3] == [
        "The violet vloorg hums at dusk.",
        "A scroll reads: On breezy turns, the glossy pruthroosh eats only the brass.",
        "A scroll reads: On gloomy turns, the hollow threejark eats only the harp."]


def test_wrong_feedback_uses_the_same_words_with_the_other_verdict():
    from mags_lib.game import SenselessGame

    game = SenselessGame(GameConfig(seed=2, episode_length=80, surface="varied"))
    obs = game.reset()
    while not obs.legal_actions:
        obs = game.step(None).observation
    right = game.episode.observations[obs.turn + 1].text
    wrong_choice = next(a for a in obs.legal_actions if a != game.ground_truth().correct_action)
    shown = game.step(wrong_choice).observation.text
    assert shown != right and shown == game.episode.wrong_feedback[obs.turn + 1]
    assert right.split(" ")[-3:] == shown.split(" ")[-3:]  # the same rule sentence


@pytest.mark.parametrize("bad", [{"surface": "wavy"}, {"phrasings": "dev"}, {"surface": 3}])
def test_bad_surface_settings_name_the_field(bad):
    with pytest.raises(MagsError, match=list(bad)[0]):
        GameConfig(**bad)


def test_synthesis_uses_training_phrasings_only(tmp_path):
    """Rows of a real (small) synthesis hold varied sentences, none from the held-out bank."""
    from mags_lib.synth import SynthConfig
    from mags_lib.synth.chains import episode_rows, game_config

    cfg = SynthConfig(n_train_games=2)
    configs = [game_config(cfg, seed, i) for i, seed in enumerate((20_000, 20_001))]
    assert {c.surface for c in configs} == {"fixed", "varied"}
    assert all(c.phrasings == "train" for c in configs)
    texts = []
    for c in configs:
        rows, _ = episode_rows(generate_episode(replace(c, episode_length=150)), cfg)
        texts += [m["content"] for task in rows.values() for r in task for m in r["prompt"]]
    assert len(texts) > 100
    assert not [t for t in texts if heldout_hits(t)]
    trained = [_regex(t) for t in ph.RULES["train"][1:]]  # not the fixed template itself
    assert any(p.search(t) for p in trained for t in texts)


# The words the held-out rule sentences use for eating and for the rule's scope: training
# sentences must not use them, so that a write model judged on held-out phrasings meets verbs
# and frames it has never seen (generalising, not recognising).
HELDOUT_RULE_WORDS = {"takes", "accepts", "feeds", "refuses", "meal", "food", "single",
                      "holds", "whenever", "give", "note", "mean"}


def test_training_rule_sentences_avoid_the_heldout_words():
    words = {w.strip(".,:;?!").lower() for t in ph.RULES["train"] for w in t.split()}
    held = {w.strip(".,:;?!").lower() for t in ph.RULES["heldout"] for w in t.split()}
    assert held >= HELDOUT_RULE_WORDS  # the list names words the held-out bank does use
    assert not words & HELDOUT_RULE_WORDS, words & HELDOUT_RULE_WORDS
    assert len(ph.RULES["train"]) >= 3 * len(ph.RULES["heldout"])


@pytest.mark.parametrize("bank", ["train", "heldout"])
def test_unframe_finds_the_rule_sentence_in_every_frame_and_only_there(bank):
    """`unframe` (synthesis re-frames rule changes with it) gives back the rule sentence from
    each frame of the bank, even a sentence spread over two; text in no frame of the kind gives
    None, and the other bank's change frames are not mistaken for this one's."""
    rng = random.Random(3)
    rules = [ph.rule_sentence("red yip", "icy", "cup", bank, rng) for _ in range(6)]
    for how, frames in ph.ANNOUNCE[bank].items():
        for frame in frames:
            if "{rule_lc}" in frame or frame == "{rule}":
                continue
            for rule in rules:
                text = frame.format(rule=rule, old="spoon")
                assert ph.unframe(text, how, bank) == rule, (frame, rule)
    other = "heldout" if bank == "train" else "train"
    for frame in ph.ANNOUNCE[other]["change"]:
        assert ph.unframe(frame.format(rule=rules[0], old="spoon"), "change", bank) is None
    assert ph.unframe(rules[0], "change", bank) is None


def test_a_bank_kept_in_a_file_plays_exactly_as_the_same_bank_built_in(tmp_path):
    """The test bank written out as JSON and read back gives the same games, word for word;
    a game in it is identified by the file's content, not its path."""
    path = tmp_path / "bank.json"
    path.write_text(ph.bank_json("test"))
    cfg = GameConfig(seed=4, episode_length=300, surface="varied", phrasings="test")
    built_in, from_file = generate_episode(cfg), generate_episode(replace(cfg, phrasings=str(path)))
    assert [o.text for o in from_file.observations] == [o.text for o in built_in.observations]
    assert from_file.wrong_feedback == built_in.wrong_feedback
    assert ph.unframe("Heed the revision: On icy turns, the red yip eats only the cup.",
                      "change", str(path)) == "On icy turns, the red yip eats only the cup."
    first = ph.bank_id(str(path))
    assert first.startswith("test:") and ph.bank_id("test") == "test"
    data = json.loads(path.read_text())
    data["rules"].append("The {c} likes the {i} best on {w} turns.")
    path.write_text(json.dumps(data))
    assert ph.bank_id(str(path)) != first  # an edited file is another bank


def test_an_other_bank_in_a_file_shows_its_own_words(tmp_path):
    data = json.loads(ph.bank_json("train", name="mine"))
    data["rules"] = ["Zorp: the {c} gulps the {i} when it is {w}."]
    data["decisions"] = ["Zorp quiz: {w}, the {c}, {opts}?"]
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    ep = generate_episode(GameConfig(seed=1, episode_length=120, surface="varied",
                                     phrasings=str(path)))
    kinds = {o.kind: o.text for o in ep.observations}
    assert "zorp: the " in kinds["announce"].lower() and kinds["decide"].startswith("Zorp quiz: ")


@pytest.mark.parametrize("edit, words", [
    (lambda d: d.pop("decisions"), "lacks decisions"),
    (lambda d: d["rules"].append("The {c} eats only the {i}."), "only the {i}.' has the fields"),
    (lambda d: d["rules"].append("The {c} eats {x} on {w} turns, the {i}."), "'x'"),
    (lambda d: d["announce"].pop("add"), "announce is not an object"),
    (lambda d: d["feedback"].append(["Right! {rule}"]), "feedback[5] is not a [right, wrong]"),
    (lambda d: d["decisions"].append("The {c on {w} turns: {opts}"), "not a valid template"),
    (lambda d: d.update(name="../elsewhere"), "cannot name a results folder"),
])
def test_a_bad_bank_file_is_refused_with_the_place_and_the_fix(tmp_path, edit, words):
    data = json.loads(ph.bank_json("train"))
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(MagsError) as e:
        GameConfig(surface="varied", phrasings=str(path))
    assert words in str(e.value) and str(path) in str(e.value)


def test_a_missing_or_truncated_bank_file_names_the_file(tmp_path):
    with pytest.raises(MagsError, match="cannot be read"):
        GameConfig(surface="varied", phrasings=str(tmp_path / "nowhere.json"))
    cut = tmp_path / "cut.json"
    cut.write_text(ph.bank_json("train")[:200])
    with pytest.raises(MagsError, match="is not valid JSON"):
        GameConfig(surface="varied", phrasings=str(cut))
    with pytest.raises(MagsError, match="neither a phrasing set nor a JSON bank"):
        ph.bank("mine.txt")
