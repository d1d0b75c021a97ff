# %% [markdown]
# # 12 · Memory on conversations: a person's changing facts and LoCoMo
#
# The same memory and agents as the game, on talk instead of play. Two sources, one
# `Conversation` shape: the persona conversations (synthesised offline: a user tells an
# assistant about their home, job, car, doctor... across sessions, and the facts change,
# directly, indirectly or as corrections) and LoCoMo's long real dialogues (read from
# `$MAGS_LOCOMO`, `data/external/` or the shared copy; where it is absent this notebook says so
# and runs the rest). Only the development splits are studied here (persona `dev`, LoCoMo's
# conv-43: of the five training conversations, the one no dataset holds, since the other four
# trained the models); the test splits are run once a configuration is frozen.
#
# 1. Evidence recall: raw turns in a `LiquidMemory` against flat BM25.
# 2. Supersession by `LiquidMemory`'s defaults against the gold updates: with the gold facts
#    written, and with the user's raw turns written (a memory with no write model).
# 3. Question answering: `bare`, `full_context`, `static_rag`, the Mem0-style `mem0` (persona
#    set only), `mags` (the trained ask and write models of notebook 04, trained on the game,
#    the training personas and LoCoMo's training conversations), `mags_episodic` (the same, and
#    every turn kept as said in the episodic block, the question recalled with the queries),
#    each agent's evidence recall@5 / @10 and supersession against the gold updates, and the
#    upper bound
#    `gold_writes` (the gold facts written: it reads the gold, so it is never "MAGS"), one
#    answer model for all (`ANSWER_LLM`: notebook 04's trained answer model, which learned
#    conversation answer rows too), scored as LoCoMo scores, with the persona rates and the
#    stage where each question on a fact's value was lost (write, superseded, recall, reader).
# 4. The trained write and ask models alone, prompted exactly as in play, on every turn and
#    question of the persona conversations: the write model's op confusion matrix, the ask
#    model's hit rate, and raw outputs to read.
#
# Outputs: `results/12_conversations/` (`metrics.json` with every row, `config.json`,
# `manifest.json`).

# %% tags=["parameters"]
SMOKE = False
PERSONA_SPLIT = "dev"  # or "fresh": the second development split (persona_fresh_phrases)
PERSONAS = 6
LOCOMO_SPLIT = "dev"  # conv-43: the training conversation no dataset holds
LOCOMO_CONVERSATIONS = 1
LOCOMO_QUESTIONS = 60  # per conversation, a seeded sample (evidence recall of raw turns: all)
AGENTS = ["bare", "full_context", "static_rag", "mem0", "mags", "mags_episodic",
          "gold_writes"]  # persona set
# mem0: ~40 min a LoCoMo conversation; mags: ~6 (a write-model call a turn)
LOCOMO_AGENTS = ["bare", "full_context", "static_rag", "mags", "mags_episodic", "gold_writes"]
MODELS = {"ask": "auto", "write": "auto"}  # mags's models: notebook 04's GGUFs
ANSWER_LLM = "auto"  # the trained answer model of notebook 04 (else the base model, said so)
EMBEDDER = "embedded"
K = 5
CONTEXT_VALUES = (0, 1, 2, 3, 4)  # episode_context values swept on LoCoMo's training conversations
RUN_NAME = "12_conversations"  # results/RUN_NAME/ ("12_conversations_test" for the test splits)

# %%
from IPython.display import Markdown, display

from mags_lib.evaluation.conversation_study import (
    ConversationStudyConfig,
    run_conversation_study,
    study_markdown,
)
from mags_lib.manifest import write_run
from mags_lib.seed import seed_everything

NAME = RUN_NAME
seed_everything(0)
cfg = ConversationStudyConfig(persona_split=PERSONA_SPLIT, personas=PERSONAS,
                              locomo_split=LOCOMO_SPLIT, locomo_conversations=LOCOMO_CONVERSATIONS,
                              locomo_questions=LOCOMO_QUESTIONS, agents=AGENTS,
                              locomo_agents=LOCOMO_AGENTS,
                              answer_llm=ANSWER_LLM, embedder=EMBEDDER, k=K, models=MODELS,
                              smoke=SMOKE)

# %%
result = run_conversation_study(cfg)
print(f"{result['seconds']:.0f} s")
display(Markdown(study_markdown(result)))

# %% [markdown]
# Can the evaluation tell memories apart? The upper bound should answer the current value far
# more often than `bare` on the persona set; if it does not, the answer model, not the memory,
# limits every comparison below it.

# %%
qa = result["persona"]["qa"]["summary"]
current = {name: (s.get("persona") or {}).get("current_accuracy") for name, s in qa.items()}
print("current-fact accuracy:", current)

# %% [markdown]
# Where is a fact lost? The tables under the QA table place every question on a fact's current
# or earlier value at the first stage that missed it (`evaluation.failure_stages`): **write**
# (no stored item names the value), **superseded** (only retired items name it), **recall** (a
# valid item names it, no line shown does), **reader** (a shown line names it, the answer does
# not). A memory agent's headroom is in its write / superseded / recall columns; the reader
# column is shared by every agent, since they all answer with one model.

# %%
stages = {name: s["stages"].get("current", {}) for name, s in qa.items() if s.get("stages")}
for name, counts in stages.items():
    lost = {k: v for k, v in counts.items() if k != "answered"}
    print(f"{name}: answered {counts.get('answered', 0)} of {sum(counts.values())}; lost at", lost)

# %% [markdown]
# ## The trained write and ask models alone, as in play
#
# Every turn of the persona conversations studied above (the assistant's replies left out) and
# every question with evidence, prompted with the loop's own messages and decoded as the loop
# decodes. These conversations' seeds and phrasings never enter a dataset (notebook 01 draws
# val rows from the first development personas, so on the `dev` split these are the same
# conversations as notebook 01's val rows, not new ones).

# %%
from mags_lib.evaluation.conversation_study import role_models
from mags_lib.evaluation.role_judge import judge_roles, judged_text
from mags_lib.synth.conversation_rows import persona_judge_rows

roles, why = role_models(MODELS)
judged = judge_roles(roles, persona_judge_rows(PERSONA_SPLIT, cfg.resolved().personas)
                     ) if roles else {}
print(judged_text(judged) if roles else f"skipped: {why}")
result["judged"] = judged

# %% [markdown]
# ## How much of the dialogue an episode is embedded with (`memory.DIALOGUE_MEMORY`)
#
# A reply ("Yes, last week!") means little alone; a person's statement ("I moved to Lisbon")
# means a lot. Each raw turn of LoCoMo's five training conversations and of the development
# personas written into a `LiquidMemory` whose vectors also embed the 0-4 turns before it
# (`EngramConfig.episode_context`), every question with evidence recalled. The smallest value
# within 0.01 of the best recall@10 averaged over both is the one `DIALOGUE_MEMORY` holds
# (2026-11-29: 0; the context helps LoCoMo and costs the personas as much).

# %%
from mags_lib.evaluation.conversation_study import study_embedder
from mags_lib.evaluation.evidence_recall import context_sweep, sweep_markdown
from mags_lib.memory import DIALOGUE_MEMORY
from mags_lib.tasks.registry import get_task

locomo = get_task("locomo")
if locomo.available():
    sweep = context_sweep({"LoCoMo train": locomo.episodes("train", 1 if SMOKE else None),
                           "persona dev": get_task("persona").episodes(
                               "dev", cfg.resolved().personas)},
                          study_embedder(EMBEDDER), values=(0, 1) if SMOKE else CONTEXT_VALUES)
    display(Markdown(sweep_markdown(sweep)))
    print(f"chosen {sweep['best']}; DIALOGUE_MEMORY holds {DIALOGUE_MEMORY['episode_context']}")
else:
    sweep = {"missing": locomo.missing_message()}
    print(sweep["missing"])
result["context_sweep"] = sweep

# %%
write_run(NAME, config=cfg.resolved(), metrics={"smoke": SMOKE, **result}, smoke=SMOKE)
assert result["persona"]["qa"]["rows"] and all(
    0.0 <= s["f1"] <= 1.0 for s in qa.values() if s.get("f1") is not None)
