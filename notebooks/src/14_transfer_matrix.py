# %% [markdown]
# # 14 · The transfer matrix of the write skill
#
# One set of models serves every task: notebook 03's write model learns from the game, the
# persona conversations and LoCoMo's training conversations together (the **mix**). Does the
# skill carry across tasks, or does each side only learn its own? Here the same recipe (SFT,
# then GRPO; the role's LoRA, learning rates and decision-token weight) trains a write model
# on **one side only**: the game's rows, or the conversations' rows (persona + LoCoMo). The
# three writers are then judged alone, prompted and decoded as in play, on text that no
# dataset holds:
#
# * the game's held-out phrasings (the development bank) and its test bank, on the test
#   split's games;
# * the persona test set (seeds 20,000+, test phrasing templates), every turn;
# * LoCoMo's test conversations, a seeded sample of turns each (gold: `add` where the turn
#   carries a session observation, else `none`).
#
# A cell is the op accuracy with a 95% interval by bootstrap over conversations (games), and
# the op confusion matrix. Only the **write** model is in the matrix: the ask and answer
# models were not trained one-sided (about 50 more minutes each on 2 cores).
#
# Each one-sided model sees its side's rows exactly as the mix saw them: the mix makes one
# SFT pass over its rows with the game's rows twice (notebook 03's `source_repeats` and SFT
# steps, read from its recorded configuration), so the game side makes one pass over the
# game's rows twice and the conversation side one pass over the conversations' rows
# (`train.transfer.matched_steps`, batch 8; a mix trained for more passes gives its sides as
# many). Only the other side's rows differ. (Before
# 2026-12-07 the sides had 160 steps and the mix 240, later 550: not matched.) Reads
# `data/synth/write/` (notebook 01), notebook 03's configuration and notebook 04's write
# GGUF; writes `models/transfer/<side>/` and `results/14_transfer_matrix/`. About 15-30
# minutes a side to train and 20 to judge on 2 idle cores; with `RESUME`, a model trained
# from the same rows and configuration is reused.

# %% tags=["parameters"]
SMOKE = False  # True: SMOKE-shrunk training, a few rows a surface
SIDES = ["game", "conversations"]  # one-sided training sets (mags_lib.train.transfer.SIDES)
SFT_STEPS = None  # None: as many passes as the mix made (`matched_steps`); a number: that many
GRPO_STEPS = 10
ROWS_PER_OP = 20  # game rows judged per gold op (add / update / none), per bank
PERSONAS = 6  # the persona test set (every turn)
LOCOMO_CONVERSATIONS = 5  # LoCoMo's test split
LOCOMO_TURNS = 60  # sampled turns per LoCoMo conversation
TORCH_THREADS = None
RESUME = True

# %%
import json

import pandas as pd
from IPython.display import Markdown, display

from mags_lib.checkpoints import final_model_name
from mags_lib.evaluation.answer_model import find_gguf
from mags_lib.evaluation.transfer import transfer_markdown, transfer_matrix
from mags_lib.export.config import ExportConfig
from mags_lib.export.run import export_model
from mags_lib.manifest import write_run
from mags_lib.paths import results_dir
from mags_lib.seed import seed_everything
from mags_lib.synth import SynthConfig
from mags_lib.synth.chains import heldout_write_rows
from mags_lib.synth.conversation_rows import locomo_judge_rows, persona_judge_rows
from mags_lib.train.transfer import SIDES as SIDE_SOURCES
from mags_lib.train.transfer import matched_steps, side_config, train_side

NAME = "14_transfer_matrix"
seed_everything(0)
out = results_dir(NAME)

# %% [markdown]
# ## Train (or reuse) the one-sided write models

# %%
mix_config = results_dir("03_train_write_model") / "config.json"
assert mix_config.is_file(), f"{mix_config} is missing: run notebook 03 first"
mix = json.loads(mix_config.read_text())["write"]
mix_repeats = mix.get("source_repeats") or {}
configs = {side: side_config(side, sft_steps=SFT_STEPS, grpo_steps=GRPO_STEPS, smoke=SMOKE,
                             torch_threads=TORCH_THREADS, source_repeats=mix_repeats)
           for side in SIDES}
if SFT_STEPS is None:
    configs = {side: cfg.with_steps(matched_steps(cfg, mix)) for side, cfg in configs.items()}
print({side: {"sft_steps": cfg.sft.max_steps, "source_repeats": cfg.source_repeats}
       for side, cfg in configs.items()}, "mix:", mix_repeats)
trained = {side: train_side(cfg, resume=RESUME) for side, cfg in configs.items()}
display(pd.DataFrame([{"side": side, "sources": ", ".join(t["sources"]), "stage": t["stage"],
                       "reused": t["reused"],
                       "train rows": t["metrics"].get("data", {}).get("n", {}).get("train"),
                       "val op accuracy": t["metrics"].get("stages", {}).get(t["stage"], {})
                       .get("write", {}).get("op_accuracy")}
                      for side, t in trained.items()]))

# %% [markdown]
# ## Export each to q8_0, as notebook 04 exports the mix

# %%
writers = {"mix": find_gguf(final_model_name("write"))}
assert writers["mix"] is not None, "no write GGUF in models/gguf/: run notebooks 03-04 first"
for side, t in trained.items():
    export = ExportConfig(quant_types=["q8_0"], out_dir=str(configs[side].models_dir) + "/gguf",
                          verify=False)
    writers[side] = export_model(t["model_dir"], export)["files"]["q8_0"]["path"]
print(json.dumps({k: str(v) for k, v in writers.items()}, indent=1))

# %% [markdown]
# ## The rows judged: every task's text that no dataset holds

# %%
synth_cfg = SynthConfig(smoke=SMOKE).resolved()
game_seeds = synth_cfg.split_seeds()["test"]
per_op = 2 if SMOKE else ROWS_PER_OP
surfaces = {
    "game, held-out phrasings": heldout_write_rows(game_seeds, synth_cfg, per_op, 0),
    "game, test bank": heldout_write_rows(game_seeds, synth_cfg, per_op, 0, phrasings="test"),
    "persona test": persona_judge_rows("test", 1 if SMOKE else PERSONAS)["write"],
    "LoCoMo test": locomo_judge_rows("test", 1 if SMOKE else LOCOMO_CONVERSATIONS,
                                     4 if SMOKE else LOCOMO_TURNS),
}
if SMOKE:
    surfaces["persona test"] = surfaces["persona test"][:6]
print({s: len(rows) for s, rows in surfaces.items()})
if not surfaces["LoCoMo test"]:
    print("LoCoMo is absent ($MAGS_LOCOMO, data/external/locomo10.json, ../shared/data/): its "
          "column is skipped")

# %% [markdown]
# ## The matrix

# %%
matrix = transfer_matrix(writers, surfaces, reference="mix")
trained_on = {"mix": "mix (notebook 03)",
              **{side: f"{side} only ({', '.join(SIDE_SOURCES[side])})" for side in SIDES}}
display(Markdown(transfer_markdown(matrix, trained_on)))
write_run(NAME, config={"sides": {s: c.to_dict() for s, c in configs.items()},
                        "rows_per_op": per_op, "personas": PERSONAS,
                        "locomo_conversations": LOCOMO_CONVERSATIONS,
                        "locomo_turns": LOCOMO_TURNS},
          metrics={"smoke": SMOKE, "matrix": matrix, "trained_on": trained_on,
                   "training": {side: {k: v for k, v in t.items() if k != "metrics"}
                                | {"val": t["metrics"].get("stages", {}),
                                   "data": t["metrics"].get("data", {})}
                                for side, t in trained.items()}},
          smoke=SMOKE)

# %% [markdown]
# Raw outputs, a few per cell (read them: a soft score can hide a writer that never stores).

# %%
for name, by_surface in matrix["cells"].items():
    for surface, cell in by_surface.items():
        for s in cell["samples"][:2]:
            print(f"[{name} | {surface}] {s['observation']!r}\n   gold {s['gold']!r}\n"
                  f"   -> {s['output']!r}")

# %%
assert set(matrix["cells"]) == {"mix", *SIDES}
assert all(sum(sum(r.values()) for r in c["op_confusion"].values()) == c["n"]
           for by_surface in matrix["cells"].values() for c in by_surface.values()), \
    "every judged row is in its cell's confusion matrix"
