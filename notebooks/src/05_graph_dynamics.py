# %% [markdown]
# # 05 · Graph dynamics of the Liquid Knowledge Graph
#
# How the memory lives through a long game whose rules drift: it grows, wires co-recalled facts
# together (Hebbian), lets unused edges decay and prunes them, solidifies strong ones, supersedes
# facts that a rule change made wrong, and forgets idle nodes. Each memory variant plays the same
# 1,000-turn games with the scripted writer (`mags_scripted`, an upper bound: the game's
# ground-truth rule is written each turn) and a stand-in decision maker that reads the recalled
# rules perfectly (`RuleReaderLLM`), so every error here is a memory error, neither a writer's
# nor the language model's.
#
# Outputs: `results/05_graph_dynamics/` (`metrics.json`, `traces.jsonl`, figures, the final
# memory in the saved format, `manifest.json`).

# %% tags=["parameters"]
SMOKE = False
SEEDS = [0, 1, 2]
EPISODE_LENGTH = 1000
VARIANTS = ["mags_scripted", "mags_scripted_no_hebbian", "mags_scripted_no_decay",
            "mags_scripted_flat", "mags_scripted_no_contradiction"]
EMBEDDER = "embedded"  # all-MiniLM-L6-v2; "hashing" for a fast fake
K = 3
SNAPSHOT_EVERY = 100

# %%
import json

from mags_lib.evaluation import graph_study_figures as figs
from mags_lib.evaluation.graph_study import GraphStudyConfig, run_graph_study
from mags_lib.game import GameConfig
from mags_lib.graph_html import write_graph_html
from mags_lib.manifest import write_run
from mags_lib.memory import LiquidMemory
from mags_lib.paths import results_dir
from mags_lib.plots import draw_memory, save_figure
from mags_lib.seed import seed_everything

seed_everything(0)
cfg = GraphStudyConfig(variants=VARIANTS, seeds=SEEDS, game=GameConfig(episode_length=EPISODE_LENGTH),
                     embedder=EMBEDDER, k=K, snapshot_every=SNAPSHOT_EVERY, smoke=SMOKE)
out = results_dir("05_graph_dynamics")

# %%
study = run_graph_study(cfg)
print(f"{len(study.config.variants)} variants x {len(study.config.seeds)} seeds in "
      f"{study.seconds:.0f} s")
with open(out / "traces.jsonl", "w") as f:
    for variant, per_seed in study.traces.items():
        for seed, rows in per_seed.items():
            f.write(json.dumps({"variant": variant, "seed": seed, "rows": rows}) + "\n")

# %% [markdown]
# ## Per variant: decisions with perfect reading, recall of the governing rule, graph size
# Means over seeds (± standard deviation). `stale` is the share of decisions whose recall held a
# superseded version of the governing rule.

# %%
print(f"{'variant':<24}{'accuracy':>16}{'recall hit':>16}{'stale':>16}{'nodes':>10}{'edges':>10}")
for variant, s in study.summary.items():
    print(f"{variant:<24}{s['accuracy']:>9.3f} ±{s['accuracy_std']:.3f}"
          f"{s['recall_hit_rate']:>9.3f} ±{s['recall_hit_rate_std']:.3f}"
          f"{s['stale_recall_rate']:>9.3f} ±{s['stale_recall_rate_std']:.3f}"
          f"{s['final_nodes']:>10.0f}{s['final_edges']:>10.0f}")

# %% [markdown]
# ## Growth and churn over the game (rule changes dotted)

# %%
save_figure(figs.graph_size_over_time(study.traces, study.changes), out / "graph_size_over_time.png")

# %%
save_figure(figs.recall_over_time(study.traces, study.changes), out / "recall_over_time.png")

# %%
save_figure(figs.edge_kinds(study.traces), out / "edge_kinds.png")

# %% [markdown]
# ## The memory at the end of the game, and one recall through it
# Orange: semantic facts, blue: episodes, grey: superseded versions (kept, with their time of
# validity), large: the hits of the recall below.

# %%
memory = study.memories[cfg.variants[0]]
last = [r for r in study.traces[cfg.variants[0]][cfg.resolved().seeds[0]] if r.get("query")][-1]
print(f"query: {last['query']!r}\ngoverning rule now: {last['rule']!r}")
hits = memory.recall(last["query"], k=5, learn=False)
for h in hits:
    print(f"{h.score:.3f} {h.block:<9} {h.text}  <- {h.sources[:3]}  path {h.path}")
fig = draw_memory(memory.to_networkx(valid_only=False), highlight=[h.node_id for h in hits],
                  max_nodes=60, title="memory after the game")
save_figure(fig, out / "memory_graph.png")
# the same memory to explore in a browser: colour = block, faded = superseded, red = the hits
write_graph_html(memory, out / "memory_graph.html", highlight=[h.node_id for h in hits],
                 title=f"{cfg.variants[0]} after the game")
turn, mid = study.snapshots[len(study.snapshots) // 2]
write_graph_html(mid, out / f"memory_graph_turn{turn}.html", title=f"turn {turn}")
print("interactive:", out / "memory_graph.html", out / f"memory_graph_turn{turn}.html")

# %% [markdown]
# ## History of a superseded fact, snapshots, and the saved format

# %%
superseded = [n for n, d in memory.graph.nodes(data=True) if d["valid_to"] is not None]
if superseded:
    for h in memory.history(superseded[0]):
        print(h.valid, h.text)
snap = memory.snapshot()
memory.observe("On foggy turns, the test creature eats only the test item.", block="semantic")
print(memory.diff(snap))
memory.rollback(snap)
saved = memory.save(out / "memory")
reloaded = LiquidMemory.load(saved, embedder=memory.embedder)
assert reloaded.graph.number_of_nodes() == memory.graph.number_of_nodes()
print("saved to", saved)

# %% [markdown]
# ## Explore (JupyterLab): recall on the final memory, search, slide through the game's snapshots

# %%
from mags_lib.widgets import explore_memory

explore_memory(memory, frames=[(f"turn {t}", g) for t, g in study.snapshots])

# %%
write_run("05_graph_dynamics", config=cfg.resolved(),
          metrics={"summary": study.summary, "changes": study.changes, "seconds": study.seconds})
full = study.summary[cfg.variants[0]]
assert full["recall_hit_rate"] is not None and 0.0 <= full["recall_hit_rate"] <= 1.0
if "mags_scripted_no_contradiction" in study.summary:
    assert (full["stale_recall_rate"]
            <= study.summary["mags_scripted_no_contradiction"]["stale_recall_rate"])
