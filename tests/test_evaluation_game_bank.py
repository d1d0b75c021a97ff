"""A bank of phrasings kept outside the project is scored as notebook 13 scores the test bank."""

from __future__ import annotations

import json

from mags_lib.apps.bank_cli import main
from mags_lib.embed import HashingEmbedder
from mags_lib.evaluation.game_bank import bank_eval_config, report, score_bank
from mags_lib.game import phrasing
from mags_lib.game.rule_reader import RuleReaderLLM


def test_a_file_bank_is_played_with_notebook_13s_settings_and_scored(tmp_path):
    path = tmp_path / "outside.json"
    path.write_text(phrasing.bank_json("test", name="outside"))
    cfg = bank_eval_config(str(path), output="x")
    same = bank_eval_config("test", output="x")
    assert cfg.game.phrasings == str(path) and cfg.game.surface == "varied"
    assert (cfg.k, cfg.debias_order, cfg.prompt_format) == (same.k, same.debias_order,
                                                          same.prompt_format)
    out = score_bank(str(path), agents=["bare", "oracle", "mags_scripted"], seeds=[0],
                     episode_length=60, out_dir=tmp_path / "run", llm=RuleReaderLLM(),
                     embedder=HashingEmbedder())
    assert out["bank"].startswith("outside:") and out["games"] == 3
    rows = {r["agent"]: r for r in out["headline"]}
    assert set(rows) == {"bare", "oracle", "mags_scripted"}
    assert rows["oracle"]["accuracy"] > rows["bare"]["accuracy"]
    assert out["targets"]["met"]["after_drift"] is None  # mags and static_rag were not played
    saved = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert saved["bank"] == out["bank"] and saved["source"] == str(path)
    # which models played: the decision model handed in; no ask or write model (no mags)
    assert saved["models"] == out["models"] == {"answer": RuleReaderLLM().name}
    assert json.loads((tmp_path / "run" / "headline.json").read_text()) == out["headline"]
    text = report(out)
    assert "| outside | oracle |" in text and "an agent it needs was not played" in text
    assert f"Models: answer `{RuleReaderLLM().name}`." in text


def test_a_bank_run_names_its_model_files_by_content(tmp_path):
    from types import SimpleNamespace

    from mags_lib.evaluation.game_bank import model_label, played_models

    a, b = tmp_path / "a" / "write-grpo-q8_0.gguf", tmp_path / "b" / "write-grpo-q8_0.gguf"
    for path, body in ((a, b"GGUF one"), (b, b"GGUF two")):
        path.parent.mkdir()
        path.write_bytes(body)
    assert model_label(a).startswith("write-grpo-q8_0.gguf:") and model_label(a) != model_label(b)
    assert model_label("embedded") == "embedded"
    cfg = SimpleNamespace(llm=SimpleNamespace(model=str(a)), agents=["bare", "mags"],
                          role_model_paths=lambda: {"ask": "embedded", "write": str(b)})
    assert played_models(cfg) == {"answer": model_label(a), "ask": "embedded",
                                  "write": model_label(b)}
    assert played_models(cfg, roles={"write": SimpleNamespace(name="fake")})["write"] == "fake"
    assert set(played_models(SimpleNamespace(**{**vars(cfg), "agents": ["bare"]}))) == {"answer"}


def test_the_command_writes_an_example_and_refuses_a_bad_bank(tmp_path, capsys):
    example = tmp_path / "mine.json"
    assert main([str(example), "--example"]) == 0
    assert phrasing.load_bank(example).key == "mine"
    assert main([str(example), "--example"]) == 2  # never overwrites
    bad = tmp_path / "bad.json"
    bad.write_text('{"rules": []}')
    assert main([str(bad), "--smoke"]) == 2
    assert "lacks announce, decisions, distractors, feedback" in capsys.readouterr().err
