# %% [markdown]
# # 15 · Which memory mechanisms pay off on conversations
#
# Notebook 09 switches the memory's mechanisms off one at a time in the game. This notebook does
# the same on conversations, for the closed loop on MAGS's trained models: each agent reads every
# conversation once with its whole memory and once per mechanism switched off, then answers the
# same questions with the same reader (`evaluation/conversation_mechanisms.py`):
#
# - **traversal**: recall returns the anchors alone, no walk along strong edges;
# - **hebbian**: co-recalled nodes wire no edge (recall learns nothing while it answers);
# - **decay**: no edge or confidence fades between turns (nothing is pruned);
# - **contradiction**: nothing merges below cosine 0.99 and nothing is superseded.
#
# The effect is paired by question (with it minus without it) on F1, the persona rates and
# evidence recall, with 95% intervals by bootstrap over conversations. An ablation measures; it
# chooses nothing, so it runs on the persona **test** split (as notebook 13 does, after the
# configuration was frozen) and on LoCoMo's conv-43 (a development conversation: a write pass is
# minutes a conversation and a mechanism on 2 cores, the five test conversations would take
# hours). A mechanism that shows no effect is a finding too.
#
# Reads notebook 04's GGUFs (answer, ask, write) and LoCoMo where it is (`$MAGS_LOCOMO`,
# `data/external/`, the shared copy; where it is absent the LoCoMo part says so).
# Outputs: `results/15_conversation_mechanisms/` (`metrics.json` with every row, `config.json`,
# `manifest.json`).

# %% tags=["parameters"]
SMOKE = False
PERSONA_SPLIT = "test"
PERSONAS = 6
AGENTS = ["mags", "mags_episodic"]  # persona set
LOCOMO_SPLIT = "dev"  # conv-43
LOCOMO_CONVERSATIONS = 1
LOCOMO_QUESTIONS = 60  # a seeded sample, as notebook 12's
LOCOMO_AGENTS = ["mags_episodic"]  # MAGS's LoCoMo agent: the writer's facts and the turns
MECHANISMS = ["traversal", "hebbian", "decay", "contradiction"]
MODELS = {"ask": "auto", "write": "auto"}
ANSWER_LLM = "auto"
EMBEDDER = "embedded"

# %%
from IPython.display import Markdown, display

from mags_lib.evaluation.conversation_mechanisms import (
    ConversationMechanismsConfig,
    mechanisms_markdown,
    run_conversation_mechanisms,
    separated_effects,
)
from mags_lib.manifest import PartialRun
from mags_lib.seed import seed_everything

NAME = "15_conversation_mechanisms"
seed_everything(0)
cfg = ConversationMechanismsConfig(persona_split=PERSONA_SPLIT, personas=PERSONAS, agents=AGENTS,
                                   locomo_split=LOCOMO_SPLIT,
                                   locomo_conversations=LOCOMO_CONVERSATIONS,
                                   locomo_questions=LOCOMO_QUESTIONS, locomo_agents=LOCOMO_AGENTS,
                                   mechanisms=MECHANISMS, models=MODELS, answer_llm=ANSWER_LLM,
                                   embedder=EMBEDDER, smoke=SMOKE)

# %%
run = PartialRun(NAME, config=cfg.resolved(), metrics={"smoke": SMOKE}, smoke=SMOKE)
result = run_conversation_mechanisms(cfg, on_part=run.save)  # saved after each part
print(f"{result.get('seconds', 0):.0f} s")
display(Markdown(mechanisms_markdown(result)))

# %% [markdown]
# Which effects does the evaluation separate from zero (the 95% interval excludes 0)? With six
# personas and one LoCoMo conversation most intervals are wide: a mechanism whose interval
# straddles 0 has shown no effect here, which is not the same as having none.

# %%
separated = separated_effects(result)
print("\n".join(separated) if separated else "no effect separated from 0")
run.finish(separated=separated)

# %%
assert result.get("missing") or all(t["effects"] for t in result["persona"]["ablations"])
