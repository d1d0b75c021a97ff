"""Training the ask / write / answer models: SFT cold start, then GRPO, judged by generation.

    from mags_lib.train import SFTStageConfig, load_jsonl, run_sft, run_grpo, generate_and_score
    rows, report = load_jsonl("data/synth/ask.jsonl", task="ask")
    sft = run_sft(SFTStageConfig(name="ask-sft"), rows[:256], rows[256:296])
    grpo = run_grpo(GRPOStageConfig(name="ask-grpo"), rows[:256], rows[256:296], sft.model_dir)

One role end to end (base -> SFT -> GRPO, judged at each stage; `python -m mags_lib.train`):

    report = train_role(RoleTrainConfig(role="ask", smoke=True))

Rows and rewards live in `mags_lib.objectives` (shared with `synth`), checkpoint selection in
`mags_lib.checkpoints` (shared with `export`). Modules: `config` (stage
dataclasses), `backend` (Unsloth or PEFT), `sft`, `grpo`, `evaluate`, `common`,
`roles` (per-role config and sizes), `stages` (`train_role`), `report` (the comparison table),
`figures` (training curves).
Importing this package is cheap: torch, transformers and TRL load inside the functions.
"""

from mags_lib.agents.router import Router, route
from mags_lib.objectives.data import SkipReport, data_hash, load_jsonl, to_dataset, write_jsonl
from mags_lib.objectives.rewards import REWARDS, build_rewards
from mags_lib.train.config import GRPOStageConfig, SFTStageConfig, StageConfig, TrainConfig
from mags_lib.train.evaluate import generate_and_score
from mags_lib.train.grpo import GRPOResult, run_grpo
from mags_lib.train.report import RoleReport
from mags_lib.train.roles import RoleTrainConfig
from mags_lib.train.sft import SFTResult, run_sft
from mags_lib.train.stages import train_role

__all__ = ["GRPOResult", "GRPOStageConfig", "REWARDS", "RoleReport", "RoleTrainConfig", "Router",
           "SFTResult", "SFTStageConfig", "SkipReport", "StageConfig", "TrainConfig",
           "build_rewards", "data_hash", "generate_and_score", "load_jsonl", "route", "run_grpo",
           "run_sft", "to_dataset", "train_role", "write_jsonl"]
