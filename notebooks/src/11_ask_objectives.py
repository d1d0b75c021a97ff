# %% [markdown]
# # 11 The ask model trained by imitation or by its outcome
#
# Notebook 02 rewards the ask model's GRPO stage by its outcome: the sampled queries are run
# against a memory holding the row's facts and pay when they find the rule the turn needs.
# Notebook 08 compares an imitation objective with an outcome objective for the write model;
# this notebook does the same for the ask model. The same GRPO stage (steps, mined prompts,
# completions, learning rate) starts from notebook 02's SFT model under:
#
# * **f1**: `ask_f1_reward`, the soft F1 of the sampled queries against the gold recall block's
#   queries (notebook 01's annotation): what the annotator would have asked;
# * **outcome**: notebook 02's rewards (`recall_reward` + half `recall_precision_reward`,
#   hashing embedder, top 1): whether the queries find the rule;
# * **mix** (off by default): both at half weight.
#
# Every model is judged on the same held-out rows by generating and parsing: F1 to the gold
# queries, and whether the queries find the rule with the reward's judge and with play's
# (MiniLM, the 3 lines the answer model sees). Then each model is exported and **plays the
# closed loop** (`mags` with notebook 04's write and answer models) on notebook 06's
# evaluation games (varied surface, held-out phrasings, seeds 0-2): after-drift accuracy per
# model, per objective the mean over its seeds with a t interval and the paired difference to
# `f1`. Reads `models/ask-sft` (notebook 02), `data/synth/ask/` (notebook 01) and
# `models/gguf/` (notebook 04); writes `models/objectives/ask-*` and `results/11_ask_objectives/`.
# About 5 minutes a model to train and 6 to play on 2 idle cores (resumable: `RESUME`).

# %% tags=["parameters"]
SMOKE = False  # True: one seed per objective with SMOKE-shrunk stages, 4 rows
OBJECTIVES = ["f1", "outcome"]  # "mix" too: about 35 more minutes
SEEDS = [0, 1, 2]
ROWS = 160  # held-out rows judged, the same for every model
SPLIT = "test"
GRPO_STEPS = None  # None: the ask recipe's (as notebook 02)
LOOP = True  # play every model in the closed loop on notebook 06's evaluation games
TORCH_THREADS = None  # None: both cores; 1 on a shared machine
RESUME = True  # reuse a model trained from the same ask-sft, rows and config

# %%
from IPython.display import Markdown, display

from mags_lib.manifest import write_run
from mags_lib.paths import results_dir
from mags_lib.train.ask_objectives import AskObjectivesConfig, markdown, run_ask_objectives

NAME = "11_ask_objectives"
OUT = results_dir(NAME)
cfg = AskObjectivesConfig(objectives=OBJECTIVES, seeds=SEEDS[:1] if SMOKE else SEEDS,
                          rows=ROWS, split=SPLIT, grpo_steps=GRPO_STEPS,
                          torch_threads=TORCH_THREADS, resume=RESUME, smoke=SMOKE)

# %% [markdown]
# ## Train every objective and seed from ask-sft, judge all on the same rows

# %%
study = run_ask_objectives(cfg, OUT)
write_run(NAME, config=cfg, metrics={"smoke": SMOKE, **{
    k: v for k, v in study.items() if k != "models"},
    "models": {name: {k: v for k, v in m.items() if k != "reward_curve"}
               for name, m in study["models"].items()}}, smoke=SMOKE)
display(Markdown(markdown(study)))

# %% [markdown]
# ## A dozen raw outputs, each objective's first seed beside SFT

# %%
import json

saved = json.loads((OUT / "objectives_outputs.json").read_text())
shown = ["sft", *(f"{o}-s{cfg.seeds[0]}" for o in cfg.objectives)]
for i, obs in enumerate(saved["rows"][:12]):
    print(obs)
    for name in shown:
        print(f"  {name:>12}: {' | '.join(saved['outputs'][name][i].splitlines()[1:-1])}")

# %% [markdown]
# ## Every model in the closed loop
# Exported to q8_0 (as notebook 04 exports the models notebook 06 plays), then `mags` plays the
# same games with each ask model; nothing else changes (notebook 04's write and answer models).

# %%
from mags_lib.evaluation.write_models import WriterLoopConfig, compare_groups, play_writers
from mags_lib.evaluation.write_models import markdown as loop_markdown
from mags_lib.export.config import ExportConfig
from mags_lib.export.run import export_model
from mags_lib.manifest import write_json
from mags_lib.train.ask_objectives import objective_dir
from mags_lib.train.write_objectives import OBJECTIVES_DIR

if LOOP:
    export = ExportConfig(quant_types=["q8_0"], out_dir=str(OBJECTIVES_DIR / "gguf"),
                          verify=False)
    askers, group_of = {}, {}
    for objective in cfg.objectives:
        for seed in cfg.seeds:
            name = f"{objective}-s{seed}"
            askers[name] = export_model(str(objective_dir(objective, seed)),
                                        export)["files"]["q8_0"]["path"]
            group_of[name] = objective
    loop_cfg = WriterLoopConfig(role="ask", output=f"{NAME}/loop", smoke=SMOKE)
    played = play_writers(askers, loop_cfg)
    groups = compare_groups(played, group_of,
                            reference="f1" if "f1" in cfg.objectives else None)
    write_json(OUT / "loop.json", {"played": played, "groups": groups})
    display(Markdown(loop_markdown(played, groups)))

# %%
assert "sft" in study["models"] and set(study["by_objective"]) == set(cfg.objectives)
assert all(m["n"] == study["rows"] for m in study["models"].values())
if LOOP:
    assert set(group_of) <= set(played["writers"]), "every trained model played the loop"
    assert all(len(w["per_game"]) == len(played["seeds"]) for w in played["writers"].values())
