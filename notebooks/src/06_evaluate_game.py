# %% [markdown]
# # 06 · Evaluate MAGS on the senseless game: the closed loop
#
# Every agent plays the same seeded games of nonsensical rules that change during play. All agents
# share one decision LLM and one grammar-constrained decision prompt (the observation as it came,
# a generic answer stem); they differ only in memory:
#
# * **`mags`: MAGS itself.** Its own trained models drive the memory every turn: the write model
#   (notebook 03) reads each observation with what memory holds about it and emits `<engram>`
#   actions; the ask model (notebook 02) emits `<recall>` queries at each decision; the memory's
#   own detectors decide what supersedes what. No game structure is given to it.
# * `mags_prompted`: the same loop with the untrained base model and few-shot prompts.
# * `mags_consolidated`: `mags` whose answer prompt gets each query's `recall_context` items
#   (hits connected in the recalled subgraph merged into one line) instead of single hits.
# * `mags_working`: `mags` whose answer prompt also shows the recent turn from the working-memory
#   block most similar to an ask query (in place of the weakest recalled line).
# * `mags_verbatim`: `mags` without its write model: every information turn is added to memory as
#   it came, and the memory's detectors alone decide what it supersedes (what the writer adds).
# * baselines: `bare` (no memory), `full_context` (recent turns in a 512-token window),
#   `static_rag` (raw observations, the same embedder and hybrid retriever as MAGS, never updated).
# * **upper bounds, not MAGS**: `mags_scripted` (perfect writer, game structure given: the game's
#   ground-truth rule is written each turn) and `oracle` (the rules in force).
#
# Two surfaces: `varied` (rules, changes, questions and feedback in **held-out phrasings** that no
# training row contains; the headline) and `fixed` (one template; kept for continuity, with the
# ablations of the scripted memory).
#
# **Read the validity check first**: if the oracle is not clearly better than the bare model, the
# evaluation cannot tell memories apart and no other number below means anything.
#
# Outputs: `results/06_evaluate_game/` (`headline.json`, `targets.json`, `manifest.json`, and per
# surface `<surface>/metrics.json`, `games.jsonl`, `explain/` with every decision's recalled
# nodes, the ask model's queries and the last write, figures).

# %% tags=["parameters"]
SMOKE = False
SEEDS = [0, 1, 2]
EPISODE_LENGTH = 200
AGENTS = ["bare", "oracle", "mags", "mags_scripted", "static_rag", "full_context"]
SURFACES = ["varied", "fixed"]  # varied: held-out phrasings only
VARIED_ONLY = ["mags_prompted",  # the base model writes ~1-2 s a turn: played where it counts
               "mags_consolidated",  # MAGS reading consolidated recall contexts, not hits
               "mags_working",  # MAGS with a recent turn from the working-memory block
               "mags_verbatim"]  # MAGS without its write model: every turn stored as it came
ABLATIONS = ["mags_scripted_no_hebbian", "mags_scripted_no_decay", "mags_scripted_flat",
             "mags_scripted_no_contradiction"]  # played on the fixed surface
DECISION_LLM = "auto"  # the trained answer model (notebook 04's GGUF); "embedded": the base model
PROMPT_FORMAT = "completion"
DEBIAS_ORDER = True  # each choice scored over every order of the options (False: one greedy answer)
ROLE_MODELS = {"ask": "auto", "write": "auto"}  # the closed loop's models; "auto": notebook 04's
EMBEDDER = "embedded"  # all-MiniLM-L6-v2; "hashing" for a fast fake
K = 3
RESUME = True
ANSWER_STUDY = True  # base vs trained decision LLM, both prompt formats (bare and oracle)

# %%
import pandas as pd
from IPython.display import Markdown, display

from mags_lib.evaluation import EvalConfig, ablation_markdown, figures, run_eval
from mags_lib.evaluation.answer_model import (
    answer_model_settings,
    answer_model_study,
    decision_llm_settings,
)
from mags_lib.evaluation.headline import closed_loop_targets, headline_markdown, headline_rows
from mags_lib.game import GameConfig
from mags_lib.llm import LLMConfig
from mags_lib.manifest import manifest, write_json
from mags_lib.paths import results_dir
from mags_lib.plots import save_figure
from mags_lib.seed import seed_everything

seed_everything(0)
decision = decision_llm_settings(DECISION_LLM, PROMPT_FORMAT)
print(decision["note"])
out = results_dir("06_evaluate_game")
configs = {
    surface: EvalConfig(
        agents=AGENTS + (ABLATIONS if surface == "fixed" else VARIED_ONLY), seeds=SEEDS,
        game=GameConfig(episode_length=EPISODE_LENGTH, surface=surface, phrasings="heldout"),
        llm=LLMConfig(model=decision["model"], n_ctx=1024), answer_tags=decision["answer_tags"],
        prompt_format=PROMPT_FORMAT, debias_order=DEBIAS_ORDER, models=dict(ROLE_MODELS),
        embedder=EMBEDDER, k=K,
        smoke=SMOKE, smoke_seeds=1, resume=RESUME, output=f"06_evaluate_game/{surface}")
    for surface in SURFACES}

# %% [markdown]
# ## Play
# Games already in `games.jsonl` under the same configuration are kept (a stopped run resumes).

# %%
results = {surface: run_eval(cfg) for surface, cfg in configs.items()}
summaries = {surface: r.summary for surface, r in results.items()}
for surface, r in results.items():
    print(f"{surface}: {len(r.games)} games in {r.seconds:.0f} s")

# %% [markdown]
# ## Can this evaluation tell memories apart?

# %%
for surface, s in summaries.items():
    print(f"{surface}: oracle - bare = {s['oracle_vs_bare_gap']:+.3f}  "
          f"valid: {s['evaluation_valid']}  ({s['validity']['note']})")

# %% [markdown]
# ## Headline: accuracy, after drift, memory quality (95% Wilson intervals, seeds pooled)
# "after drift": decisions about a rule that has changed at least once. "rule held valid": at
# decision time a valid memory node states the governing rule's current version. "stored rule
# right" (model writers): of the turns stating a rule where the writer stored a sentence, the
# share whose sentence names that rule's creature, condition and item (write validity counts
# blocks that parse, whatever they say).

# %%
rows = headline_rows(summaries)
write_json(out / "headline.json", rows)
display(Markdown(headline_markdown(rows)))

# %% [markdown]
# ## Targets of the closed loop, on the varied held-out surface

# %%
targets = {surface: closed_loop_targets(s) for surface, s in summaries.items()}
write_json(out / "targets.json", targets)
targets.get("varied", targets)

# %% [markdown]
# ## What the closed loop did: write and ask validity, operations, the router's confusion
# The router sends a turn with legal actions to ask + answer and any other turn to write; rows
# are the game's turn kinds (ground truth, used only to score), columns the roles it chose.

# %%
for surface, s in summaries.items():
    for name in ("mags", "mags_consolidated", "mags_working", "mags_prompted"):
        loop = (s["agents"].get(name) or {}).get("loop")
        if loop:
            print(f"{surface} / {name}: write validity {loop['write_validity']}, ask validity "
                  f"{loop['ask_validity']}, ops " + str({k: v for k, v in loop.items()
                                                        if k.startswith("op_")})
                  + f", stored rule right {loop.get('rule_stores_exact')} of "
                    f"{loop.get('rule_stores')}")
            display(pd.DataFrame(loop["routes"]).T.fillna(0).astype(int))

# %% [markdown]
# ## Accuracy per agent, over time, and cost per decision

# %%
for surface, r in results.items():
    sub = out / surface
    save_figure(figures.accuracy_bars(r.summary), sub / "accuracy_by_agent.png")
    save_figure(figures.accuracy_over_time(r.games), sub / "accuracy_over_time.png")
    save_figure(figures.cost_per_decision(r.games), sub / "cost_per_decision.png")

# %% [markdown]
# ## Ablations of the scripted memory (fixed surface)

# %%
if "fixed" in summaries:
    table = ablation_markdown(summaries["fixed"]["ablation"])
    (out / "fixed" / "ablation.md").write_text(table + "\n")
    save_figure(figures.ablation_figure(summaries["fixed"]), out / "fixed" / "ablations.png")
    print(table)

# %% [markdown]
# ## Which decision LLM can use a memory? (oracle - bare per decision LLM and prompt format)
# The base model and the answer model trained in notebook 02 (exported by 04; it answers
# `<answer>item</answer>`), each as a completion and as a chat, on the varied surface.

# %%
study = None
if ANSWER_STUDY:
    main = SURFACES[0]
    settings = answer_model_settings(decision["trained_path"], base="embedded")
    reuse = {decision["label"]: results[main]} if decision["label"] else {}
    study = answer_model_study(configs[main], settings, agents=("bare", "oracle"), reuse=reuse)
    write_json(out / "answer_model.json", study.to_dict())
    display(pd.DataFrame(study.gaps))

# %% [markdown]
# ## One decision of the closed loop, explained: the ask model's queries, what was recalled
# (with provenance), the last write

# %%
explain = out / SURFACES[0] / "explain" / f"mags_{configs[SURFACES[0]].resolved().seeds[0]}.jsonl"
print(explain.read_text().splitlines()[-1][:2000] if explain.exists() else "no MAGS game")

# %%
write_json(out / "metrics.json", {
    "validity": {s: {"oracle_vs_bare_gap": m["oracle_vs_bare_gap"],
                     "evaluation_valid": m["evaluation_valid"]} for s, m in summaries.items()},
    "headline": rows, "targets": targets,
    "answer_model_gaps": study.gaps if study else None})
write_json(out / "manifest.json", manifest({s: c.resolved().to_dict() for s, c in configs.items()},
                                           seconds=sum(r.seconds for r in results.values()),
                                           notebook="06_evaluate_game"))
for surface, cfg in configs.items():
    assert summaries[surface]["n_games"] == len(cfg.resolved().seeds) * len(cfg.agents)
assert all(0.0 <= r["accuracy"] <= 1.0 for r in rows)
assert "mags" not in AGENTS or all(r["write_validity"] is not None for r in rows
                                   if r["agent"] == "mags")
assert (out / "headline.json").exists() and (out / SURFACES[0] / "metrics.json").exists()
