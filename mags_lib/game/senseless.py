"""The senseless game: invented feeding rules that only memory can answer, and that drift.

Rules read "On {condition} turns, the {creature} eats only the {item}." (one fixed template, so a
changed rule differs from its old version only in the item; each rule has a `key`
"creature|condition" and a `value`, the item). Creatures are invented ("purple glarb"), items are
real and drawn from one pool, so neither reasoning nor world knowledge beats a coin flip.

Turns, one observation each:

* announce: "A scroll reads: <rule>" (first or repeated), "The scroll changes: <rule>" (drift:
  an existing rule gets another item), "A new scroll appears: <rule>" (drift: a rule is added);
* distractor: an irrelevant fact about creatures never asked about ("The sleepy zwoorp hums at
  dusk."), sometimes sharing the rules' items and conditions;
* decide: "It is a rainy turn. The purple glarb is offered the stone and the carrot. Which does it
  eat?" with the options as `legal_actions`; asked only about rules announced at least once and
  last stated at least `min_gap` turns ago (so the last few turns never give the answer away), a
  share `recent_share` about recently changed rules; once a rule has changed its previous item
  is always among the wrong options, so a stale memory is punished rather than lucky;
* feedback: right / wrong (reward 1 / 0 on the decide step), stating the governing rule when
  `feedback_reveals_rule`. A silent drift (`silent_fraction`) changes a rule without announcing
  it: only feedback (or a later re-announcement) reveals it.

Two options make harder regimes (`evaluation.regimes`), both off by default so the default
episodes never change:

* aliases (`alias_share`, multi-hop): "A scroll reads: The purple glarb is also known as the teal
  zib." rotates with the rule announcements; a later decision may name the creature by its alias
  only ("The teal zib is offered ..."), so the answer needs the alias statement *and* the rule;
* a focus set (`focus_size`, recurrence): decisions ask only about a few rules at a time, redrawn
  every `focus_every` turns, so a rule is asked in a burst, idles, and is asked again later.

The whole episode is a function of the config: `generate_episode(config)` materialises every turn
with its `StepTruth` (for datasets and tests) and `SenselessGame` plays the same turns one step at
a time (the feedback text follows the agent's actual answer).

    >>> ep = generate_episode(GameConfig(seed=1, episode_length=50))
    >>> len(ep), sum(o.kind == "decide" for o in ep.observations) > 5
    (50, True)
    >>> game = SenselessGame(GameConfig(seed=1, episode_length=50))
    >>> game.reset() == ep.observations[0]
    True
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.game import phrasing, vocab
from mags_lib.game.base import Observation, StepResult, StepTruth, match_action

RULE_TEMPLATE = "On {condition} turns, the {creature} eats only the {item}."
RULE_PATTERN = re.compile(r"On (?P<condition>[a-z]+) turns, the (?P<creature>[a-z]+ [a-z]+) "
                          r"eats only the (?P<item>[a-z]+)\.")
DECIDE_PATTERN = re.compile(r"It is a (?P<condition>[a-z]+) turn\. "
                            r"The (?P<creature>[a-z]+ [a-z]+) is offered")
ALIAS_TEMPLATE = "The {creature} is also known as the {alias}."
ALIAS_PATTERN = re.compile(r"The (?P<creature>[a-z]+ [a-z]+) is also known as the "
                           r"(?P<alias>[a-z]+ [a-z]+)\.")
ALIAS_KEY = "alias:"  # rule_key of an alias statement: "alias:<creature>"
ANNOUNCE_PREFIX = {"first": "A scroll reads: ", "repeat": "A scroll reads: ",
                   "change": "The scroll changes: ", "add": "A new scroll appears: "}


@dataclass(frozen=True)
class Rule:
    """One feeding rule: on `condition` turns, `creature` eats only `item`."""

    creature: str
    condition: str
    item: str

    @property
    def key(self) -> str:
        return rule_key(self.creature, self.condition)

    @property
    def value(self) -> str:
        return self.item

    @property
    def text(self) -> str:
        return RULE_TEMPLATE.format(condition=self.condition, creature=self.creature,
                                    item=self.item)


def rule_key(creature: str, condition: str) -> str:
    return f"{creature}|{condition}"


def parse_rule(text: str) -> Rule | None:
    """The rule stated in `text` (anywhere in it), or None."""
    m = RULE_PATTERN.search(text)
    return Rule(m["creature"], m["condition"], m["item"]) if m else None


@dataclass
class GameConfig:
    seed: int = field(default=0, metadata={
        "help": "seeds the vocabulary, the rules and the turn schedule (same seed, same episode)"})
    n_creatures: int = field(default=4, metadata={
        "help": "invented creatures the rules are about"})
    n_conditions: int = field(default=4, metadata={
        "help": "weather-like conditions (rainy, sunny, ...) a rule can depend on"})
    n_rules: int = field(default=8, metadata={
        "help": "rules in force at the start; at most n_creatures * n_conditions"})
    n_items: int = field(default=2, metadata={
        "help": "options offered per decision (a random policy scores 1 / n_items)"})
    item_pool: int = field(default=12, metadata={
        "help": "distinct real items (carrot, copper, ...) the rules and options draw from"})
    n_distractors: int = field(default=24, metadata={
        "help": "distinct irrelevant facts the distractor turns repeat"})
    n_distractor_creatures: int = field(default=4, metadata={
        "help": "invented creatures of the distractor facts (never asked about)"})
    episode_length: int = field(default=200, metadata={
        "help": "turns in an episode, feedback turns included"})
    announce_ratio: float = field(default=0.12, metadata={
        "help": "probability that a free turn (re)announces a rule (least recently announced)"})
    distractor_ratio: float = field(default=0.3, metadata={
        "help": "probability that a free turn is a distractor; the rest are decisions"})
    drift_every: int = field(default=25, metadata={
        "help": "a rule changes or is added every this many turns (0 = never)"})
    drift_rate: float = field(default=0.0, metadata={
        "help": "probability per turn of an extra drift, on top of drift_every"})
    change_fraction: float = field(default=0.75, metadata={
        "help": "share of drifts that change an existing rule's item (the rest add a rule)"})
    silent_fraction: float = field(default=0.0, metadata={
        "help": "share of rule changes that are not announced; only feedback reveals them"})
    recent_share: float = field(default=0.5, metadata={
        "help": "share of decisions about a recently changed rule, when there is one"})
    recent_window: int = field(default=30, metadata={
        "help": "a rule changed at most this many turns ago counts as recently changed"})
    min_gap: int = field(default=6, metadata={
        "help": "a decision asks about a rule only if its text was last stated (announced or "
                "revealed by feedback) at least this many turns ago, so that a short context "
                "window does not suffice (0 = no limit)"})
    feedback_reveals_rule: bool = field(default=True, metadata={
        "help": "feedback after a decision states the governing rule"})
    alias_share: float = field(default=0.0, metadata={
        "help": "multi-hop: share of creatures given an alias (a second invented name) in an "
                "alias statement 'The purple glarb is also known as the teal zib.', announced "
                "like a rule (0 = none)"})
    alias_questions: float = field(default=0.8, metadata={
        "help": "multi-hop: probability that a decision about an aliased creature names it by "
                "its alias (once the alias was stated at least min_gap turns ago), so that only "
                "alias statement + rule together answer it"})
    focus_size: int = field(default=0, metadata={
        "help": "recurrence: decisions ask only about a focus set of this many rules, redrawn "
                "every focus_every turns, so a rule is asked in bursts and idle in between "
                "(0 = any askable rule)"})
    focus_every: int = field(default=200, metadata={
        "help": "recurrence: turns between two draws of the focus set"})
    surface: str = field(default="fixed", metadata={
        "help": "'fixed' (one template, readable by a regex) or 'varied' (many phrasings of "
                "statements, changes, decisions and feedback; see game/phrasing.py)"})
    phrasings: str = field(default="heldout", metadata={
        "help": "'train' (the phrasings dataset synthesis may use), 'heldout' (evaluation "
                "only, never in a dataset; a development set) or 'test' (written before tuning, "
                "scored once for a frozen configuration; its own distractor facts), or the "
                "path of a .json bank of phrasings kept outside the project "
                "(`phrasing.load_bank`)"})

    def __post_init__(self) -> None:
        check_config(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameConfig:
        """Strict (`configs.strict_from_dict`): unknown keys and values of the wrong type
        raise ConfigError, a MagsError."""
        from mags_lib.configs import strict_from_dict

        return strict_from_dict(cls, data)


def _check_type(name: str, value: Any, default: Any) -> None:
    from mags_lib.configs import check_value

    check_value("GameConfig", name, value, default)


def check_config(c: GameConfig) -> None:
    """Raise MagsError naming the first field that makes `c` unplayable."""
    for name in ("seed", "n_creatures", "n_conditions", "n_rules", "n_items", "item_pool",
                 "n_distractors", "n_distractor_creatures", "episode_length", "announce_ratio",
                 "distractor_ratio", "drift_every", "drift_rate", "change_fraction",
                 "silent_fraction", "recent_share", "recent_window", "min_gap",
                 "feedback_reveals_rule", "alias_share", "alias_questions", "focus_size",
                 "focus_every", "surface", "phrasings"):
        _check_type(name, getattr(c, name), getattr(GameConfig, name))
    pairs = c.n_creatures * c.n_conditions
    checks = [
        ("n_creatures", 1 <= c.n_creatures <= len(vocab.ADJECTIVES),
         f"between 1 and {len(vocab.ADJECTIVES)}"),
        ("n_conditions", 1 <= c.n_conditions <= len(vocab.CONDITIONS),
         f"between 1 and {len(vocab.CONDITIONS)}"),
        ("n_rules", 1 <= c.n_rules <= pairs,
         f"between 1 and n_creatures * n_conditions = {pairs}"),
        ("n_items", 2 <= c.n_items <= c.item_pool, "at least 2 and at most item_pool"),
        ("item_pool", c.item_pool <= len(vocab.ITEMS), f"at most {len(vocab.ITEMS)}"),
        ("n_distractors", c.n_distractors >= 0, "0 or more"),
        ("n_distractor_creatures", 1 <= c.n_distractor_creatures <= len(vocab.ADJECTIVES),
         f"between 1 and {len(vocab.ADJECTIVES)}"),
        ("episode_length", c.episode_length >= 1, "1 or more"),
        ("drift_every", c.drift_every >= 0, "0 (never) or more"),
        ("recent_window", c.recent_window >= 0, "0 or more"),
        ("min_gap", c.min_gap >= 0, "0 or more"),
        ("focus_size", 0 <= c.focus_size <= c.n_rules, "between 0 (off) and n_rules"),
        ("focus_every", c.focus_every >= 1, "1 or more"),
        ("alias_share", c.alias_share == 0 or c.surface == "fixed",
         "to 0 on the varied surface (aliases are stated in the fixed template only)"),
    ]
    for name in ("announce_ratio", "distractor_ratio", "drift_rate", "change_fraction",
                 "silent_fraction", "recent_share", "alias_share", "alias_questions"):
        checks.append((name, 0.0 <= getattr(c, name) <= 1.0, "between 0 and 1"))
    checks += [
        ("distractor_ratio", c.announce_ratio + c.distractor_ratio <= 1.0,
         "at most 1 - announce_ratio (the rest of the free turns are decisions)"),
        ("n_distractors", c.distractor_ratio == 0 or c.n_distractors >= 1,
         "at least 1 when distractor_ratio > 0 (or set distractor_ratio = 0)"),
    ]
    checks += [
        ("surface", c.surface in phrasing.SURFACES, f"to one of {phrasing.SURFACES}"),
        ("phrasings", c.phrasings in phrasing.PHRASING_SETS or c.phrasings.endswith(".json"),
         f"to one of {phrasing.PHRASING_SETS} or the path of a .json bank of phrasings"),
    ]
    for name, ok, wanted in checks:
        if not ok:
            raise MagsError(f"GameConfig.{name} = {getattr(c, name)!r} is not playable",
                            f"set {name} {wanted}")
    phrasing.bank(c.phrasings)  # a file bank is read and checked here, before any turn


@dataclass(frozen=True)
class RuleEvent:
    """A drift: at `turn` the rule `key` went from `old_value` (None: added) to `new_value`."""

    turn: int
    key: str
    old_value: str | None
    new_value: str
    kind: str  # "add" or "change"
    silent: bool = False


@dataclass
class World:
    """The vocabulary of one episode and the rules in force at turn 0."""

    creatures: list[str]
    conditions: list[str]
    items: list[str]
    distractors: list[str]
    initial_rules: dict[str, Rule]
    aliases: dict[str, str] = field(default_factory=dict)  # creature -> its alias

    def alias_text(self, creature: str) -> str:
        return ALIAS_TEMPLATE.format(creature=creature, alias=self.aliases[creature])

    def to_dict(self) -> dict[str, Any]:
        return {"creatures": self.creatures, "conditions": self.conditions, "items": self.items,
                "distractors": self.distractors,
                "initial_rules": {k: r.text for k, r in self.initial_rules.items()},
                "aliases": dict(self.aliases)}


def make_world(config: GameConfig) -> World:
    """Creatures, conditions, items, distractor facts and the initial rules for `config.seed`."""
    rng = random.Random(f"senseless:{config.seed}:world")
    creatures = vocab.creature_names(config.n_creatures, rng)
    distractor_creatures = vocab.creature_names(
        config.n_distractor_creatures, rng, avoid={c.split()[1] for c in creatures})
    conditions = rng.sample(vocab.CONDITIONS, config.n_conditions)
    items = rng.sample(vocab.ITEMS, config.item_pool)
    distractors = vocab.distractor_facts(config.n_distractors, distractor_creatures, conditions,
                                         items, rng)
    bank = phrasing.bank(config.phrasings)
    if bank.distractors is not vocab.DISTRACTOR_TEMPLATES:  # drawn apart: the rules stay
        distractors = vocab.distractor_facts(
            config.n_distractors, distractor_creatures, conditions, items,
            random.Random(f"senseless:{config.seed}:distractors:{bank.key}"), bank.distractors)
    pairs = [(c, w) for c in creatures for w in conditions]
    chosen = rng.sample(pairs, config.n_rules)
    rules = [Rule(c, w, rng.choice(items)) for c, w in chosen]
    return World(creatures, conditions, items, distractors, {r.key: r for r in rules},
                 make_aliases(config, creatures + distractor_creatures))


def make_aliases(config: GameConfig, taken: list[str]) -> dict[str, str]:
    """Aliases for a share `alias_share` of the rule creatures (own random stream, so games
    without aliases are unchanged); an alias never reuses a noun of the episode."""
    if config.alias_share <= 0:
        return {}
    rng = random.Random(f"senseless:{config.seed}:aliases")
    creatures = [c for c in taken[:config.n_creatures]]
    chosen = rng.sample(creatures, max(1, round(config.alias_share * len(creatures))))
    names = vocab.creature_names(len(chosen), rng, avoid={c.split()[1] for c in taken})
    return dict(zip(sorted(chosen), names, strict=True))


@dataclass
class Episode:
    """Every turn of one episode, as an oracle that always answers right would see it."""

    config: GameConfig
    world: World
    observations: list[Observation]
    truths: list[StepTruth]
    events: list[RuleEvent]
    wrong_feedback: dict[int, str] = field(default_factory=dict)  # turn -> the "wrong" verdict

    def __len__(self) -> int:
        return len(self.observations)

    def rules_at(self, turn: int) -> dict[str, Rule]:
        """The rules in force at `turn` (drifts of that turn included)."""
        rules = dict(self.world.initial_rules)
        for e in self.events:
            if e.turn > turn:
                break
            creature, condition = e.key.split("|")
            rules[e.key] = Rule(creature, condition, e.new_value)
        return rules

    def transcript(self, start: int = 0, stop: int | None = None) -> str:
        """Turns [start, stop) as text, one a line, with the right answer of each decision."""
        lines = []
        for obs, truth in zip(self.observations[start:stop], self.truths[start:stop],
                              strict=True):
            answer = f"   [{', '.join(obs.legal_actions)}] -> {truth.correct_action}" \
                if obs.kind == "decide" else ""
            lines.append(f"{obs.turn:4d} {obs.kind:<10} {obs.text}{answer}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "world": self.world.to_dict(),
                "observations": [o.to_dict() for o in self.observations],
                "truths": [t.to_dict() for t in self.truths],
                "events": [asdict(e) for e in self.events],
                "wrong_feedback": {str(t): x for t, x in self.wrong_feedback.items()}}


def decision_text(rule: Rule, options: list[str]) -> str:
    names = [f"the {o}" for o in options]
    offered = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
    return (f"It is a {rule.condition} turn. The {rule.creature} is offered {offered}. "
            "Which does it eat?")


def feedback_text(right: bool, rule_text: str | None) -> str:
    verdict = "Right!" if right else "Wrong!"
    return f"{verdict} The scroll says: {rule_text}" if rule_text else verdict


def rule_queries(rule: Rule) -> list[str]:
    """The queries a perfect ask model would send to recall `rule` (a turn's `gold_queries`)."""
    return [f"what does the {rule.creature} eat on {rule.condition} turns",
            f"{rule.creature} {rule.condition}"]


class _Generator:
    """The mutable state while one episode is written, turn by turn."""

    def __init__(self, config: GameConfig, world: World):
        self.cfg, self.world = config, world
        self.rng = random.Random(f"senseless:{config.seed}:turns")
        self.rules = dict(world.initial_rules)
        self.revealed: dict[str, str] = {}  # key -> item last shown to the agent
        self.announced_at: dict[str, int] = {}
        self.stated_at: dict[str, int] = {}  # key -> last turn its text was shown
        self.set_at = dict.fromkeys(self.rules, 0)  # turn the current item took effect
        self.changed_at: dict[str, int] = {}
        self.history: dict[str, list[str]] = {k: [] for k in self.rules}  # older items
        self.observations: list[Observation] = []
        self.truths: list[StepTruth] = []
        self.events: list[RuleEvent] = []
        self.pending_drifts = 0
        self.pending_feedback: str | None = None
        # phrasing draws use their own stream, so the fixed surface's episodes never change
        self.surface_rng = random.Random(f"senseless:{config.seed}:surface")
        self.wrong_feedback: dict[int, str] = {}
        self.alias_keys = [ALIAS_KEY + c for c in sorted(world.aliases)]
        self.alias_stated: dict[str, int] = {}  # creature -> last turn its alias was stated
        self.focus_sets: dict[int, set[str]] = {}  # focus period -> its rule keys

    def run(self) -> Episode:
        for t in range(self.cfg.episode_length):
            self.turn(t)
        return Episode(self.cfg, self.world, self.observations, self.truths, self.events,
                       self.wrong_feedback)

    @property
    def varied(self) -> bool:
        return self.cfg.surface == "varied"

    def rule_sentence(self, rule: Rule) -> str:
        if not self.varied:
            return rule.text
        return phrasing.rule_sentence(rule.creature, rule.condition, rule.item,
                                      self.cfg.phrasings, self.surface_rng)

    def turn(self, t: int) -> None:
        cfg, rng = self.cfg, self.rng
        if (cfg.drift_every and t > 0 and t % cfg.drift_every == 0) or \
                (cfg.drift_rate > 0 and rng.random() < cfg.drift_rate):
            self.pending_drifts += 1
        if self.pending_feedback is not None:
            return self.feedback(t, self.pending_feedback)
        if self.pending_drifts:
            self.pending_drifts -= 1
            event = self.drift(t)
            if event is not None and not event.silent:
                return self.announce(t, event.key, event.kind)
        u = rng.random()
        if u < cfg.announce_ratio:
            return self.announce(t, self.next_to_announce(), None)
        if u < cfg.announce_ratio + cfg.distractor_ratio:
            return self.distractor(t)
        # a decision needs a rule stated long enough ago and a turn left for its feedback
        askable = [k for k in self.askable() if t - self.stated_at[k] >= cfg.min_gap]
        if cfg.focus_size:
            focus = self.focus(t)
            askable = [k for k in askable if k in focus]
            if not askable:  # the focus rules are idle until (re)announced: no answer given away
                return self.distractor(t) if self.world.distractors else \
                    self.announce(t, self.next_to_announce(), None)
        if askable and t < cfg.episode_length - 1:
            return self.decide(t, askable)
        return self.announce(t, self.next_to_announce(), None)

    def focus(self, t: int) -> set[str]:
        """The rules decisions may ask about during focus period t // focus_every (recurrence),
        drawn at the period's first decision from the rules in force, with its own random
        stream."""
        period = t // self.cfg.focus_every
        if period not in self.focus_sets:  # drawn once per period, from the rules then
            rng = random.Random(f"senseless:{self.cfg.seed}:focus:{period}")
            keys = sorted(self.rules)
            self.focus_sets[period] = set(rng.sample(keys, min(self.cfg.focus_size, len(keys))))
        return self.focus_sets[period]

    def askable(self) -> list[str]:
        return [k for k in sorted(self.rules) if k in self.announced_at]

    def next_to_announce(self) -> str:
        keys = sorted(self.rules) + self.alias_keys  # alias statements rotate with the rules
        unannounced = [k for k in keys if k not in self.announced_at]
        if unannounced:
            return self.rng.choice(unannounced)
        return min(keys, key=lambda k: self.announced_at[k])

    def drift(self, t: int) -> RuleEvent | None:
        cfg, rng = self.cfg, self.rng
        changeable = self.askable()
        creatures_conditions = [(c, w) for c in self.world.creatures
                                for w in self.world.conditions]
        addable = [p for p in creatures_conditions if rule_key(*p) not in self.rules]
        change = rng.random() < cfg.change_fraction
        if (change and not changeable) or (not change and not addable):
            change = not change
        if change and changeable:
            key = rng.choice(changeable)
            old = self.rules[key]
            item = rng.choice([i for i in self.world.items if i != old.item])
            silent = rng.random() < cfg.silent_fraction
            self.history[key].append(old.item)
            self.changed_at[key] = t
            event = RuleEvent(t, key, old.item, item, "change", silent)
            self.rules[key] = replace(old, item=item)
        elif addable:
            creature, condition = rng.choice(addable)
            rule = Rule(creature, condition, rng.choice(self.world.items))
            self.history[rule.key] = []
            event = RuleEvent(t, rule.key, None, rule.item, "add")
            self.rules[rule.key] = rule
        else:
            return None
        self.set_at[event.key] = t
        self.events.append(event)
        return event

    def reveal(self, t: int, key: str) -> tuple[list[tuple[str, str, str | None]], str | None]:
        """The engram op for showing rule `key` at turn `t`, relative to what was shown before."""
        rule, known = self.rules[key], self.revealed.get(key)
        self.revealed[key] = rule.item
        self.stated_at[key] = t
        if known is None:
            return [("add", rule.text, key)], None
        if known != rule.item:
            return [("update", rule.text, key)], replace(rule, item=known).text
        return [("none", rule.text, key)], None

    def truth(self, t: int, kind: str, key: str, **extra: Any) -> StepTruth:
        rule = self.rules[key]
        changed = key in self.changed_at
        return StepTruth(
            turn=t, kind=kind, rule_key=key, rule_text=rule.text,
            gold_queries=rule_queries(rule), turns_since_change=t - self.set_at[key],
            recently_changed=changed and t - self.changed_at[key] <= self.cfg.recent_window,
            n_changes=len(self.history[key]),
            old_value=self.history[key][-1] if self.history[key] else None,
            answerable=self.revealed.get(key) == rule.item, **extra)

    def emit(self, obs: Observation, truth: StepTruth) -> None:
        self.observations.append(obs)
        self.truths.append(truth)

    def announce(self, t: int, key: str, how: str | None) -> None:
        if key.startswith(ALIAS_KEY):
            return self.announce_alias(t, key)
        how = how or ("repeat" if key in self.announced_at else "first")
        self.announced_at[key] = t
        old = self.history[key][-1] if how == "change" and self.history.get(key) else None
        ops, supersedes = self.reveal(t, key)
        rule = self.rules[key]
        if self.varied:
            text = phrasing.announcement(self.rule_sentence(rule), how, self.cfg.phrasings,
                                         self.surface_rng, old=old)
        else:
            text = ANNOUNCE_PREFIX[how] + rule.text
        self.emit(Observation(text, (), t, "announce"),
                  self.truth(t, "announce", key, engram_ops=ops, supersedes=supersedes))

    def announce_alias(self, t: int, key: str) -> None:
        creature = key[len(ALIAS_KEY):]
        first = key not in self.announced_at
        self.announced_at[key] = t
        self.alias_stated[creature] = t
        text = self.world.alias_text(creature)
        self.emit(Observation(ANNOUNCE_PREFIX["first"] + text, (), t, "announce"),
                  StepTruth(turn=t, kind="announce", rule_key=key, rule_text=text,
                            gold_queries=[text],
                            engram_ops=[("add" if first else "none", text, key)]))

    def distractor(self, t: int) -> None:
        text = self.rng.choice(self.world.distractors)
        self.emit(Observation(text, (), t, "distractor"),
                  StepTruth(turn=t, kind="distractor", engram_ops=[("none", text, None)]))

    def decide(self, t: int, askable: list[str]) -> None:
        cfg, rng = self.cfg, self.rng
        recent = [k for k in askable
                  if k in self.changed_at and t - self.changed_at[k] <= cfg.recent_window]
        key = rng.choice(recent if recent and rng.random() < cfg.recent_share else askable)
        rule = self.rules[key]
        wrong = self.history[key][-1:]  # a changed rule's previous item is always offered
        others = [i for i in self.world.items if i != rule.item and i not in wrong]
        wrong += rng.sample(others, cfg.n_items - 1 - len(wrong))
        options = [rule.item, *wrong]
        rng.shuffle(options)
        alias = self.world.aliases.get(rule.creature)
        if alias and t - self.alias_stated.get(rule.creature, t + cfg.min_gap) >= cfg.min_gap and \
                rng.random() < cfg.alias_questions:  # multi-hop: named by the alias only
            text = decision_text(replace(rule, creature=alias), options)
        else:
            text = (phrasing.decision_sentence(rule.creature, rule.condition, options,
                                               self.cfg.phrasings, self.surface_rng)
                    if self.varied else decision_text(rule, options))
        self.emit(Observation(text, tuple(options), t, "decide"),
                  self.truth(t, "decide", key, correct_action=rule.item))
        self.pending_feedback = key

    def feedback(self, t: int, key: str) -> None:
        self.pending_feedback = None
        reveal = self.cfg.feedback_reveals_rule
        ops, supersedes = self.reveal(t, key) if reveal else ([], None)
        if self.varied:
            stated = self.rule_sentence(self.rules[key]) if reveal else None
            text, wrong = phrasing.feedback_pair(stated, self.cfg.phrasings, self.surface_rng)
        else:
            text = feedback_text(True, self.rules[key].text if reveal else None)
            wrong = feedback_text(False, self.rules[key].text if reveal else None)
        self.wrong_feedback[t] = wrong
        self.emit(Observation(text, (), t, "feedback"),
                  self.truth(t, "feedback", key, engram_ops=ops, supersedes=supersedes))


def generate_episode(config: GameConfig | None = None) -> Episode:
    """Every turn of the episode `config` describes (a pure function of the config)."""
    config = config or GameConfig()
    return _Generator(config, make_world(config)).run()


class SenselessGame:
    """`GameEnv` over `generate_episode(config)`: the same turns, whatever the agent answers;
    only the feedback's verdict and the reward follow the answer (matched with `match_action`,
    so "The carrot." counts as "carrot"; an answer naming no legal option scores 0)."""

    def __init__(self, config: GameConfig | None = None):
        self.config = config or GameConfig()
        self.episode: Episode | None = None
        self.turn = 0
        self.done = True

    def reset(self, seed: int | None = None) -> Observation:
        if seed is not None:
            self.config = replace(self.config, seed=seed)
        self.episode = generate_episode(self.config)
        self.turn, self.done = 0, False
        return self.episode.observations[0]

    def step(self, action: str | None) -> StepResult:
        if self.episode is None or self.done:
            raise MagsError("step() called before reset() or after the episode ended",
                            "call reset() to start an episode")
        obs, truth = self.episode.observations[self.turn], self.episode.truths[self.turn]
        info: dict[str, Any] = {"turn": self.turn, "kind": obs.kind}
        reward = 0.0
        if obs.kind == "decide":
            chosen = match_action(action, obs.legal_actions)
            reward = float(chosen == truth.correct_action)
            info.update(chosen=chosen, correct_action=truth.correct_action,
                        valid=chosen is not None)
        elif action is not None:
            info["ignored_action"] = action
        self.turn += 1
        if self.turn >= len(self.episode):
            self.done = True
            return StepResult(Observation("The game is over.", (), self.turn, "end"), reward,
                              True, info)
        nxt = self.episode.observations[self.turn]
        if nxt.kind == "feedback" and reward < 1.0:
            nxt = replace(nxt, text=self.episode.wrong_feedback[self.turn])
        return StepResult(nxt, reward, False, info)

    def current_rules(self) -> list[str]:
        """The rules in force now, sorted by key (silent changes included)."""
        if self.episode is None:
            return []
        rules = self.episode.rules_at(min(self.turn, len(self.episode) - 1))
        world = self.episode.world
        return [rules[k].text for k in sorted(rules)] + [world.alias_text(c)
                                                         for c in sorted(world.aliases)]

    def ground_truth(self) -> StepTruth | None:
        if self.episode is None or self.done:
            return None
        return self.episode.truths[self.turn]


def game_observations(seeds: list[int], episode_length: int = 200,
                      **config: Any) -> list[Observation]:
    """Every observation of the episodes with these seeds (e.g. the `game_seed`s of a dataset
    split), from the game's default config updated with `config` (for router checks)."""
    return [obs for s in sorted(set(seeds))
            for obs in generate_episode(GameConfig(seed=s, episode_length=episode_length,
                                                   **config)).observations]
