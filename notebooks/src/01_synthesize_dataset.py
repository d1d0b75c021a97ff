# %% [markdown]
# # 01 · Synthesize the ask / write / answer datasets
#
# Training rows for the three small models, built from the senseless game's per-turn ground
# truth ("chains of memory") and widened by few-shot LLM rewrites that are kept only when they
# still agree with the truth. Splits are by game seed. Everything is in `mags_lib.synth`;
# this notebook sets parameters, runs it, saves and plots.
#
# Outputs: `data/synth/{ask,write,answer}/{train,val,test}.jsonl` and
# `results/01_synthesize_dataset/` (config, metrics, manifest, figures).

# %% tags=["parameters"]
SMOKE = False  # shrink every size for a quick end-to-end check (same code path)
SEED = 0  # phrasing, sampling and expansion seed
EXPAND = True  # few-shot LLM expansion on / off
EXPANSION_LLM = "embedded"  # SmolLM2-135M GGUF; or a .gguf path / checkpoint dir
N_EXPANSIONS = 20  # LLM calls per expanded task (ask, write)
EMBEDDER = "hashing"  # near-duplicate embedder: "hashing" (bag of words) or "embedded" (MiniLM)
NEAR_DUP_THRESHOLD = 0.95  # cosine at which two rows count as near-duplicates
MAX_NEAR_DUP_RATE = 0.05  # sanity bound on the final train rows
IMPERFECT_MEMORY_SHARE = 0.0  # write rows showing a missing / stale / garbled rule (0.3 tried)
REFRAME_UPDATE_SHARE = 0.0  # rule changes re-framed as first sights: update read from memory
WRITER_FRAME_SHARE = 0.0  # write rows in frames only training text uses (0.5: not adopted)
PERSONA_CUE_PHRASES = False  # training personas say 'instead' for every change (with frames 0.5: not adopted)
WRITER_CONTRAST_SHARE = 0.0  # a look-alike of a rule beside announcements, for distractors (not judged yet)
PERSONA_CONTRAST_SHARE = 0.0  # a look-alike of a person's fact beside it, for small talk (not judged yet)
N_EXAMPLES = 1  # example rows printed per task

# %%
import json
import time

from mags_lib.manifest import write_run
from mags_lib.objectives.data import load_jsonl
from mags_lib.plots import save_figure
from mags_lib.seed import seed_everything
from mags_lib.synth import SPLITS, SynthConfig, synthesize
from mags_lib.synth.figures import diversity_figure, nn_cosine_figure, rows_figure

seed_everything(SEED)
cfg = SynthConfig(seed=SEED, expand=EXPAND, expansion_llm=EXPANSION_LLM,
                  n_expansions=N_EXPANSIONS, embedder=EMBEDDER,
                  near_dup_threshold=NEAR_DUP_THRESHOLD,
                  imperfect_memory_share=IMPERFECT_MEMORY_SHARE,
                  reframe_update_share=REFRAME_UPDATE_SHARE,
                  writer_frame_share=WRITER_FRAME_SHARE,
                  persona_cue_phrases=PERSONA_CUE_PHRASES,
                  writer_contrast_share=WRITER_CONTRAST_SHARE,
                  persona_contrast_share=PERSONA_CONTRAST_SHARE, smoke=SMOKE).resolved()
print(json.dumps(cfg.split_seeds(), default=str)[:200], "...")

# %% [markdown]
# ## Build: games → chain rows → dedupe, cap, verify → expansion → JSONL

# %%
t0 = time.perf_counter()
result = synthesize(cfg)
wall = time.perf_counter() - t0
metrics = {**result.metrics(), "wall_seconds": round(wall, 1)}
out = write_run("01_synthesize_dataset", config=cfg, metrics=metrics, data=result.paths)
print(f"{wall:.1f} s; results in {out}")
print(json.dumps(result.counts, indent=1))
print("skipped candidates:", json.dumps(result.skips, indent=1))

# %% [markdown]
# ## Expansion: what the LLM wrote, and why rewrites were rejected

# %%
report = result.expansion.to_dict()
print(f"tried {report['tried']}, kept {report['kept']}, rejected {report['rejected']} "
      f"({report['cached']} answers from the cache, {report['seconds']} s)")
print(json.dumps(report["reasons"], indent=1))
for ex in report["examples"]:
    print(f"[{ex['task']}/{ex['mode']}] {ex['outcome']}: {ex['text']!r}")

# %% [markdown]
# ## Figures

# %%
fig = rows_figure(result.counts)
save_figure(fig, out / "rows_per_task_split.png")

# %%
fig = diversity_figure(result.diversity)
save_figure(fig, out / "diversity_by_origin.png")
print(json.dumps({t: {g: {k: round(v, 3) for k, v in d.items()} for g, d in per.items()}
                  for t, per in result.diversity.items()}, indent=1))

# %%
fig = nn_cosine_figure(result.nn_cosines, cfg.near_dup_threshold)
save_figure(fig, out / "nearest_neighbour_cosine.png")

# %% [markdown]
# ## Rows by source: the game, the persona conversations, LoCoMo's training conversations

# %%
from collections import Counter

for task, per_split in result.rows.items():
    print(task, {split: dict(Counter(r["gold"].get("source", "game") for r in rows))
                 for split, rows in per_split.items()})

# %% [markdown]
# ## Example rows (train)

# %%
for task, per_split in result.rows.items():
    for row in per_split["train"][:N_EXAMPLES]:
        print(f"===== {task} (game {row['game_seed']}, origin {row['gold']['origin']})")
        for message in row["prompt"]:
            print(f"--- {message['role']}:\n{message['content']}")
        print(f"--- completion:\n{row['completion'][-1]['content']}\n")

# %% [markdown]
# ## Sanity checks: every file reloads cleanly, splits are disjoint by game, few near-duplicates

# %%
reloaded = {t: {s: load_jsonl(p, t) for s, p in per.items()} for t, per in result.paths.items()}
# a row's seed is its game's, persona's or LoCoMo conversation's number: disjoint per source
seeds_of = {t: {s: {(r["gold"].get("source", "game"), r["game_seed"]) for r in rows}
                for s, (rows, _) in per.items()} for t, per in reloaded.items()}
assert all(len(rows) > 0 and skips.skipped == 0
           for per in reloaded.values() for rows, skips in per.values()), "empty or bad split"
assert all(not (seeds_of[t][a] & seeds_of[t][b]) for t in seeds_of
           for a in SPLITS for b in SPLITS if a < b), "a game appears in two splits"
assert all(d["final_train"]["near_dup_rate_full"] <= MAX_NEAR_DUP_RATE
           for d in result.diversity.values()), "too many near-duplicates"
print("ok:", {t: sum(len(rows) for rows, _ in per.values()) for t, per in reloaded.items()})
