"""An interrupted training run resumes from its newest checkpoint, and only the same run does.

The first tests check `train/resume.py`'s decisions on folders alone; the slow ones stop a real
SFT and GRPO run of the embedded model part-way and start it again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import pytest

from mags_lib.train import GRPOStageConfig, SFTStageConfig
from mags_lib.train.resume import (
    RUN_FILE,
    checkpoints,
    clear,
    model_stamp,
    resume_point,
    run_fingerprint,
)


def fake_checkpoint(trainer_dir, step: int, complete: bool = True):
    path = trainer_dir / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "adapter_model.safetensors").write_bytes(b"x")
    if complete:
        (path / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return path


def test_the_fingerprint_follows_what_is_trained_not_how_the_run_is_carried_out():
    cfg = SFTStageConfig()
    fp = run_fingerprint(cfg, "rows-a")
    same = replace(cfg, resume=False, save_steps=3, torch_threads=1, logging_steps=7,
                   eval_max_tokens=5, max_eval_rows=2, eval_generate=False)
    assert run_fingerprint(same, "rows-a") == fp
    assert run_fingerprint(replace(cfg, learning_rate=1e-4), "rows-a") != fp
    assert run_fingerprint(replace(cfg, max_steps=9), "rows-a") != fp
    assert run_fingerprint(cfg, "rows-b") != fp
    assert run_fingerprint(cfg, "rows-a", start_from="sft:1") != fp
    assert run_fingerprint(GRPOStageConfig(), "rows-a") != fp


def test_an_edit_of_the_training_code_changes_the_fingerprint(tmp_path):
    from mags_lib.train.resume import training_code_digest

    pkg = tmp_path / "mags_lib"
    files = {
        "__init__.py": "",
        "train/__init__.py": "",
        "train/sft.py": "from mags_lib.objectives.rows import make\nfrom mags_lib.memory import m\n",
        "train/grpo.py": "def f():\n    from mags_lib.actions import parse\n",
        "train/study.py": "from mags_lib.train.sft import x\n",  # beside the trainers
        "objectives/__init__.py": "", "objectives/rows.py": "x = 1\n",
        "objectives/unused.py": "x = 1\n",
        "actions/__init__.py": "", "actions/parse.py": "x = 1\n",
        "actions/grammars/write.gbnf": "root ::= \"a\"\n",
        "memory/__init__.py": "", "memory/m.py": "y = 1\n",
    }
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    before = training_code_digest(pkg)
    (pkg / "memory" / "m.py").write_text("y = 2\n")  # loaded, but not training code
    (pkg / "train" / "study.py").write_text("y = 2\n")  # training's folder, not loaded by it
    (pkg / "objectives" / "unused.py").write_text("y = 2\n")
    (pkg / "train" / "new_study.py").write_text("z = 3\n")
    assert training_code_digest(pkg) == before
    (pkg / "objectives" / "rows.py").write_text('"""What x is."""\n\nx = (1)  # a comment\n')
    assert training_code_digest(pkg) == before  # layout, comments, docstrings
    (pkg / "actions" / "parse.py").write_text('x = 1\nf = dict(metadata={"help": "a"})\n')
    after_f = training_code_digest(pkg)
    assert after_f != before  # imported inside a function: still loaded
    (pkg / "actions" / "parse.py").write_text('x = 1\nf = dict(metadata={"help": "b c"})\n')
    assert training_code_digest(pkg) == after_f  # a help string
    (pkg / "objectives" / "rows.py").write_text("x = 2\n")
    after_rows = training_code_digest(pkg)
    assert after_rows != after_f
    (pkg / "actions" / "grammars" / "write.gbnf").write_text('root ::= "b"\n')
    assert training_code_digest(pkg) != after_rows  # a grammar the parsers' package holds


def test_the_shipped_trainers_do_not_load_the_studies_beside_them():
    """The real package: the reranker's and the transfer study's modules live in `train/` but
    are not training code, so editing them keeps a write model's checkpoints."""
    from mags_lib.code_graph import closure, code_index
    from mags_lib.train.resume import TRAINERS

    loaded = closure(set(TRAINERS), code_index().imports)
    assert {"mags_lib.train.sft_loss", "mags_lib.objectives.rewards",
            "mags_lib.actions.parser"} <= loaded
    assert not {"mags_lib.train.recall_reranker", "mags_lib.train.transfer",
                "mags_lib.train.edge_scorer"} & loaded


def test_the_same_run_resumes_from_its_newest_complete_checkpoint(tmp_path):
    trainer = tmp_path / "ask-sft" / "trainer"
    assert resume_point(trainer, "fp1").path is None  # first run: records its fingerprint
    assert json.loads((trainer / RUN_FILE).read_text()) == {"fingerprint": "fp1"}
    fake_checkpoint(trainer, 25)
    newest = fake_checkpoint(trainer, 50)
    fake_checkpoint(trainer, 75, complete=False)  # died while writing it
    assert [s for s, _ in checkpoints(trainer)] == [25, 50]
    point = resume_point(trainer, "fp1")
    assert (point.path, point.step) == (str(newest), 50)
    assert "resumed from" in point.reason and newest.is_dir()


def test_another_run_removes_the_checkpoints_and_starts_over(tmp_path, caplog):
    trainer = tmp_path / "write-sft" / "trainer"
    resume_point(trainer, "old")
    fake_checkpoint(trainer, 25)
    with caplog.at_level(logging.WARNING, logger="mags_lib.train.resume"):
        point = resume_point(trainer, "new")
    assert point.path is None and point.step == 0 and "another run" in point.reason
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mags_lib.train.resume"]
    assert "write-sft" in line and "starting from step 0" in line and "fingerprint old" in line
    assert checkpoints(trainer) == []
    assert json.loads((trainer / RUN_FILE).read_text()) == {"fingerprint": "new"}


def test_resume_false_and_an_unreadable_fingerprint_start_over(tmp_path):
    trainer = tmp_path / "t"
    resume_point(trainer, "fp")
    fake_checkpoint(trainer, 5)
    point = resume_point(trainer, "fp", resume=False)
    assert point.path is None and "resume=False" in point.reason and checkpoints(trainer) == []
    fake_checkpoint(trainer, 5)
    (trainer / RUN_FILE).write_text("{truncated")
    assert resume_point(trainer, "fp").path is None and checkpoints(trainer) == []


def test_a_rank_that_does_not_write_changes_nothing(tmp_path):
    trainer = tmp_path / "t"
    resume_point(trainer, "fp")
    fake_checkpoint(trainer, 5)
    assert resume_point(trainer, "other", write=False).path is None
    assert [s for s, _ in checkpoints(trainer)] == [5]
    assert json.loads((trainer / RUN_FILE).read_text()) == {"fingerprint": "fp"}


def test_clear_leaves_a_users_file_and_otherwise_the_folder_goes(tmp_path):
    trainer = tmp_path / "t"
    resume_point(trainer, "fp")
    fake_checkpoint(trainer, 5)
    (trainer / "tmp-checkpoint-9").mkdir()
    (trainer / "README.md").write_text("---\ntags:\n- generated_from_trainer\n- trl\n---\n")
    (trainer / "notes.txt").write_text("mine")
    clear(trainer)
    assert sorted(p.name for p in trainer.iterdir()) == ["notes.txt"]
    (trainer / "notes.txt").unlink()
    fake_checkpoint(trainer, 6)
    clear(trainer)
    assert not trainer.exists()
    clear(trainer)  # nothing there: nothing to do


def test_the_model_stamp_changes_when_the_start_model_is_saved_again(tmp_path):
    assert model_stamp(tmp_path / "missing") == ""
    (tmp_path / "model.safetensors").write_bytes(b"a" * 10)
    first = model_stamp(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"b" * 11)
    assert model_stamp(tmp_path) != first


# --- real runs of the embedded model, stopped part-way ---------------------------------------


class Interrupted(Exception):
    """Stands for a killed kernel or Ctrl-C in the middle of training."""


def stop_at(step: int):
    from transformers import TrainerCallback

    class StopAt(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == step:
                raise Interrupted(f"stopped at step {step}")

    return StopAt()


TINY = dict(max_steps=4, save_steps=2, per_device_train_batch_size=2, logging_steps=1,
            torch_threads=1)


def adapter_weights(model_dir):
    from safetensors.torch import load_file

    return load_file(str(model_dir / "adapter" / "adapter_model.safetensors"))


def assert_same_weights(a, b):
    import torch

    assert a.keys() == b.keys()
    worst = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert worst < 1e-5, worst
    assert any(torch.count_nonzero(v) for v in a.values())


@pytest.mark.slow
def test_an_interrupted_sft_run_resumes_and_ends_where_an_unbroken_one_does(tmp_path,
                                                                           monkeypatch):
    import mags_lib.train.sft as sft
    from tests.test_train_runs import write_rows

    rows = write_rows(12)
    cfg = dict(max_length=96, eval_generate=False, **TINY)
    whole = sft.run_sft(SFTStageConfig(name="w", output_dir=str(tmp_path / "whole"), **cfg),
                        rows, [])
    assert whole.metrics["resumed_from_step"] == 0 and whole.metrics["steps"] == 4
    assert not (tmp_path / "whole" / "trainer").exists()  # a finished run keeps no checkpoint

    real = sft.completion_loss_trainer

    def breaking(*args, **kw):
        trainer = real(*args, **kw)
        trainer.add_callback(stop_at(3))
        return trainer

    broken_cfg = SFTStageConfig(name="b", output_dir=str(tmp_path / "broken"), **cfg)
    monkeypatch.setattr(sft, "completion_loss_trainer", breaking)
    with pytest.raises(Interrupted):
        sft.run_sft(broken_cfg, rows, [])
    assert [s for s, _ in checkpoints(tmp_path / "broken" / "trainer")] == [2]
    monkeypatch.setattr(sft, "completion_loss_trainer", real)

    resumed = sft.run_sft(broken_cfg, rows, [])
    assert resumed.metrics["resumed_from_step"] == 2 and resumed.metrics["steps"] == 4
    assert [e["step"] for e in resumed.loss_curve] == [1, 2, 3, 4]
    assert resumed.metrics["train_loss"] == pytest.approx(whole.metrics["train_loss"], rel=1e-4)
    assert_same_weights(adapter_weights(tmp_path / "broken"), adapter_weights(tmp_path / "whole"))
    assert not (tmp_path / "broken" / "trainer").exists()
    manifest = json.loads((tmp_path / "broken" / "manifest.json").read_text())
    assert manifest["metrics"]["resumed_from_step"] == 2 and manifest["run_fingerprint"]

    def no_training(*args, **kw):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(sft, "completion_loss_trainer", no_training)
    judged = replace(broken_cfg, eval_generate=True, eval_max_tokens=8)  # same training
    again = sft.run_sft(judged, rows, rows[:2])  # finished: loaded, judged on these rows
    assert again.metrics["reused_run_of"] == manifest["time_utc"]
    assert again.metrics["steps"] == 4 and again.metrics["generation"]["write"]["n"] == 2
    assert again.loss_curve == resumed.loss_curve and not again.model.training
    assert "reused_judgment_of" not in again.metrics["generation"]["write"]
    import mags_lib.train.evaluate as evaluate

    with monkeypatch.context() as m:  # the same rows again: the kept judgment, not a new one
        m.setattr(evaluate, "eval_by_task", lambda *a, **k: pytest.fail("judged again"))
        third = sft.run_sft(judged, rows, rows[:2])
    kept = third.metrics["generation"]["write"]
    assert kept.pop("reused_judgment_of") and kept == again.metrics["generation"]["write"]
    fewer = sft.run_sft(replace(judged, eval_max_tokens=6), rows, rows[:2])  # another budget
    assert "reused_judgment_of" not in fewer.metrics["generation"]["write"]
    with pytest.raises(AssertionError, match="trained again"):
        sft.run_sft(replace(broken_cfg, resume=False), rows, [])


@pytest.mark.slow
def test_an_interrupted_grpo_run_resumes_and_another_config_starts_over(tmp_path, monkeypatch):
    import trl

    from mags_lib.train import run_grpo, run_sft
    from tests.test_train_runs import ask_rows

    start = run_sft(SFTStageConfig(name="s", output_dir=str(tmp_path / "sft"), max_length=96,
                                   eval_generate=False, **{**TINY, "max_steps": 2}),
                    ask_rows(4), [])
    cfg = GRPOStageConfig(name="g", output_dir=str(tmp_path / "grpo"), num_generations=2,
                          max_completion_length=12, beta=0.0, mine_candidates=0,
                          reward_names=["format_reward"], reward_weights=[1.0], **TINY)
    rows = ask_rows(8, seed=3)
    real = trl.GRPOTrainer

    class Breaking(real):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            self.add_callback(stop_at(3))

    monkeypatch.setattr(trl, "GRPOTrainer", Breaking)
    with pytest.raises(Interrupted):
        run_grpo(cfg, rows, [], start.model_dir)
    assert [s for s, _ in checkpoints(tmp_path / "grpo" / "trainer")] == [2]
    monkeypatch.setattr(trl, "GRPOTrainer", real)

    other = run_grpo(replace(cfg, max_steps=2), rows, [], start.model_dir)
    assert other.metrics["resumed_from_step"] == 0  # another config: started over

    with monkeypatch.context() as m:
        m.setattr(trl, "GRPOTrainer", Breaking)
        with pytest.raises(Interrupted):
            run_grpo(cfg, rows, [], start.model_dir)
    resumed = run_grpo(cfg, rows, [], start.model_dir)
    assert resumed.metrics["resumed_from_step"] == 2 and resumed.metrics["steps"] == 4
    assert [e["step"] for e in resumed.reward_curve] == [1, 2, 3, 4]
    whole = run_grpo(replace(cfg, output_dir=str(tmp_path / "whole")), rows, [], start.model_dir)
    assert [round(e["reward"], 6) for e in whole.reward_curve] == [
        round(e["reward"], 6) for e in resumed.reward_curve]
    assert_same_weights(adapter_weights(tmp_path / "grpo"), adapter_weights(tmp_path / "whole"))

    with monkeypatch.context() as m:  # finished: loaded, not trained again
        m.setattr(trl, "GRPOTrainer", None)
        again = run_grpo(cfg, rows, [], start.model_dir)
    assert again.metrics["reused_run_of"] and again.reward_curve == resumed.reward_curve
    (start.model_dir / "model.safetensors").touch()  # the SFT model saved again: a new start
    with monkeypatch.context() as m, pytest.raises(TypeError):
        m.setattr(trl, "GRPOTrainer", None)
        run_grpo(cfg, rows, [], start.model_dir)
