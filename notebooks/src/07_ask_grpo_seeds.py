# %% [markdown]
# # 07 The ask model's GRPO over seeds
#
# Notebook 02 runs the ask model's GRPO stage once (seed 0) and judges it on 160 val rows. One
# run cannot say whether GRPO helps or whether the seed did: this notebook re-runs the same
# recipe from `models/ask-sft` with other seeds (models in `models/seeds/ask-grpo-seed<N>/`, which
# notebook 04 does not export), judges every ask model on the same rows by generating and parsing
# (hit@k: some query of the block finds the rule; per query: the share of queries that do;
# adherence: outputs that parse completely), and compares each GRPO model with SFT on the same
# rows, with a 95% bootstrap interval that resamples whole games (rows of one game share rules).
# With the test split too, both splits' outputs are pooled for tighter intervals.
# Reads `models/ask-sft`, `models/ask-grpo` and `data/synth/ask/` (notebooks 01-02); writes
# `results/07_ask_grpo_seeds/`. About 8 minutes a seed on 2 idle cores.

# %% tags=["parameters"]
SMOKE = False  # True: one seed with the SMOKE-shrunk GRPO stage, judged on 4 rows per task
SEEDS = [1, 2]  # GRPO seeds trained here (seed 0 is notebook 02's ask-grpo)
ROWS = 160  # rows per task judged, the same for every model
SPLITS = ["val"]  # add "test" to judge the saved models on test too and pool both splits
TORCH_THREADS = None  # None: both cores; 1 on a shared machine

# %%
from IPython.display import Markdown, display

from mags_lib.manifest import write_run
from mags_lib.paths import results_dir
from mags_lib.train.seed_spread import SeedSpreadConfig, markdown, pooled_spread, run_seed_spread

NAME = "07_ask_grpo_seeds"
OUT = results_dir(NAME)
cfg = SeedSpreadConfig(seeds=SEEDS[:1] if SMOKE else SEEDS, rows=4 if SMOKE else ROWS,
                       split=SPLITS[0], torch_threads=TORCH_THREADS, smoke=SMOKE)

# %% [markdown]
# ## Train the other seeds and judge every ask model on the first split

# %%
spread = {cfg.split: run_seed_spread(cfg, OUT)}
display(Markdown(markdown(spread[cfg.split])))

# %% [markdown]
# ## The other splits (the saved models judged again), then both splits pooled

# %%
for split in SPLITS[1:]:
    spread[split] = run_seed_spread(SeedSpreadConfig(seeds=[], rows=cfg.rows, split=split,
                                                     torch_threads=TORCH_THREADS), OUT)
    display(Markdown(markdown(spread[split])))
if {"val", "test"} <= set(SPLITS):
    spread["pooled"] = pooled_spread(cfg, OUT)
    display(Markdown(markdown(spread["pooled"])))
write_run(NAME, config=cfg, metrics={"smoke": SMOKE, **{
    split: {"rows": s["rows"], "models": s["models"], "vs_sft": s.get("vs_sft", {})}
    for split, s in spread.items()}}, smoke=SMOKE)

# %%
first = spread[cfg.split]
assert "ask-sft" in first["models"], "ask-sft was not judged"
assert all(f"ask-grpo-seed{s}" in first["models"] for s in cfg.seeds), first["models"].keys()
assert all(0.0 <= m["hit_at"]["1"] <= 1.0 for m in first["models"].values())
