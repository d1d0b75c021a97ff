"""One-off, kept as the record of what was done: stamp the six models notebook 08 trained on
2026-11-26 11:04-12:38, before `objective.json` stamps existed, so that its resume reuses them.

    python tools/stamp_objective_models.py            # checks only
    python tools/stamp_objective_models.py --write    # stamps the models that pass

A model is stamped only when its manifest's stage config equals today's `objective_stage` for
notebook 08's settings of that run (f1 and outcome, 2 prompts a step, 100 mined rows) and its
weights are newer than write-sft's (write-sft and the write rows were last written at 04:48,
the models at 11:13-12:00). Not for general use: a new run stamps its own models.
"""
import dataclasses
import json
import os
import sys

from mags_lib.models import file_digest
from mags_lib.objectives.data import data_hash
from mags_lib.paths import MODELS_DIR
from mags_lib.train import write_objectives as wo
from mags_lib.train.objective_study import STAMP
from mags_lib.train.stages import load_role_data

cfg = wo.WriteObjectivesConfig(objectives=["f1", "outcome"], grpo_prompts=2, mine=100)
rows, _ = load_role_data(cfg.role())
sft = MODELS_DIR / "write-sft" / "model.safetensors"
base = {"base_digest": file_digest(sft), "train_hash": data_hash(rows["train"])}
write = "--write" in sys.argv
for o in cfg.objectives:
    for seed in cfg.seeds:
        d = wo.objective_dir(o, seed)
        stage = wo.objective_stage(cfg.role(seed), o, seed, cfg)
        now = json.loads(json.dumps(dataclasses.asdict(stage), default=str))
        man = json.loads((d / "manifest.json").read_text())
        diff = {k: (man["config"].get(k), v) for k, v in now.items() if man["config"].get(k) != v}
        older = os.path.getmtime(sft) < os.path.getmtime(d / "model.safetensors")
        print(d.name, "config differs:", diff, "sft older:", older)
        if write and not diff and older:
            (d / STAMP).write_text(json.dumps({**base, "stage": now}, indent=2))
            print("  stamped")
