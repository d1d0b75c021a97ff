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
#   held - 0.5 x stale - 0.1 x extra nodes (`mags_lib.objectives.outcome`);
# * **mix**: both at half weight.
#
# Every model is judged on the same held-out rows (20 per gold op by default) by generating
# and parsing: the confusion matrix of the op it chose, F1, the outcome reward and its terms.
# Then, what counts most, each model is exported to GGUF and **plays the closed loop** (`mags`
# with notebook 04's ask and answer models) on notebook 06's evaluation games (varied surface,
# held-out phrasings, seeds 0-2): accuracy after drift per model, and per objective the mean over
# its GRPO seeds with a t interval and the paired difference to `f1`.
# Reads `models/write-sft` (notebook 03), `data/synth/write/` (notebook 01, which writes the
# probes) and `models/gguf/` (notebook 04); writes `models/objectives/` and
# `results/08_write_objectives/`. About 10 minutes a model to train and 6 to play on 2 idle cores
# (94 minutes for f1 and outcome on 2026-11-26; with `RESUME`, adding mix to that run took 44:
# a model trained from the same write-sft, rows and config is reused, its saved games too).

# %% tags=["parameters"]
SMOKE = False  # True: one seed per objective with SMOKE-shrunk stages, 2 rows per op
OBJECTIVES = ["f1", "outcome", "mix"]
SEEDS = [0, 1, 2]
ROWS_PER_OP = 20  # held-out rows judged per gold op (add / update / none)
SPLIT = "test"
GRPO_STEPS = None  # None: the write recipe's (as notebook 03)
GRPO_PROMPTS = 2  # prompts per GRPO step, 4 completions each (None: the write recipe's, 1)
MINE = 100  # training rows decoded to mine GRPO's prompts by each objective's reward (0: off)
LOOP = True  # play every model in the closed loop on notebook 06's evaluation games
LOOP_REFERENCES = ["write-grpo"]  # notebook 04's GGUFs played beside them ("write-sft" too)
TORCH_THREADS = None  # None: both cores; 1 on a shared machine
RESUME = True  # reuse a model trained from the same write-sft, rows and config (an unchanged
# GGUF reuses its saved games whatever RESUME says)

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
                            grpo_prompts=GRPO_PROMPTS, mine=MINE,
                            torch_threads=TORCH_THREADS, resume=RESUME, smoke=SMOKE)

# %% [markdown]
# ## Train every objective and seed from write-sft, judge all on the same rows

# %%
study = run_write_objectives(cfg, OUT)
write_run(NAME, config=cfg, metrics={"smoke": SMOKE, **{
    k: v for k, v in study.items() if k != "models"},
    "models": {name: {k: v for k, v in m.items() if k != "reward_curve"}
               for name, m in study["models"].items()}}, smoke=SMOKE)
display(Markdown(markdown(study)))

# %% [markdown]
# ## Every model in the closed loop
# Exported to q8_0 (as notebook 04 exports the models notebook 06 plays), then `mags` plays the
# same games with each write model; nothing else changes. Notebook 04's `write-grpo` is the
# F1-trained writer of notebook 03 (notebook 06's `mags`), `write-sft` the model every objective
# starts from.

# %%
from mags_lib.evaluation.answer_model import find_gguf
from mags_lib.evaluation.write_models import (
    WriterLoopConfig,
    compare_groups,
    play_writers,
)
from mags_lib.evaluation.write_models import markdown as loop_markdown
from mags_lib.export.config import ExportConfig
from mags_lib.export.run import export_model
from mags_lib.manifest import write_json
from mags_lib.train.write_objectives import OBJECTIVES_DIR, objective_dir

if LOOP:
    export = ExportConfig(quant_types=["q8_0"], out_dir=str(OBJECTIVES_DIR / "gguf"),
                          verify=False)
    writers, group_of = {}, {}
    for ref in LOOP_REFERENCES:
        path = find_gguf(ref)
        if path is None:
            print(f"{ref}: no GGUF in models/gguf/ (run notebook 04); not played")
        else:
            writers[ref] = str(path)
    for objective in cfg.objectives:
        for seed in cfg.seeds:
            name = f"{objective}-s{seed}"
            writers[name] = export_model(str(objective_dir(objective, seed)),
                                         export)["files"]["q8_0"]["path"]
            group_of[name] = objective
    loop_cfg = WriterLoopConfig(output=f"{NAME}/loop", smoke=SMOKE)
    played = play_writers(writers, loop_cfg)
    groups = compare_groups(played, group_of,
                            reference="f1" if "f1" in cfg.objectives else None)
    write_json(OUT / "loop.json", {"played": played, "groups": groups})
    display(Markdown(loop_markdown(played, groups)))

# %%
assert "sft" in study["models"] and set(study["by_objective"]) == set(cfg.objectives)
assert all(sum(sum(row.values()) for row in m["confusion"].values()) == study["rows"]
           for m in study["models"].values()), "every judged row is in each confusion matrix"
if LOOP:
    assert set(group_of) <= set(played["writers"]), "every trained model played the loop"
    assert all(len(w["per_game"]) == len(played["seeds"]) for w in played["writers"].values())
