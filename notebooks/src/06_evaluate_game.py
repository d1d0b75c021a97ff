# %% [markdown]
# # 06 · Evaluate MAGS on the senseless game
#
# Every agent plays the same seeded games of nonsensical rules that change during play. All agents
# share one LLM and one grammar-constrained decision prompt; they differ only in memory: none
# (bare), the whole history cut at a context window (full context), facts indexed once (static
# RAG), the Liquid Knowledge Graph (MAGS and its ablations), and the true current rules (oracle).
#
# **Read the validity check first**: if the oracle is not clearly better than the bare model, the
# evaluation cannot tell memories apart and no other number below means anything.
#
# Outputs: `results/06_evaluate_game/` (`metrics.json`, `games.jsonl`, `explain/` with the
# recalled nodes and their provenance for every decision, figures, `manifest.json`).

# %%
SMOKE = False
SEEDS = [0, 1, 2]
EPISODE_LENGTH = 200
AGENTS = ["bare", "oracle", "mags", "static_rag", "full_context", "mags_no_hebbian",
          "mags_no_decay", "mags_flat", "mags_no_contradiction"]
LLM_MODEL = "embedded"  # or a .gguf from notebook 04, e.g. "../models/gguf/answer-grpo-q8_0.gguf"
EMBEDDER = "embedded"   # all-MiniLM-L6-v2; "hashing" for a fast fake
K = 3
RESUME = True
ANSWER_MODEL = "auto"  # the trained answer model: "auto" finds notebook 04's GGUF; None skips
ANSWER_AGENTS = ["bare", "oracle", "mags"]

# %%
import pandas as pd
from IPython.display import display

from mags_lib.evaluation import EvalConfig, ablation_markdown, figures, run_eval
from mags_lib.evaluation.answer_model import answer_model_settings, answer_model_study, find_gguf
from mags_lib.train.selection import final_model_name
from mags_lib.game import GameConfig
from mags_lib.llm import LLMConfig
from mags_lib.manifest import manifest, write_json
from mags_lib.paths import results_dir
from mags_lib.plots import save_figure
from mags_lib.seed import seed_everything

seed_everything(0)
cfg = EvalConfig(agents=AGENTS, seeds=SEEDS, game=GameConfig(episode_length=EPISODE_LENGTH),
                 llm=LLMConfig(model=LLM_MODEL, n_ctx=1024), embedder=EMBEDDER, k=K,
                 smoke=SMOKE, smoke_seeds=1, resume=RESUME)
out = results_dir(cfg.output)
cfg.resolved()

# %% [markdown]
# ## Play
# Games already in `games.jsonl` under the same configuration are kept (a stopped run resumes).

# %%
result = run_eval(cfg)
summary = result.summary
print(f"{len(result.games)} games in {result.seconds:.0f} s")

# %% [markdown]
# ## Can this evaluation tell memories apart?

# %%
validity = summary["validity"]
print(f"oracle - bare = {summary['oracle_vs_bare_gap']:+.3f}  valid: {summary['evaluation_valid']}")
validity

# %% [markdown]
# ## Accuracy per agent (95% Wilson intervals; seeds pooled, spread over seeds in metrics.json)

# %%
for name, acc in summary["agents"].items():
    spread = acc["seeds"]
    print(f"{name:<24} {acc['accuracy']:.3f}  [{acc['ci_low']:.3f}, {acc['ci_high']:.3f}]  "
          f"per-seed mean {spread['mean']:.3f} ± {spread['std']:.3f}")
save_figure(figures.accuracy_bars(summary), out / "accuracy_by_agent.png")

# %% [markdown]
# ## Accuracy over time, rule changes marked

# %%
save_figure(figures.accuracy_over_time(result.games), out / "accuracy_over_time.png")

# %% [markdown]
# ## Cost per decision against turn: full context grows, memory agents stay flat

# %%
save_figure(figures.cost_per_decision(result.games), out / "cost_per_decision.png")

# %% [markdown]
# ## Ablations

# %%
table = ablation_markdown(summary["ablation"])
(out / "ablation.md").write_text(table + "\n")
save_figure(figures.ablation_figure(summary), out / "ablations.png")
print(table)

# %% [markdown]
# ## Targets of the design, checked on this run

# %%
acc = dict(summary["accuracy"])
recent = {name: a["adaptability"]["recent_accuracy"] for name, a in summary["agents"].items()}
targets = {
    "mags_over_bare_ratio": acc["mags"] / max(acc["bare"], 1e-9)
    if "mags" in acc and "bare" in acc else None,
    "mags_over_bare_ratio_target": 1.5,
    "mags_recent_minus_static_rag_recent": (recent["mags"] - recent["static_rag"])
    if recent.get("mags") is not None and recent.get("static_rag") is not None else None,
    "mags_relative_gap_to_oracle": (acc["oracle"] - acc["mags"]) / acc["oracle"]
    if "mags" in acc and "oracle" in acc else None,
    "mags_relative_gap_to_oracle_target": 0.10,
}
write_json(out / "targets.json", targets)
write_json(out / "manifest.json", manifest(cfg.resolved(), seconds=result.seconds,
                                           notebook="06_evaluate_game"))
targets

# %% [markdown]
# ## Does the trained answer model use memory better? (oracle - bare, per decision LLM)
# The same games, with the decision LLM and prompt format changed: the base model and the answer
# model trained in notebook 02 (exported by 04; it answers `<answer>item</answer>`), each as a
# completion and as a chat. The base model in completion format is the main run above.

# %%
answer_gguf = find_gguf(final_model_name("answer")) if ANSWER_MODEL == "auto" else ANSWER_MODEL
if answer_gguf is None:
    print("no trained answer model (models/gguf/answer-{sft,grpo}-*.gguf): run notebooks 02 and 04; "
          "comparing the base model's prompt formats only")
settings = answer_model_settings(answer_gguf, base=LLM_MODEL)
study = answer_model_study(cfg, settings, agents=tuple(ANSWER_AGENTS),
                           reuse={"base-completion": result})
write_json(out / "answer_model.json", study.to_dict())
display(pd.DataFrame(study.gaps))
display(pd.DataFrame(study.table).pivot(index="agent", columns="setting", values="accuracy"))

# %% [markdown]
# ## One decision, explained: what MAGS recalled and where it came from

# %%
mags_games = [g for g in result.games if g.agent == "mags"]
explain_file = out / "explain" / f"mags_{mags_games[0].seed}.jsonl" if mags_games else None
print(explain_file.read_text().splitlines()[-1][:1500] if explain_file and explain_file.exists()
      else "no MAGS game in this run")

# %%
assert summary["n_games"] == len(cfg.resolved().seeds) * len(AGENTS), summary["n_games"]
assert all(0.0 <= a <= 1.0 for a in summary["accuracy"].values())
assert (out / "metrics.json").exists() and (out / "accuracy_over_time.png").exists()
assert len(study.gaps) == len(settings) and all(g["oracle_minus_bare"] is not None
                                                for g in study.gaps), study.gaps
