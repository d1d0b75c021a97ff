# %% [markdown]
# # 03 Train the write model, check the router
#
# The **write** model reads an observation and emits an `<engram>` block: `add` for a rule seen
# for the first time, `update` for a changed rule, nothing for a repeat or an irrelevant fact.
# Same recipe as notebook 02: judge the base model on held-out (val) rows, SFT cold start, GRPO
# from the SFT model with format + engram F1 + budget + guardrail rewards, judge again
# (greedy, no grammar; accuracy = soft F1 of the engram ops against the gold ops).
# The rows mix the game and the conversations; `WRITE_SOURCE_REPEATS` can weigh a source up
# (`{"game": 2}`: in the plain mix the game's rows get about half the passes the game-only
# writer had, and the mixed writer lost the game's rule changes on unseen phrasings:
# docs/journal.md, 2026-11-28). Measured once (journal, 2026-11-28 late evening): the game's
# held-out write rows gain (op accuracy 0.95 against 0.80) and the development games in the loop
# (0.865 against 0.785, after drift 0.775 against 0.648), the development personas lose (0.83
# against 0.90, chit-chat stored as facts). On 2026-11-29 it became the default, the
# configuration frozen for notebook 13's test splits: the game's loss was the larger one.
# Since 2026-11-30 the SFT makes one pass over the mix (`WRITE_SFT_STEPS` 512, about 48 minutes
# on 2 cores; 240 steps were under half a pass): on the development personas the loop's writer
# stores the right fact far more often (current facts 29 of 48 against 14), at the price of more
# chit-chat stored as facts; on the game's development phrasings it plays 0.880 against 0.845.
#
# The **router** decides which model handles an observation: a decision goes to ask, then
# answer; anything else to write. It is rule-based (by observation kind); here it is checked
# against what each observation of the val games needs (a choice among legal actions or not).
#
# Optional (`TRAIN_MIXED`): the single-model variant, one model trained on ask + write rows
# together, judged per task next to the separate models (ask from notebook 02's saved table).
# About 25 more minutes on a 2-core CPU, so off by default.

# %% tags=["parameters"]
SMOKE = False  # True: a one-minute run of the same code (sizes shrunk)
SEED = 0
WRITE_SFT_STEPS = 550  # one pass over the mix at batch 8 (~5 s a step); 240 left the loss falling
WRITE_GRPO_STEPS = 10  # ~10 s a step (4 completions of up to 48 tokens)
WRITE_DECISION_WEIGHT = 10.0  # op token's SFT loss weight; at 1 the op is the seed's prior
WRITE_SOURCE_REPEATS = {"game": 2}  # the game's write rows seen twice ({}: the plain mix; a trade)
EVAL_ROWS = 40  # val rows judged per stage (the same rows for SFT and SFT+GRPO)
BASE_EVAL_ROWS = 20  # the base model: the first 20 of them (it writes 48 tokens on each)
TORCH_THREADS = None  # None: both cores (48 min measured for the full run); 1 on a shared machine
TRAIN_MIXED = False  # also train one model on ask + write rows (the single-model variant)
ROUTER_TRAIN_GAMES = 10  # training games whose observations fit the text-only router
MIXED_SFT_STEPS = 60
MIXED_GRPO_STEPS = 30
HELDOUT_PER_OP = 20  # write rows per gold op in the held-out phrasings (judged, never trained on)

# %%
import json
from dataclasses import replace

import pandas as pd
from IPython.display import display

from mags_lib.agents.router import router_accuracy, text_only_routers
from mags_lib.embed import HashingEmbedder, MemoEmbedder, default_embedder
from mags_lib.game.senseless import game_observations
from mags_lib.manifest import write_run
from mags_lib.paths import RESULTS_DIR, results_dir
from mags_lib.plots import save_figure
from mags_lib.train.figures import plot_role_training
from mags_lib.train.report import compare_single_model
from mags_lib.train.roles import RoleTrainConfig
from mags_lib.train.stages import load_role_data, train_role

NAME = "03_train_write_model"
OUT = results_dir(NAME)
run = dict(smoke=SMOKE, seed=SEED, eval_rows=EVAL_ROWS, torch_threads=TORCH_THREADS)
write_cfg = RoleTrainConfig(role="write", base_eval_rows=BASE_EVAL_ROWS,
                            source_repeats=WRITE_SOURCE_REPEATS, **run).with_steps(
    WRITE_SFT_STEPS, WRITE_GRPO_STEPS)
write_cfg.sft = replace(write_cfg.sft, decision_token_weight=WRITE_DECISION_WEIGHT)
mixed_cfg = RoleTrainConfig(role="mixed", **run).with_steps(MIXED_SFT_STEPS, MIXED_GRPO_STEPS)

# %% [markdown]
# ## Write model: base -> SFT -> SFT+GRPO

# %%
write = train_role(write_cfg)
write.save(OUT)
display(pd.DataFrame(write.table()))
save_figure(plot_role_training(write), OUT / "write_curves.png")
print(write.samples_text(3))

# %% [markdown]
# ## The op it chooses, on text it was not trained on
#
# The soft F1 pays 1.0 for two empty blocks, so on val rows that are mostly "none" a model that
# never stores scores well: each stage is also judged by the discrete choice, the op x op
# confusion (gold op -> chosen op; "bad" = no complete block), and the final stage is chosen by
# its op accuracy balanced over add / update / none (`checkpoints.stage_score`).
# First on the val rows (training phrasings, held-out games), then on write rows built here from
# the test split's games on the varied surface in the **held-out** phrasings, with the closed
# loop's own write messages (never saved as a dataset). Targets (issue 20): op accuracy >= 0.90,
# F1 >= 0.85, validity >= 95% unconstrained. "text_exact": of the rows whose gold stores a fact
# (add / update), the share where the output stores exactly that sentence (case and punctuation
# aside): F1 pays "On frosty turns, only the stone takes only the stone." most of its credit.
# "facts_dropped": of those rows, the share where the output stores nothing. Op accuracy counts
# every error alike, but in play a dropped change leaves the old rule valid, where an update
# written as add is superseded by the memory's detector anyway (journal 2026-11-27).

# %%
from mags_lib.synth import SynthConfig
from mags_lib.synth.chains import heldout_write_rows
from mags_lib.train.evaluate import generate_and_score

synth_cfg = SynthConfig(smoke=SMOKE).resolved()  # notebook 01's games (its split seeds)
heldout_rows = heldout_write_rows(synth_cfg.split_seeds()["test"], synth_cfg,
                                  3 if SMOKE else HELDOUT_PER_OP, SEED)
heldout = {}
for stage in ("sft", "grpo"):
    judged = generate_and_score(str(write_cfg.model_dir(stage)), heldout_rows, "write",
                                max_tokens=write_cfg.eval_max_tokens, n_samples=12)
    heldout[stage] = {k: judged.get(k) for k in ("n", "adherence", "accuracy", "op_accuracy",
                                                 "op_confusion", "op_dropped", "fact_exact",
                                                 "samples")}
ops_table = []
for split, by_stage in (("val (training phrasings)",
                         {s: write.stages[s].generation["write"] for s in ("base", "sft", "grpo")}),
                        ("held-out phrasings", heldout)):
    for stage, g in by_stage.items():
        c = g.get("op_confusion") or {}
        ops_table.append({"rows": split, "stage": stage, "n": g["n"],
                          "op_accuracy": g.get("op_accuracy"), "F1": g["accuracy"],
                          "text_exact": g.get("fact_exact"),
                          "facts_dropped": g.get("op_dropped"), "adherence": g["adherence"],
                          **{f"{want} -> {got}": c.get(want, {}).get(got, 0)
                             for want in ("add", "update", "none")
                             for got in ("add", "update", "none", "bad")}})
display(pd.DataFrame(ops_table))
for s in heldout[write.selected["stage"]]["samples"]:
    print(repr(s["prompt"][-160:]), "\n   ->", repr(s["output"]), s["task_score"])

# %% [markdown]
# ## Router check: the observations of the val games
#
# Every observation of the games whose rows are in the val split (replayed from their
# `game_seed`), routed by the rules; the truth is what the observation needs. The closed loop's
# router reads whether an observation offers legal actions, so it is exact by construction.
# Two routers that read only the text, for sources without an action list, judged on the same
# games in the *held-out* phrasings of the varied surface: the chat's question rule, and a
# logistic regression on MiniLM embeddings fit on the training games' observations (training
# phrasings).

# %%
val_rows = load_role_data(write_cfg)[0]["val"]
observations = game_observations([r["game_seed"] for r in val_rows])
router = router_accuracy(observations)
print(json.dumps(router, indent=2))
train_seeds = sorted({r["game_seed"] for r in load_role_data(write_cfg)[0]["train"]
                      if r["game_seed"] >= 0})[:ROUTER_TRAIN_GAMES]
text_routers = text_only_routers(
    game_observations(train_seeds, surface="varied", phrasings="train"),
    game_observations([r["game_seed"] for r in val_rows], surface="varied", phrasings="heldout"),
    MemoEmbedder(HashingEmbedder() if SMOKE else default_embedder()))
display(pd.DataFrame([{"router": name, "n": r["n"], "accuracy": r["accuracy"],
                       **{kind: v["accuracy"] for kind, v in r["by_kind"].items()}}
                      for name, r in text_routers.items()]))

# %% [markdown]
# ## Optional: one model for ask + write (the single-model variant)

# %%
comparison = None
if TRAIN_MIXED:
    mixed = train_role(mixed_cfg)
    mixed.save(OUT)
    save_figure(plot_role_training(mixed), OUT / "mixed_curves.png")
    ask_table = RESULTS_DIR / "02_train_ask_model" / "ask_table.json"
    separate = {"write": write.table(),
                "ask": json.loads(ask_table.read_text()) if ask_table.is_file() else []}
    comparison = compare_single_model(mixed, separate)
    display(pd.DataFrame(comparison))
    print(mixed.samples_text(3))

# %%
metrics = {"smoke": SMOKE, "write": write.metrics(), "router": router,
           "write_ops": ops_table,
           "write_heldout": {s: {k: v for k, v in h.items() if k != "samples"}
                             for s, h in heldout.items()},
           "text_routers": text_routers,
           "mixed": mixed.metrics() if TRAIN_MIXED else None, "single_vs_separate": comparison}
write_run(NAME, config={"write": write_cfg.to_dict(),
                        "mixed": mixed_cfg.to_dict() if TRAIN_MIXED else None},
          metrics=metrics, smoke=SMOKE)
display(pd.DataFrame([{"role": "write", **write.targets()["write"]}]))
print("final model:", write.selected)
print("test split, final model:", write.metrics().get("test", write.test_note))

# %%
write_by_stage = {s: write.stages[s].generation["write"] for s in ("base", "sft", "grpo")}
assert {r["gold"]["op"] for r in heldout_rows} == {"add", "update", "none"}, \
    "the held-out write rows lack an op"
assert all(r["gold"]["phrasings"] == "heldout" for r in heldout_rows)
assert router["accuracy"] == 1.0, f"the router sends observations astray: {router['errors']}"
assert write.stages["sft"].lora_max_change > 0, "SFT did not move the adapter weights"
assert write_by_stage["sft"]["format_mean"] >= write_by_stage["base"]["format_mean"], \
    "SFT made the write model's format worse than the base model's"
if not SMOKE:
    assert write_by_stage["sft"]["adherence"] > write_by_stage["base"]["adherence"], write_by_stage
    assert write_by_stage["grpo"]["adherence"] >= 0.9, f"write adherence {write_by_stage['grpo']}"
