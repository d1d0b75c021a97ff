# %% [markdown]
# # 02 Train the ask model (and the answer model)
#
# The **ask** model reads an observation and emits a `<recall>` block of queries into the
# memory; the **answer** model reads the recalled notes and the decision and emits
# `<answer>X</answer>`. The untrained embedded SmolLM2-135M cannot use a rule given in a chat
# prompt to choose an action, so the answer model is trained too.
#
# Each role: judge the base model on held-out (val) rows, SFT cold start, GRPO from the SFT
# model with the role's rewards (ask: format + recall + recall precision + budget + guardrail;
# answer: the game's decision reward + format), judge again. The ask model's GRPO prompts are
# mined: the SFT model decodes 400 training rows greedily and the rows where its output scores
# below 1 come first, lowest first (blocks where no query finds the rule, then blocks with a
# query that misses or repeats; `mags_lib.train.mining`), since a group whose completions all
# score the same teaches GRPO nothing. Judging is by generation (greedy,
# no grammar): adherence = share of outputs that parse completely, accuracy = recall hit rate /
# answer accuracy. Reads `data/synth/{ask,answer}/` (notebook 01); writes `models/{ask,answer}-{sft,grpo}/`
# and `results/02_train_ask_model/`.

# %% tags=["parameters"]
SMOKE = False  # True: a one-minute run of the same code (sizes shrunk)
SEED = 0
ASK_SFT_STEPS = 36  # ~11 s a step at batch 8 on an idle 2-core CPU
ASK_GRPO_STEPS = 10  # ~30-50 s a step (4 prompts x 4 completions of up to 64 tokens), ~3 min mining
ANSWER_SFT_STEPS = 120  # ~25 s a step on 2 cores (rows up to 512 tokens); 60 was for game rows
ANSWER_GRPO_STEPS = 10  # ~11 s a step (completions of up to 12 tokens)
ASK_EVAL_ROWS = 160  # val rows judged per stage (the same rows for SFT and SFT+GRPO), ~1 min
ASK_BASE_EVAL_ROWS = 16  # the base model: the first 16 of them (it writes 64 tokens on each, ~1.5 s)
ANSWER_EVAL_ROWS = 40  # ... for the answer model (its test split has the same number)
TORCH_THREADS = None  # None: both cores (15-32 min measured for the full run); 1 on a shared machine

# %%
import pandas as pd
from IPython.display import display

from mags_lib.manifest import write_run
from mags_lib.paths import results_dir
from mags_lib.plots import save_figure
from mags_lib.train.figures import plot_role_training
from mags_lib.train.roles import RoleTrainConfig
from mags_lib.train.stages import train_role

NAME = "02_train_ask_model"
OUT = results_dir(NAME)
run = dict(smoke=SMOKE, seed=SEED, torch_threads=TORCH_THREADS)
ask_cfg = RoleTrainConfig(role="ask", eval_rows=ASK_EVAL_ROWS,
                          base_eval_rows=ASK_BASE_EVAL_ROWS, **run).with_steps(
    ASK_SFT_STEPS, ASK_GRPO_STEPS)
answer_cfg = RoleTrainConfig(role="answer", eval_rows=ANSWER_EVAL_ROWS, **run).with_steps(
    ANSWER_SFT_STEPS, ANSWER_GRPO_STEPS)

# %% [markdown]
# ## Ask model: base -> SFT -> SFT+GRPO

# %%
ask = train_role(ask_cfg)
ask.save(OUT)
print("GRPO prompt mining:", ask.stages["grpo"].mining)
display(pd.DataFrame(ask.table()))
save_figure(plot_role_training(ask), OUT / "ask_curves.png")
print(ask.samples_text(3))

# %% [markdown]
# Recall hit rate at several depths: `hit@k`, some query of the block finds the governing rule
# among the top k (the reward uses k = 1; an agent shows its answer model 3 lines), and
# `query hit@k`, the share of queries that do (a query that misses still costs a memory read;
# a query repeated in the block counts as a miss: the SFT model often writes its query twice).
# Below it, GRPO against SFT on the same rows: the gain and a 95% bootstrap interval that
# resamples whole games (rows of one game share its rules, so they are not independent), and the
# games where each model is ahead (`mags_lib.train.compare`).

# %%
display(pd.DataFrame([{"stage": s, **{f"hit@{k}": v for k, v in g["hit_at"].items()},
                       **{f"query hit@{k}": v for k, v in g["query_hit_at"].items()},
                       "queries / row": g["queries_per_row"]}
                      for s, g in ((s, ask.stages[s].generation["ask"])
                                   for s in ("base", "sft", "grpo"))]))
gain = ask.targets()["ask"].get("recall_gain", {})
display(pd.DataFrame([{"unit": unit, "SFT": g["a"], "SFT+GRPO": g["b"], "gain": g["gain"],
                       "95% CI": f"[{g['ci'][0]:+.3f}, {g['ci'][1]:+.3f}]",
                       "games ahead / behind": f"{g['groups_b_ahead']} / {g['groups_b_behind']}"
                                               f" of {g['groups']}",
                       "beyond noise": g["beyond_noise"]} for unit, g in gain.items()]))

# %% [markdown]
# ## Answer model: base -> SFT -> SFT+GRPO (the game's decision reward)

# %%
answer = train_role(answer_cfg)
answer.save(OUT)
display(pd.DataFrame(answer.table()))
save_figure(plot_role_training(answer), OUT / "answer_curves.png")
print(answer.samples_text(3))

# %% [markdown]
# ## Targets and results
#
# The targets: adherence >= 95% on the val split without a grammar, and a recall hit
# rate after GRPO above the SFT-only one. Test-split numbers are for the final model: the better
# of SFT and SFT+GRPO on the val rows (`mags_lib.checkpoints`; GRPO keeps a tie), which
# notebook 04 exports.

# %%
metrics = {"smoke": SMOKE, "ask": ask.metrics(), "answer": answer.metrics()}
write_run(NAME, config={"ask": ask_cfg.to_dict(), "answer": answer_cfg.to_dict()},
          metrics=metrics, smoke=SMOKE)
display(pd.DataFrame([{"role": r.role, **{k: v for k, v in t.items() if k != "recall_gain"}}
                      for r in (ask, answer) for t in r.targets().values()]))
print("final model:", {r.role: r.selected for r in (ask, answer)})
print("test split, final model:", {r.role: r.metrics().get("test", r.test_note)
                                   for r in (ask, answer)})

# %%
ask_by_stage = {s: ask.stages[s].generation["ask"] for s in ("base", "sft", "grpo")}
answer_by_stage = {s: answer.stages[s].generation["answer"] for s in ("base", "sft", "grpo")}
assert ask.stages["sft"].lora_max_change > 0 and answer.stages["sft"].lora_max_change > 0, \
    "SFT did not move the adapter weights"
assert ask_by_stage["sft"]["format_mean"] >= ask_by_stage["base"]["format_mean"], \
    "SFT made the ask model's format worse than the base model's"
if not SMOKE:
    assert ask_by_stage["sft"]["adherence"] > ask_by_stage["base"]["adherence"], ask_by_stage
    assert ask_by_stage["grpo"]["adherence"] >= 0.9, f"ask adherence {ask_by_stage['grpo']}"
    assert answer_by_stage["grpo"]["adherence"] >= 0.9, f"answer adherence {answer_by_stage['grpo']}"
