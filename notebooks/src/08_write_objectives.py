# %% [markdown]
# # 08 The write model trained by its outcome
#
# Notebook 03 rewards the write model's GRPO stage by the soft F1 of its ops against a gold
# annotation: it teaches one annotation style, pays half for the right text under the wrong op,
# and cannot find a better write than the gold one. Here the same GRPO stage (steps,
# completions, learning rate) starts from notebook 03's SFT model under three objectives:
#
# * **f1**: `engram_reward` against the gold block (notebook 03's);
# * **outcome**: `write_outcome_reward`: the sampled block is applied to the memory a perfect
#   writer held before the turn (the closed loop's memory settings and MiniLM embedder), then
#   recall is asked about every rule known after the turn, in training phrasings:
#   held - 0.5 x stale - 0.1 x extra nodes (`mags_lib.tasks.outcome`);
# * **mix**: both at half weight.
#
# Every model is judged on the same held-out rows (20 per gold op by default) by generating
# and parsing: the confusion matrix of the op it chose, F1, the outcome reward and its terms.
# Reads `models/write-sft` (notebook 03) and `data/synth/write/` (notebook 01, which writes
# the probes); writes `models/objectives/` and `results/08_write_objectives/`. About 5 minutes
# a model on 2 idle cores.

# %% tags=["parameters"]
SMOKE = False  # True: one seed per objective with SMOKE-shrunk stages, 2 rows per op
OBJECTIVES = ["f1", "outcome", "mix"]
SEEDS = [0, 1, 2]
ROWS_PER_OP = 20  # held-out rows judged per gold op (add / update / none)
SPLIT = "test"
GRPO_STEPS = None  # None: the write recipe's (as notebook 03)
TORCH_THREADS = None  # None: both cores; 1 on a shared machine

# %%
from IPython.display import Markdown, display

from mags_lib.manifest import write_run
from mags_lib.paths import results_dir
from mags_lib.train.write_objectives import (
    WriteObjectivesConfig,
    markdown,
    run_write_objectives,
)

NAME = "08_write_objectives"
OUT = results_dir(NAME)
cfg = WriteObjectivesConfig(objectives=OBJECTIVES, seeds=SEEDS[:1] if SMOKE else SEEDS,
                            rows_per_op=ROWS_PER_OP, split=SPLIT, grpo_steps=GRPO_STEPS,
                            torch_threads=TORCH_THREADS, smoke=SMOKE)

# %% [markdown]
# ## Train every objective and seed from write-sft, judge all on the same rows

# %%
study = run_write_objectives(cfg, OUT)
write_run(NAME, config=cfg, metrics={"smoke": SMOKE, **{
    k: v for k, v in study.items() if k != "models"},
    "models": {name: {k: v for k, v in m.items() if k != "reward_curve"}
               for name, m in study["models"].items()}}, smoke=SMOKE)
display(Markdown(markdown(study)))

# %%
assert "sft" in study["models"] and set(study["by_objective"]) == set(cfg.objectives)
assert all(sum(sum(row.values()) for row in m["confusion"].values()) == study["rows"]
           for m in study["models"].values()), "every judged row is in each confusion matrix"
