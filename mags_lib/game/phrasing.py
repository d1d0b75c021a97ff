"""The varied surface of the senseless game: many phrasings, split into training and held-out.

On `surface="fixed"` every rule reads "On {condition} turns, the {creature} eats only the
{item}." and a regex reads the whole game. On `surface="varied"` each statement, change,
decision and feedback is drawn from a bank of phrasings (word order, synonyms, passive voice, a
rule spread over two sentences, filler), so only a reader that understands the sentence, not
one that matches a template, can use it.

Every bank is split in three, by `GameConfig.phrasings`:

* `"train"`: the only phrasings dataset synthesis (notebook 01) may show a model;
* `"heldout"`: phrasings used only by evaluation (notebook 06), never by a dataset. They steered
  development (training templates were added after reading the writer's errors on them), so
  they are a **development set**; its distractor facts are the training bank's;
* `"test"`: written once on 2026-11-27, before any tuning on them, with distractor facts of its
  own (`DISTRACTORS`); scored once, for a frozen configuration, never used while choosing.
  `tests/test_game_phrasing.py` checks that the three share no template and that a synthesised
  dataset holds no held-out or test sentence.

A bank kept outside the project is played the same way: `GameConfig(phrasings="bank.json")`,
a JSON file with the five lists a bank has (`load_bank` checks it and says what is wrong;
`bank_json("train")` writes the training bank in that form, as an example), and
`python -m mags_lib bank bank.json` scores it as notebook 13 scores the test
bank. Such a file never enters a dataset (synthesis reads `"train"` only).

The ground truth (`StepTruth.rule_text`, the engram targets) keeps the canonical sentence, so a
write model learns to normalise what it reads into one form, and scoring never depends on the
surface.

    >>> import random
    >>> rng = random.Random(0)
    >>> s = rule_sentence("purple glarb", "rainy", "carrot", "heldout", rng)
    >>> all(w in s for w in ("purple glarb", "rainy", "carrot"))
    True
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from mags_lib.errors import MagsError
from mags_lib.game import vocab

SURFACES = ("fixed", "varied")
PHRASING_SETS = ("train", "heldout", "test")

# {c} creature, {w} condition (a weather word), {i} item, {W} the condition capitalised.
RULES: dict[str, tuple[str, ...]] = {
    "train": (
        "On {w} turns, the {c} eats only the {i}.",
        "The {c} eats only the {i} on {w} turns.",
        "When the turn is {w}, the {c} will eat nothing but the {i}.",
        "On a {w} turn the only thing the {c} eats is the {i}.",
        "The {i} is all the {c} eats on {w} turns.",
        "Think of the {c}. When it is {w}, it eats only the {i}.",
        "{W} turns: the {c} eats the {i} and nothing else.",
        "The diet of the {c} on {w} turns is the {i} alone.",
        # Added 2026-11-25 (night): eight templates let the write model copy held-out sentences
        # instead of reading their slots. More structures (passive, item first, condition
        # last, two sentences, asides), with verbs that no held-out phrasing uses.
        "The {c} consumes the {i}, and only the {i}, on {w} turns.",
        "During {w} turns the {c} devours nothing except the {i}.",
        "When {w} weather comes, the {c} dines on the {i} alone.",
        "The {i} is what the {c} chews on {w} turns, nothing more.",
        "The {c}? On {w} turns it munches only the {i}.",
        "Remember this about the {c}: on {w} turns it wants just the {i}.",
        "{W} weather makes the {c} eat the {i} and nothing else.",
        "Nothing but the {i} will the {c} eat when it is {w}.",
        "In {w} weather, the {c} picks the {i} every time.",
        "The {c} lives on the {i} during {w} turns.",
        "It is the {i} that the {c} gobbles on {w} turns.",
        "A {w} turn means the {c} nibbles the {i} and ignores the rest.",
        "The {i} gets eaten by the {c} on {w} turns; the rest is left.",
        "Ask the {c} on a {w} turn and it will choose the {i}.",
        "About the {c}: {w} turns, {i} only.",
        "The {c} is a picky eater. It only eats the {i} when the turn is {w}.",
        "Under {w} skies the {c} will eat the {i} and ignore anything else.",
        "The {i}, on {w} turns, is the only dish of the {c}.",
        "The {c} has one dish on {w} turns: the {i}.",
        "On {w} turns, the {i} is devoured by the {c}.",
        "The {i} is chosen by the {c} on every {w} turn.",
        "When it is {w}, the {i} is the only thing eaten by the {c}.",
        "Here is a fact. The {c} eats only the {i}. It applies to {w} turns.",
        "{W} turns have a rule for the {c}: it dines on the {i} and nothing else.",
    ),
    "heldout": (
        "Only the {i} is eaten by the {c} whenever the turn is {w}.",
        "If it is {w}, the {c} feeds on the {i} and on nothing else.",
        "Note the {c}: it takes only the {i}. This holds on {w} turns.",
        "Each {w} turn, the {i} is the single food the {c} accepts.",
        "Give the {c} the {i} on {w} turns; it refuses everything else.",
        "For the {c}, {w} turns mean a meal of the {i} only.",
    ),
    "test": (
        "Whenever {w} weather arrives, the {c} will only touch the {i}.",
        "The {c} insists on the {i} during {w} turns and turns down all else.",
        "On {w} turns you will see the {c} taking the {i} and nothing other.",
        "{W} turns bring one law for the {c}: the {i}, never anything else.",
        "It has been decided that the {c} swallows the {i} alone when it is {w}.",
        "The {i} alone satisfies the {c} while the turn stays {w}.",
    ),
}

# Frames around a rule sentence {rule}; {old} is the item it replaces (changes only).
ANNOUNCE: dict[str, dict[str, tuple[str, ...]]] = {
    "train": {
        "first": ("A scroll reads: {rule}", "A sign says: {rule}", "You learn a rule. {rule}",
                  "{rule}", "You overhear: {rule}", "Written on the wall: {rule}"),
        "repeat": ("A scroll reads: {rule}", "A reminder: {rule}", "As before, {rule_lc}",
                   "The wall still says: {rule}"),
        "change": ("The scroll changes: {rule}", "Rule change: {rule}",
                   "Things are different now. {rule}", "{rule} It used to be the {old}.",
                   "Update to the rules: {rule}", "The old rule no longer holds. {rule}",
                   "{rule} The {old} is no longer eaten."),
        "add": ("A new scroll appears: {rule}", "A new rule: {rule}", "You overhear: {rule}"),
    },
    "heldout": {
        "first": ("An old tablet tells you: {rule}", "A traveller whispers: {rule}",
                  "Carved on a stone: {rule}"),
        "repeat": ("Once more the tablet tells you: {rule}", "Do not forget: {rule}"),
        "change": ("New decree, replacing the old one: {rule}",
                   "Forget what you knew. {rule} Not the {old} any more.",
                   "A correction is announced. {rule}"),
        "add": ("Another tablet is found: {rule}", "Someone adds a decree: {rule}"),
    },
    "test": {
        "first": ("A herald proclaims: {rule}", "Etched into a pillar: {rule}",
                  "A voice from the fog says: {rule}"),
        "repeat": ("The herald repeats: {rule}", "Mind this again: {rule}"),
        "change": ("The law has shifted. {rule} The {old} is out.",
                   "{rule} Earlier it was the {old}.", "Heed the revision: {rule}"),
        "add": ("A further pillar is uncovered: {rule}", "Yet another proclamation: {rule}"),
    },
}

# More announcement frames, for the write model's training text only (the game never says
# them: `SynthConfig.writer_frame_share` re-frames that share of the training games'
# announcements in the write rows, `synth.chains.writer_frame`). Added 2026-12-02 after the
# writer was found to read a change by its cue words (journal 2026-12-01, night): a change
# framed as a correction or a retraction ("The crow corrects itself:", "Scratch that about
# the {old}.") was written as nothing. So the changes here are corrections, retractions,
# revisions and changes naming the old item, and the repeats and first sights come from the
# same speakers and notices, so that a speaker or an unfamiliar frame does not tell the op.
# Written after fresh_2026-12-02 was committed, and kept clear of every bank's wording.
WRITER_FRAMES: dict[str, tuple[str, ...]] = {
    "first": ("A notice on the gate: {rule}", "The guard tells you: {rule}",
              "From a book of customs: {rule}", "You read on a slate: {rule}",
              "The shepherd mentions: {rule}"),
    "add": ("One more rule is posted: {rule}", "The guard adds something: {rule}",
            "Also worth knowing: {rule}"),
    "repeat": ("The guard says it again: {rule}", "The notice on the gate has not changed: {rule}",
               "Once again you read: {rule}", "The shepherd repeats himself: {rule}",
               "Same as before: {rule}"),
    "change": ("The guard corrects what he said earlier: {rule}",
               "Sorry, my mistake earlier. {rule}", "The shepherd changes his mind: {rule}",
               "The notice on the gate was repainted: {rule}",
               "Disregard the earlier notice. {rule}", "The rules were rewritten: {rule}",
               "Times have changed. {rule}", "Starting this turn: {rule}",
               "The earlier rule is withdrawn. {rule}", "Instead of the {old}: {rule}",
               "{rule} That is a change from the {old}.", "{rule} So the {old} is off the menu.",
               "The {old} is history. {rule}",
               "The guard takes back what he said about the {old}: {rule}",
               "A new version of the rule: {rule}"),
}

# Look-alikes of a rule, for the write model's training text only (the game never says them:
# `SynthConfig.writer_contrast_share` puts one beside that share of the training games'
# announcements and in place of that share of their distractors, `synth.chains.lookalike`).
# Each names a creature that no rule is about ({d}), a rule's condition ({w}) and an item
# ({i}), and none says what the creature eats, so only the relation tells it from a rule.
# Added 2026-12-03 (night) after candidate C2 wrote the test bank's distractors ("On frosty
# nights the lanky grilb hums along with the rails.") as rules ("On frosty turns, the porter
# eats only the lanky grilb."): nothing in its data paired a look-alike with a change.
# Written after fresh_2026-12-03 was committed, and kept clear of every bank's wording.
WRITER_LOOKALIKES: tuple[str, ...] = (
    "On {w} turns, the {d} sits on the {i}.",
    "On {w} turns, the {d} only looks at the {i}.",
    "The {d} hides the {i} whenever it is {w}.",
    "When it is {w}, the {d} sniffs the {i} and walks away.",
    "On {w} turns, the {d} polishes the {i}.",
    "The {d} carries the {i} around on {w} turns.",
    "Only on {w} turns does the {d} bury the {i}.",
    "The {d} trades the {i} for a song when it is {w}.",
    "The {d} dreams of the {i} on {w} nights.",
    "On {w} turns, the {d} rolls the {i} down the hill.",
    "Whenever it is {w}, the {d} counts every {i} it can find.",
    "On {w} turns, the {d} leans against the {i} and naps.",
)

# {opts} is "the cello and the slate" (or "the a, the b and the c").
DECISIONS: dict[str, tuple[str, ...]] = {
    "train": (
        "It is a {w} turn. The {c} is offered {opts}. Which does it eat?",
        "The weather is {w}. In front of the {c} lie {opts}. Which will it eat?",
        "{W} turn. Choose what to give the {c}: {opts}.",
        "You hold {opts}. The {c} is hungry and the turn is {w}. Which do you feed it?",
    ),
    "heldout": (
        "The {c} is waiting for food. This turn is {w}, and you have {opts}. Which one does it "
        "eat?",
        "Pick the meal for the {c} on this {w} turn: {opts}.",
        "A {w} turn comes. Which of {opts} does the {c} want?",
    ),
    "test": (
        "Before the {c} you place {opts}. The turn is {w}. Which will it take?",
        "{W} again. Between {opts}, what does the {c} choose?",
        "The {c} sniffs at {opts} on this {w} turn. Which one is its dinner?",
    ),
}

# (right, wrong) pairs, so that the game can show either verdict with the same words.
FEEDBACK: dict[str, tuple[tuple[str, str], ...]] = {
    "train": (
        ("Right! The scroll says: {rule}", "Wrong! The scroll says: {rule}"),
        ("Correct. {rule}", "Incorrect. {rule}"),
        ("Well done. Remember: {rule}", "Not that one. Remember: {rule}"),
        ("Nice! {rule}", "Nope! {rule}"),
        ("Good. The rule: {rule}", "Bad. The rule: {rule}"),
    ),
    "heldout": (
        ("Yes, good choice. As it is written: {rule}", "No, bad choice. As it is written: {rule}"),
        ("That's it! {rule}", "That's not it! {rule}"),
    ),
    "test": (
        ("Indeed! The proclamation: {rule}", "Alas! The proclamation: {rule}"),
        ("Spot-on. Recall: {rule}", "Mistaken. Recall: {rule}"),
    ),
}

# Irrelevant facts about creatures never asked about ({d}, {d2}, {item}, {condition}); none
# uses the rule verb "eats". Training and development share one bank (as every game before
# 2026-11-27 did); the test bank has its own.
DISTRACTORS: dict[str, tuple[str, ...]] = {
    "train": vocab.DISTRACTOR_TEMPLATES,
    "heldout": vocab.DISTRACTOR_TEMPLATES,
    "test": (
        "The {d} whistles when the {item} is near.",
        "On {condition} mornings, the {d} polishes its claws.",
        "The {d} once borrowed the {item} from the {d2}.",
        "The {d} cannot stand {condition} evenings.",
        "Nobody knows where the {d} hides the {item}.",
        "The {d} naps beside the {d2} on {condition} days.",
    ),
}


@dataclass(frozen=True)
class Bank:
    """One bank of phrasings: `key` names it in seeds and results (a built-in set's name, or a
    file bank's `name`), `digest` is its content's (a file bank's; '' for a built-in set)."""

    key: str
    rules: tuple[str, ...]
    announce: dict[str, tuple[str, ...]]
    decisions: tuple[str, ...]
    feedback: tuple[tuple[str, str], ...]
    distractors: tuple[str, ...]
    digest: str = ""


HOWS = ("first", "repeat", "change", "add")
# Per list: the fields a template must hold (one of each group: the condition may be written
# {w} or, capitalised, {W}), then every field it may use.
_NEEDS: dict[str, tuple[tuple[frozenset[str], ...], frozenset[str]]] = {
    "rules": ((frozenset("c"), frozenset("i"), frozenset("wW")), frozenset("cwWi")),
    "announce": ((frozenset({"rule", "rule_lc"}),), frozenset({"rule", "rule_lc", "old"})),
    "decisions": ((frozenset("c"), frozenset({"opts"}), frozenset("wW")),
                  frozenset({"c", "w", "W", "opts"})),
    "feedback": ((frozenset({"rule"}),), frozenset({"rule"})),
    "distractors": ((frozenset("d"),), frozenset({"d", "d2", "item", "condition"})),
}


def _fields(template: str) -> set[str]:
    import string

    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def _check_template(path: Path, where: str, template: object, kind: str) -> None:
    need, allowed = _NEEDS[kind]
    wanted = ", ".join(" or ".join("{" + n + "}" for n in sorted(g)) for g in need)
    fix = (f"in {path}, make {where} a string holding {wanted} and no other field than "
           f"{', '.join('{' + n + '}' for n in sorted(allowed))}")
    if not isinstance(template, str) or not template.strip():
        raise MagsError(f"phrasing bank {path}: {where} is not a template string", fix)
    try:
        found = _fields(template)
    except ValueError as e:
        raise MagsError(f"phrasing bank {path}: {where} is not a valid template ({e})",
                        fix + "; write a literal brace as {{ or }}") from None
    if not all(group & found for group in need) or not found <= allowed:
        raise MagsError(f"phrasing bank {path}: {where} {template!r} has the fields "
                        f"{sorted(found)}", fix)


def load_bank(path: str | Path) -> Bank:
    """A bank of phrasings from a JSON file: {"name": ..., "rules": [...], "announce": {"first":
    [...], "repeat": [...], "change": [...], "add": [...]}, "decisions": [...], "feedback":
    [[right, wrong], ...], "distractors": [...]} (`bank_json` writes one). Every template is
    checked; a file that is missing, not JSON or of the wrong shape raises a `MagsError` that
    names the file, the place and the fix."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise MagsError(f"phrasing bank {path} cannot be read ({e.strerror or e})",
                        "pass the path of a JSON bank of phrasings (`bank_json` writes an "
                        "example)") from None
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise MagsError(f"phrasing bank {path} is not valid JSON ({e})",
                        "fix the file (a truncated copy? `bank_json` writes a valid "
                        "example)") from None
    keys = {"rules", "announce", "decisions", "feedback", "distractors"}
    if not isinstance(data, dict) or not keys <= set(data):
        missing = sorted(keys - set(data)) if isinstance(data, dict) else sorted(keys)
        raise MagsError(f"phrasing bank {path} lacks {', '.join(missing)}",
                        "give the file an object with the keys name, rules, announce, "
                        "decisions, feedback and distractors (`bank_json` writes an example)")
    for kind in ("rules", "decisions", "distractors"):
        if not isinstance(data[kind], list) or not data[kind]:
            raise MagsError(f"phrasing bank {path}: {kind} is not a non-empty list",
                            f"make {kind} a list of template strings")
        for i, t in enumerate(data[kind]):
            _check_template(path, f"{kind}[{i}]", t, kind)
    announce = data["announce"]
    if not isinstance(announce, dict) or set(announce) != set(HOWS) or not all(
            isinstance(v, list) and v for v in announce.values()):
        raise MagsError(f"phrasing bank {path}: announce is not an object of four non-empty "
                        "lists", f"give announce exactly the keys {', '.join(HOWS)}, each a list "
                        "of frames holding {rule}")
    for how, frames in announce.items():
        for i, t in enumerate(frames):
            _check_template(path, f"announce.{how}[{i}]", t, "announce")
    if not isinstance(data["feedback"], list) or not data["feedback"]:
        raise MagsError(f"phrasing bank {path}: feedback is not a non-empty list",
                        "make feedback a list of [right, wrong] pairs, each holding {rule}")
    for i, pair in enumerate(data["feedback"]):
        if not isinstance(pair, list) or len(pair) != 2:
            raise MagsError(f"phrasing bank {path}: feedback[{i}] is not a [right, wrong] pair",
                            "make each feedback entry a list of two templates holding {rule}")
        for j, t in enumerate(pair):
            _check_template(path, f"feedback[{i}][{j}]", t, "feedback")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise MagsError(f"phrasing bank {path}: name {name!r} cannot name a results folder",
                        "name the bank with letters, digits, '.', '_' or '-' (at most 64), or "
                        "leave name out (the file's stem is used)")
    return Bank(key=name, rules=tuple(data["rules"]),
                announce={h: tuple(announce[h]) for h in HOWS},
                decisions=tuple(data["decisions"]),
                feedback=tuple((r, w) for r, w in data["feedback"]),
                distractors=tuple(data["distractors"]),
                digest=hashlib.sha256(raw).hexdigest()[:16])


@functools.lru_cache(maxsize=16)
def _file_bank(path: str, mtime_ns: int) -> Bank:
    return load_bank(path)


def bank(phrasings: str) -> Bank:
    """The bank `phrasings` names: a built-in set (`PHRASING_SETS`) or the path of a JSON bank
    (read once while the file is unchanged)."""
    if phrasings in PHRASING_SETS:
        return Bank(key=phrasings, rules=RULES[phrasings], announce=ANNOUNCE[phrasings],
                    decisions=DECISIONS[phrasings], feedback=FEEDBACK[phrasings],
                    distractors=DISTRACTORS[phrasings])
    path = Path(phrasings)
    if path.suffix != ".json":
        raise MagsError(f"phrasings = {phrasings!r} is neither a phrasing set nor a JSON bank",
                        f"set phrasings to one of {PHRASING_SETS} or to the path of a .json "
                        "bank of phrasings")
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = -1  # load_bank says what is wrong
    return _file_bank(str(path.resolve()), mtime)


def bank_id(phrasings: str) -> str:
    """What identifies a bank in a result's configuration: a set's name, or a file bank's name
    and content digest (so a changed file is not taken for the games it played before)."""
    b = bank(phrasings)
    return f"{b.key}:{b.digest}" if b.digest else b.key


def bank_json(phrasings: str, name: str | None = None) -> str:
    """A bank as the JSON text `load_bank` reads (`bank_json("train")`: an example to edit)."""
    b = bank(phrasings)
    return json.dumps({"name": name or b.key, "rules": list(b.rules),
                       "announce": {h: list(b.announce[h]) for h in HOWS},
                       "decisions": list(b.decisions),
                       "feedback": [list(pair) for pair in b.feedback],
                       "distractors": list(b.distractors)}, indent=1) + "\n"


def _fill(template: str, creature: str, condition: str, item: str) -> str:
    return template.format(c=creature, w=condition, W=condition.capitalize(), i=item)


def rule_sentence(creature: str, condition: str, item: str, phrasings: str,
                  rng: random.Random) -> str:
    """One rule statement from the `phrasings` bank."""
    return _fill(rng.choice(bank(phrasings).rules), creature, condition, item)


def announcement(rule: str, how: str, phrasings: str, rng: random.Random,
                 old: str | None = None) -> str:
    """A rule sentence in an announcement frame; `how` is first / repeat / change / add."""
    frames = bank(phrasings).announce[how]
    if old is None:
        frames = tuple(f for f in frames if "{old}" not in f) or frames
    frame = rng.choice(frames)
    return frame.format(rule=rule, rule_lc=rule[0].lower() + rule[1:], old=old or "")


def unframe(text: str, how: str, phrasings: str) -> str | None:
    """The rule sentence inside `text`, an announcement in one of the `how` frames of the
    `phrasings` bank (None when no frame fits); `{old}` in a frame matches any one word.

    >>> unframe("Rule change: On icy turns, the red yip eats only the cup.", "change", "train")
    'On icy turns, the red yip eats only the cup.'
    """
    for frame in bank(phrasings).announce[how]:
        if "{rule_lc}" in frame:
            continue  # "As before, {rule_lc}": the sentence's case is lost
        head, tail = frame.split("{rule}")
        pattern = (re.escape(head) + "(?P<rule>.+?)"
                   + re.escape(tail).replace(re.escape("{old}"), "[a-z]+"))
        m = re.fullmatch(pattern, text)
        if m and (head or tail):
            return m["rule"]
    return None


def options_text(options: list[str]) -> str:
    names = [f"the {o}" for o in options]
    return f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]


def decision_sentence(creature: str, condition: str, options: list[str], phrasings: str,
                      rng: random.Random) -> str:
    template = rng.choice(bank(phrasings).decisions)
    return template.format(c=creature, w=condition, W=condition.capitalize(),
                           opts=options_text(options))


def feedback_pair(rule: str | None, phrasings: str, rng: random.Random) -> tuple[str, str]:
    """(right, wrong) feedback texts stating `rule` (the bare verdicts when it is None)."""
    right, wrong = rng.choice(bank(phrasings).feedback)
    if rule is None:
        return right.split(" ", 1)[0], wrong.split(" ", 1)[0]
    return right.format(rule=rule), wrong.format(rule=rule)


def all_templates(phrasings: str) -> list[str]:
    """Every template of one bank (for the split test)."""
    b = bank(phrasings)
    out = list(b.rules) + list(b.decisions)
    out += [f for frames in b.announce.values() for f in frames]
    out += [f for pair in b.feedback for f in pair]
    if b.distractors is not vocab.DISTRACTOR_TEMPLATES:  # train and heldout share these
        out += list(b.distractors)
    return out
