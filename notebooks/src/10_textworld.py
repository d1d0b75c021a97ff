# %% [markdown]
# # 10 · TextWorld with the real loop
#
# The agents of notebook 06 on generated TextWorld games (coin collector, treasure hunter) of
# two sizes: `bare`, `full_context`, `static_rag`, `mags` (the closed loop: MAGS's trained ask
# and write models drive the memory, on text they never saw in training) and `oracle` (shown
# TextWorld's winning commands from the current state: the ceiling). One decision LLM for all
# (the embedded base model: the answer model trained on the senseless game's two-option turns
# follows a TextWorld hint far less often), choosing among the admissible commands, which end
# each observation, under a grammar. TextWorld's rules never drift: memory here is about the
# objective (stated once, at the start), where things are and where one has been; every turn
# is a decision that also informs, so the memory agents store decision turns too.
#
# Outputs: `results/10_textworld/` (`metrics.json`, `manifest.json`).

# %% tags=["parameters"]
SMOKE = False
KINDS = ["coin_collector", "treasure_hunter"]
LEVELS = [5, 10]  # commands needed: 3-5 at level 5, 5-10 at level 10
SEEDS = [0, 1, 2]
AGENTS = ["bare", "full_context", "static_rag", "mags", "oracle"]
MAX_STEPS = 30
TEMPERATURE = 0.7  # decisions sampled, turn t with seed t, the same for every agent (0: greedy)
DECISION_LLM = "embedded"  # the base model; "auto": the answer model trained on the senseless game

# %%
from IPython.display import Markdown, display

from mags_lib.evaluation.textworld_eval import (
    TextWorldEvalConfig,
    run_textworld_eval,
    textworld_markdown,
)
from mags_lib.manifest import write_run
from mags_lib.seed import seed_everything

NAME = "10_textworld"
seed_everything(0)
cfg = TextWorldEvalConfig(kinds=KINDS, levels=LEVELS, seeds=SEEDS, agents=AGENTS,
                          max_steps=MAX_STEPS, decision_llm=DECISION_LLM,
                          temperature=TEMPERATURE, smoke=SMOKE)

# %%
result = run_textworld_eval(cfg)
print(result["decision_llm"], f"- {len(result['games'])} games in {result['seconds']:.0f} s")
display(Markdown(textworld_markdown(result["rows"])))

# %%
write_run(NAME, config=cfg.resolved(), metrics={"smoke": SMOKE, **result}, smoke=SMOKE)
assert result["games"] and all(0.0 <= g["normalized_score"] <= 1.0 for g in result["games"])
