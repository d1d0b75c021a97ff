# %% [markdown]
# # 13 · The test splits, scored once on the frozen configuration
#
# Every choice in this project was made on development sets: the game's held-out phrasings
# (notebook 06), the development personas and LoCoMo's conv-43 (notebook 12). This notebook
# scores the configuration that `make reproduce` trains, unchanged, on the sets kept for the
# end, which no dataset holds and no choice was made on:
#
# 1. **The game's test bank**: rules, changes, questions, feedback and distractors in phrasings
#    written once on 2026-11-27, before any tuning (`game/phrasing.py`, set `"test"`), on the
#    varied surface; `mags` against `bare`, `static_rag`, the oracle and `mags_scripted` (an
#    upper bound: it is handed the game's structure).
# 2. **The persona test set**: persona seeds 20,000+ with the test phrasing templates; every
#    agent of notebook 12, and the write and ask models alone, as in play, on its turns.
# 3. **LoCoMo's test conversations** (conv-44, 47, 48, 49, 50), a seeded sample of questions
#    each (evidence recall of raw turns: all of them).
#
# Then the targets, each marked met or not. Nothing here feeds back into a choice: a
# result that disappoints is reported, not tuned against (that would make these sets
# development sets too).
#
# Reads notebook 04's GGUFs (the trained answer, ask and write models) and LoCoMo where it is
# (`$MAGS_LOCOMO`, `data/external/`, the shared copy; where it is absent the LoCoMo part says so).
# Outputs: `results/13_test_splits/` (`metrics.json`, `targets.json`, `game/` with every game,
# `manifest.json`).

# %% tags=["parameters"]
SMOKE = False
SEEDS = [0, 1, 2]
EPISODE_LENGTH = 200
GAME_AGENTS = ["bare", "oracle", "static_rag", "mags_scripted", "mags"]
PERSONAS = 6
AGENTS = ["bare", "full_context", "static_rag", "mem0", "mags", "mags_episodic",
          "gold_writes"]  # persona set
LOCOMO_CONVERSATIONS = 5  # the whole test split
LOCOMO_QUESTIONS = 60  # per conversation, a seeded sample, as in notebook 12 (20 before 2026-12-06)
LOCOMO_AGENTS = ["bare", "full_context", "static_rag", "mags", "mags_episodic",  # an agent
                 "gold_writes"]  # that writes; `mags` since 2026-12-01: its targets name it)
MAGS_AGENTS = ["mags", "mags_episodic"]  # the targets are judged for these (never a bound)
MODELS = {"ask": "auto", "write": "auto"}
ANSWER_LLM = "auto"
EMBEDDER = "embedded"
K = 3  # game: memory lines per decision (notebook 06's)
RESUME = True

# %%
import json
from dataclasses import asdict

from IPython.display import Markdown, display

from mags_lib.evaluation import run_eval
from mags_lib.evaluation.answer_model import decision_llm_settings
from mags_lib.evaluation.conversation_study import (
    ConversationStudyConfig,
    role_models,
    run_conversation_study,
    study_markdown,
)
from mags_lib.evaluation.conversation_targets import conversation_targets, targets_markdown
from mags_lib.evaluation.game_bank import bank_eval_config
from mags_lib.evaluation.headline import closed_loop_targets, headline_markdown, headline_rows
from mags_lib.evaluation.role_judge import judge_roles, judged_text
from mags_lib.manifest import PartialRun, write_json
from mags_lib.paths import results_dir
from mags_lib.seed import seed_everything
from mags_lib.synth.conversation_rows import persona_judge_rows

NAME = "13_test_splits"
seed_everything(0)
out = results_dir(NAME)

# %% [markdown]
# ## 1. The game's test bank
# Notebook 06's closed loop and settings, only the phrasing bank differs.

# %%
run = PartialRun(NAME, smoke=SMOKE, metrics={"smoke": SMOKE})  # keeps the last complete run
print(decision_llm_settings("auto", "completion")["note"])
# the test bank's settings, shared with `python -m mags_lib bank BANK.json`,
# which scores a bank of phrasings kept outside the project the same way
game_cfg = bank_eval_config("test", seeds=SEEDS, episode_length=EPISODE_LENGTH,
                            agents=GAME_AGENTS, models=MODELS, embedder=EMBEDDER, k=K,
                            smoke=SMOKE, resume=RESUME, output=f"{NAME}/game")
game = run_eval(game_cfg)
game_summary = game.summary
print(f"{len(game.games)} games in {game.seconds:.0f} s; oracle - bare = "
      f"{game_summary['oracle_vs_bare_gap']:+.3f} (valid: {game_summary['evaluation_valid']})")
game_rows = headline_rows({"test bank": game_summary})
display(Markdown(headline_markdown(game_rows)))
game_targets = closed_loop_targets(game_summary)
print(json.dumps(game_targets, indent=1))
game_part = {"headline": game_rows, "seconds": game.seconds,
             "oracle_vs_bare_gap": game_summary["oracle_vs_bare_gap"],
             "evaluation_valid": game_summary["evaluation_valid"]}
run.config = {"game": game_cfg.resolved().to_dict()}
run.save(game=game_part, targets={"game": game_targets})  # each part is saved as it finishes

# %% [markdown]
# ## 2-3. The persona test set and LoCoMo's test conversations

# %%
cfg = ConversationStudyConfig(persona_split="test", personas=PERSONAS, locomo_split="test",
                              locomo_conversations=LOCOMO_CONVERSATIONS,
                              locomo_questions=LOCOMO_QUESTIONS, agents=AGENTS,
                              locomo_agents=LOCOMO_AGENTS, answer_llm=ANSWER_LLM,
                              embedder=EMBEDDER, models=MODELS, smoke=SMOKE)
run.config["conversations"] = asdict(cfg.resolved())
talk = run_conversation_study(cfg, on_part=run.save)
print(f"{talk['seconds']:.0f} s")
display(Markdown(study_markdown(talk)))

# %% [markdown]
# ## The write and ask models alone on the persona test turns, as in play

# %%
roles, why = role_models(MODELS)
judged = judge_roles(roles, persona_judge_rows("test", cfg.resolved().personas)) if roles else {}
print(judged_text(judged) if roles else f"skipped: {why}")
run.save(judged=judged)

# %% [markdown]
# ## The targets

# %%
targets = {"game": game_targets,
           "conversations": conversation_targets(talk, tuple(MAGS_AGENTS), judged)}
write_json(out / "targets.json", targets)
run.finish(targets=targets)
print("game:", json.dumps(game_targets["met"]))
display(Markdown(targets_markdown(targets["conversations"])))

# %%
assert game_summary["n_games"] == len(game_cfg.resolved().seeds) * len(GAME_AGENTS)
assert talk["persona"]["split"] == "test"
