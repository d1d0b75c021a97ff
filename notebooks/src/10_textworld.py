# %% [markdown]
# # 10 · TextWorld with the real loop
#
# The agents of notebook 06 on generated TextWorld games (coin collector, treasure hunter) of
# two sizes: `bare`, `full_context`, `static_rag`, `mags` (the closed loop: MAGS's trained ask
# and write models drive the memory, on text they never saw in training) and `oracle` (shown
# TextWorld's winning commands from the current state: the ceiling). One decision LLM for all
# (notebook 04's trained answer model), choosing among the admissible commands under a grammar.
# TextWorld's rules never drift: memory here is about where things are and where one has been.
#
# Outputs: `results/10_textworld/` (`metrics.json`, `manifest.json`).

# %% tags=["parameters"]
SMOKE = False
KINDS = ["coin_collector", "treasure_hunter"]
LEVELS = [1, 5]
SEEDS = [0, 1, 2]
AGENTS = ["bare", "full_context", "static_rag", "mags", "oracle"]
MAX_STEPS = 30
DECISION_LLM = "auto"  # the trained answer model (notebook 04); "embedded": the base model

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
                          max_steps=MAX_STEPS, decision_llm=DECISION_LLM, smoke=SMOKE)

# %%
result = run_textworld_eval(cfg)
print(result["decision_llm"], f"- {len(result['games'])} games in {result['seconds']:.0f} s")
display(Markdown(textworld_markdown(result["rows"])))

# %%
write_run(NAME, config=cfg.resolved(), metrics={"smoke": SMOKE, **result}, smoke=SMOKE)
assert result["games"] and all(0.0 <= g["normalized_score"] <= 1.0 for g in result["games"])
