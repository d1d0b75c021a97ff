"""TextWorld games behind the `GameEnv` interface (optional: `pip install textworld`).

`make_game(TextWorldConfig(kind="coin_collector", level=5, seed=1))` runs TextWorld's `tw-make`
once (offline, a few seconds) and caches the compiled `.z8` under `out_dir`; `TextWorldEnv`
plays it:

    env = TextWorldEnv(TextWorldConfig(kind="coin_collector", level=1, seed=1))
    obs = env.reset()                 # objective + room description
    result = env.step(env.walkthrough()[0])

Every turn is a decision: `legal_actions` are the admissible commands, sorted (TextWorld accepts
other commands too; they usually do nothing). The reward is the score delta; `done` when the game
is won or lost or after `max_steps` steps.

What the oracle means here: TextWorld has no hidden rules that change, so `current_rules()` is the
objective plus the winning policy from the current state ("Winning commands from here: go east,
take coin"), computed by TextWorld from the game's quest; `ground_truth().correct_action` is the
first of those commands (None once the game is over or when TextWorld knows no winning policy).
An agent that follows it reaches the maximum score; memory matters in TextWorld for where things
are and which rooms were visited, not for rules.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.game.base import Observation, StepResult, StepTruth

KINDS = ("coin_collector", "treasure_hunter", "custom")
_INSTALL_FIX = "install it: `.venv/bin/pip install textworld` (or `make setup`)"


@dataclass
class TextWorldConfig:
    kind: str = field(default="coin_collector", metadata={
        "help": "coin_collector | treasure_hunter (tw-make challenges) | custom (tw-make custom)"})
    level: int = field(default=5, metadata={
        "help": "challenge difficulty (coin_collector 1-300, treasure_hunter 1-30)"})
    seed: int = field(default=0, metadata={"help": "tw-make seed: same seed, same game"})
    world_size: int = field(default=5, metadata={"help": "custom: rooms in the world"})
    nb_objects: int = field(default=10, metadata={"help": "custom: minimum objects"})
    quest_length: int = field(default=5, metadata={"help": "custom: actions the quest needs"})
    max_steps: int = field(default=100, metadata={
        "help": "the episode ends (done) after this many steps even if not won"})
    out_dir: str | None = field(default=None, metadata={
        "help": "where compiled games are cached (default data/synth/textworld)"})
    make_timeout_s: float = field(default=300.0, metadata={
        "help": "seconds tw-make may take before the build is abandoned"})
    show_commands: bool = field(default=True, metadata={
        "help": "end each observation with the admissible commands ('Commands: go east, "
                "look.'), as TextWorld agents are usually shown them; off: the agent sees only "
                "the game's text and the commands are the grammar's options"})

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise MagsError(f"TextWorldConfig.kind = {self.kind!r} is unknown",
                            f"set kind to one of {list(KINDS)}")
        for name in ("level", "world_size", "nb_objects", "quest_length", "max_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise MagsError(f"TextWorldConfig.{name} = {value!r} is not playable",
                                f"set {name} to an integer >= 1")

    @property
    def name(self) -> str:
        """The cached game's file stem; it names every setting that changes the game."""
        if self.kind == "custom":
            return (f"custom-w{self.world_size}-o{self.nb_objects}-q{self.quest_length}"
                    f"-s{self.seed}")
        return f"{self.kind}-l{self.level}-s{self.seed}"

    def game_dir(self) -> Path:
        if self.out_dir is not None:
            return Path(self.out_dir)
        from mags_lib.paths import SYNTH_DATA_DIR

        return SYNTH_DATA_DIR / "textworld"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_textworld():
    """`textworld`, or MagsError saying how to install it."""
    try:
        import textworld
    except ImportError as err:
        raise MagsError("the textworld package is not installed (needed for TextWorld games)",
                        _INSTALL_FIX) from err
    return textworld


def tw_make_command(cfg: TextWorldConfig, output: Path) -> list[str]:
    """The tw-make command line that builds `cfg` into `output` (a .z8 path)."""
    script = Path(sys.executable).parent / "tw-make"
    if not script.exists():
        found = shutil.which("tw-make")
        if found is None:
            raise MagsError("textworld's tw-make script was not found next to the Python "
                            "interpreter or on PATH", _INSTALL_FIX)
        script = Path(found)
    if cfg.kind == "custom":
        args = ["custom", "--world-size", str(cfg.world_size), "--nb-objects",
                str(cfg.nb_objects), "--quest-length", str(cfg.quest_length)]
    else:
        args = [f"tw-{cfg.kind}", "--level", str(cfg.level)]
    return [sys.executable, str(script), *args, "--seed", str(cfg.seed), "--output",
            str(output), "--format", "z8", "-f", "--silent"]


def make_game(cfg: TextWorldConfig) -> Path:
    """The compiled game for `cfg` (`<out_dir>/<cfg.name>.z8`), built with tw-make on first use.

    The build goes to a temporary folder and its files are moved in when it succeeds, so an
    interrupted build never leaves a half-written game in the cache."""
    out_dir = cfg.game_dir()
    path = out_dir / f"{cfg.name}.z8"
    if path.exists() and path.with_suffix(".json").exists():
        return path
    import_textworld()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".build-") as tmp:
        tmp_game = Path(tmp) / f"{cfg.name}.z8"
        try:
            run = subprocess.run(tw_make_command(cfg, tmp_game), capture_output=True, text=True,
                                 timeout=cfg.make_timeout_s, cwd=tmp)
        except subprocess.TimeoutExpired as err:
            raise MagsError(f"tw-make took more than {cfg.make_timeout_s:.0f} s for {cfg.name}",
                            "lower level / world_size / quest_length or raise "
                            "make_timeout_s") from err
        if run.returncode != 0 or not tmp_game.exists():
            tail = (run.stderr or run.stdout).strip()[-800:]
            raise MagsError(f"tw-make failed for {cfg.name} (exit {run.returncode}): {tail}",
                            "check the TextWorldConfig settings and that `tw-make --help` runs")
        for built in Path(tmp).iterdir():
            os.replace(built, out_dir / built.name)
    return path


_STATUS_LINE = re.compile(r"^>\s.*$|^>$", re.M)
_BLANK_LINES = re.compile(r"\n\s*\n(\s*\n)+")


def clean_text(text: str) -> str:
    """The game's text without the z-machine's prompt and status line ("> ... -= Cellar =-0/2")
    and with runs of blank lines cut to one.

    >>> clean_text("You are carrying nothing.\\n\\n\\n\\n>          -= Cellar =-0/3")
    'You are carrying nothing.'
    """
    text = _STATUS_LINE.sub("", text or "")
    return _BLANK_LINES.sub("\n\n", text).strip()


class TextWorldEnv:
    """`GameEnv` over one TextWorld game: a compiled game file, or a config built on reset()."""

    def __init__(self, game: str | Path | TextWorldConfig, max_steps: int | None = None,
                 show_commands: bool | None = None):
        self.config = game if isinstance(game, TextWorldConfig) else None
        self.show_commands = (show_commands if show_commands is not None
                              else self.config.show_commands if self.config else True)
        self.game_path = None if self.config else Path(game)
        self.max_steps = max_steps or (self.config.max_steps if self.config else 100)
        self._env = None
        self._env_path: Path | None = None
        self._state: Any = None
        self.turn = 0
        self.score = 0.0
        self.done = True

    def reset(self, seed: int | None = None) -> Observation:
        """Start the game. `seed` picks another generated game when built from a config;
        a given game file is always the same game (TextWorld games are deterministic)."""
        if seed is not None and self.config is not None and seed != self.config.seed:
            self.config = replace(self.config, seed=seed)
            self.game_path = None
        if self.game_path is None:
            self.game_path = make_game(self.config)
        if not self.game_path.exists():
            raise MagsError(f"TextWorld game file {self.game_path} does not exist",
                            "pass the .z8 written by tw-make, or a TextWorldConfig")
        with warnings.catch_warnings():
            # jericho calls every TextWorld game "not fully supported": it cannot read the score
            # from the z-machine, but TextWorld tracks score and won / lost itself.
            warnings.filterwarnings("ignore", message=".*not fully supported.*")
            if self._env is None or self._env_path != self.game_path:
                self._start()
            self._state = self._env.reset()
        self.turn, self.score, self.done = 0, float(self._state["score"] or 0), False
        text = f"{self._state['objective']}\n\n{self._state['description']}".strip()
        return self._observation(text)

    def _start(self) -> None:
        self.close()
        tw = import_textworld()
        infos = tw.EnvInfos(admissible_commands=True, description=True, inventory=True,
                            objective=True, policy_commands=True, max_score=True, score=True,
                            won=True, lost=True, moves=True, extras=["walkthrough"])
        self._env = tw.start(str(self.game_path), request_infos=infos)
        self._env_path = self.game_path

    def step(self, action: str | None) -> StepResult:
        """Send `action` (None sends "look") and return the reward as the score delta."""
        if self._env is None or self.done:
            raise MagsError("step() called before reset() or after the game ended",
                            "call reset() to start the game")
        command = action if action is not None else "look"
        self._state, score, game_over = self._env.step(command)
        reward = float(score) - self.score
        self.score = float(score)
        self.turn += 1
        self.done = bool(game_over) or self.turn >= self.max_steps
        info = {"command": command, "score": self.score, "max_score": self._state["max_score"],
                "won": bool(self._state["won"]), "lost": bool(self._state["lost"]),
                "moves": self._state["moves"]}
        return StepResult(self._observation(self._state["feedback"]), reward, self.done, info)

    @property
    def max_score(self) -> float:
        """The game's maximum score (1.0 before the first reset)."""
        return float(self._state["max_score"] or 1.0) if self._state else 1.0

    @property
    def won(self) -> bool:
        return bool(self._state and self._state["won"])

    def _observation(self, text: str) -> Observation:
        text = clean_text(text)
        if self.done:
            return Observation(text, (), self.turn, "end")
        legal = tuple(sorted(self._state["admissible_commands"] or ()))
        if self.show_commands and legal:
            text = f"{text}\nCommands: {', '.join(legal)}."
        return Observation(text, legal, self.turn, "decide")

    def walkthrough(self) -> list[str]:
        """The game's stored winning command sequence from the start."""
        if self._state is None:
            raise MagsError("walkthrough() called before reset()", "call reset() first")
        return list(self._state["extra.walkthrough"] or [])

    def _policy(self) -> list[str]:
        if self._state is None or self.done:
            return []
        return list(self._state["policy_commands"] or [])

    def _policy_line(self) -> str | None:
        policy = self._policy()
        return f"Winning commands from here: {', '.join(policy)}" if policy else None

    def current_rules(self) -> list[str]:
        """The objective, and the winning commands from the current state (the oracle)."""
        if self._state is None:
            return []
        line = self._policy_line()
        return [self._state["objective"], *([line] if line else [])]

    def ground_truth(self) -> StepTruth | None:
        """`rule_text` is what governs this step: the winning-commands line (the objective
        once TextWorld knows no policy), so the oracle puts it last, nearest the answer."""
        if self._state is None or self.done:
            return None
        policy = self._policy()
        return StepTruth(turn=self.turn, kind="decide",
                         rule_text=self._policy_line() or self._state["objective"],
                         correct_action=policy[0] if policy else None,
                         gold_queries=[self._state["objective"]])

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
        self._env, self._env_path = None, None
