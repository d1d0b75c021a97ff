"""The summary reads results as the notebooks write them, and says what is missing."""

from __future__ import annotations

import json

from mags_lib.summary import main, render


def test_an_empty_results_folder_names_the_commands_that_fill_it(tmp_path):
    text = render(tmp_path)
    assert "make reproduce" in text
    assert "python -m mags_lib.bench memory --out results/bench/memory.json" in text
    assert "--only 06" in text and "--only 07" in text and "--only 08" in text


def test_tables_come_from_the_files(tmp_path):
    from mags_lib.evaluation.headline import closed_loop_targets, headline_rows

    (tmp_path / "06_evaluate_game" / "varied").mkdir(parents=True)
    agent = {"accuracy": 0.8, "ci_low": 0.7, "ci_high": 0.9,
             "seeds": {"mean": 0.8, "std": 0.05, "per_seed": {"0": 0.75, "1": 0.85}},
             "adaptability": {"recent_accuracy": 0.6}, "recall_accuracy": 1.0,
             "after_drift": {"accuracy": 0.7, "ci_low": 0.6, "ci_high": 0.8, "n": 50},
             "memory_quality": {"governing_held_valid": 0.9},
             "loop": {"write_validity": 0.97},
             "stale_recall_rate": 0.0, "efficiency": {"tokens_per_decision": 90,
                                                      "seconds_per_decision": 0.4}}
    summary = {"oracle_vs_bare_gap": 0.33, "evaluation_valid": True,
               "agents": {"mags": agent, "bare": {**agent, "accuracy": 0.5},
                          "static_rag": {**agent, "after_drift": {"accuracy": 0.55}}}}
    out06 = tmp_path / "06_evaluate_game"
    (out06 / "varied" / "metrics.json").write_text(json.dumps(summary))
    (out06 / "headline.json").write_text(json.dumps(headline_rows({"varied": summary})))
    (out06 / "targets.json").write_text(json.dumps({"varied": closed_loop_targets(summary)}))
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "memory.json").write_text(json.dumps(
        {"meets_targets": {"recall_p50": True, "engram_throughput": False},
         "results": [{"size": 1000, "engram_per_s": 2500.0, "peak_rss_mb": 300.0,
                      "recall": {"p50_ms": 3.0, "p95_ms": 5.0}, "recall_answer_hit_rate": 0.9,
                      "vector_index_approximate": False}]}))
    out = tmp_path / "S.md"
    assert main(["--results", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text()
    assert "varied: oracle - bare = +0.330" in text
    assert "| varied | mags | MAGS (closed loop: trained ask + write models) | 0.800 (0.700–0.900)" \
        in text
    assert "| mags after drift - static_rag after drift (>= +0.10) | +0.150 | yes |" in text
    assert "| 1000 | 2500 | 3.0 | 5.0 | 300 |" in text
    assert "engram_throughput MISSED" in text
    # the README gets the varied surface's short table, the targets and a pointer to the rest
    readme = tmp_path / "README.md"
    readme.write_text("<!-- summary:start -->\n<!-- summary:end -->\n")
    assert main(["--results", str(tmp_path), "--out", str(out), "--readme", str(readme)]) == 0
    block = readme.read_text()
    assert "| `mags` | MAGS (closed loop: trained ask + write models) | 0.800 (0.700–0.900) | " \
        "0.700 (0.600–0.800) |" in block
    assert "mags after drift − static_rag +0.150 (≥ +0.10: yes)" in block
    assert "reports/RESULTS.md" in block and "per seed" not in block


def test_training_table_shows_the_ask_models_per_query_hit_rate(tmp_path):
    (tmp_path / "02_train_ask_model").mkdir()
    ask = {"adherence": 1.0, "accuracy": 0.95, "accuracy_name": "recall_hit_rate", "n": 40,
           "query_hit_at": {"1": 0.93, "3": 0.99}, "queries_per_row": 1.5}
    (tmp_path / "02_train_ask_model" / "metrics.json").write_text(json.dumps(
        {"ask": {"stages": {"grpo": {"ask": ask, "train_s": 300.0, "wall_s": 350.0}},
                 "test": {"ask": {**ask, "accuracy": 0.9, "stage": "grpo"}}},
         "answer": {"stages": {"grpo": {"answer": {"accuracy": 0.8, "n": 40}}}}}))
    text = render(tmp_path)
    assert "recall_hit_rate 0.950 (per query 0.930, 1.5 queries / row)" in text
    assert "| 0.900 (per query 0.930, 1.5 queries / row) |" in text
    assert "answer_accuracy" not in text and "| answer | grpo | 40 | – | accuracy 0.800 |" in text


def test_training_section_shows_the_write_models_op_confusion(tmp_path):
    (tmp_path / "03_train_write_model").mkdir()
    op_row = {"rows": "held-out phrasings", "stage": "sft", "n": 60, "op_accuracy": 0.75,
              "F1": 0.8, "adherence": 1.0, "add -> add": 17, "add -> update": 3,
              "none -> none": 12, "none -> add": 6, "none -> bad": 2}
    (tmp_path / "03_train_write_model" / "metrics.json").write_text(json.dumps(
        {"write": {"stages": {}}, "write_ops": [op_row]}))
    text = render(tmp_path)
    assert "| held-out phrasings | sft | 60 | 0.750 | 0.800 | – | – | 1.000 | 17 / 3 / 0 / 0 | " \
           "0 / 0 / 0 / 0 | 6 / 0 / 12 / 2 |" in text  # a run before text_exact: "–"
    (tmp_path / "03_train_write_model" / "metrics.json").write_text(json.dumps(
        {"write": {"stages": {}},
         "write_ops": [{**op_row, "text_exact": 0.45, "facts_dropped": 0.1}]}))
    assert "| 60 | 0.750 | 0.800 | 0.450 | 0.100 | 1.000 |" in render(tmp_path)


def test_training_section_says_when_the_selected_model_is_not_the_one_judged(tmp_path):
    results, models = tmp_path / "results", tmp_path / "models"
    (results / "03_train_write_model").mkdir(parents=True)
    models.mkdir()
    (results / "03_train_write_model" / "metrics.json").write_text(json.dumps(
        {"write": {"stages": {}, "selected_stage": "sft",
                   "test": {"write": {"accuracy": 0.8, "n": 40, "stage": "sft"}}}}))
    assert "names **" not in render(results)  # no selection file: nothing to say
    (models / "write-selected.json").write_text(json.dumps(
        {"role": "write", "stage": "sft", "reason": "best"}))
    assert "names **" not in render(results)  # the run's own choice
    (models / "write-selected.json").write_text(json.dumps(
        {"role": "write", "stage": "grpo", "reason": "re-selected after the run"}))
    text = render(results)
    assert "`models/write-selected.json` names **grpo**, not this run's sft" in text
    assert "re-selected after the run" in text
    (models / "write-selected.json").write_text("{broken")
    assert "names **" not in render(results)


def test_the_readme_block_is_regenerated_and_the_rest_kept(tmp_path):
    from mags_lib.summary import README_END, README_START, update_readme

    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nintro\n\n{README_START}\nstale numbers\n{README_END}\n\nrest\n")
    assert update_readme(readme, tmp_path / "results")
    text = readme.read_text()
    assert text.startswith("# Title\n\nintro\n\n") and text.endswith("\n\nrest\n")
    assert "stale numbers" not in text and "python -m mags_lib.pipeline --only 06" in text
    plain = tmp_path / "PLAIN.md"
    plain.write_text("no markers")
    assert not update_readme(plain, tmp_path) and plain.read_text() == "no markers"


def test_the_seed_table_prefers_the_pooled_splits(tmp_path):
    out = tmp_path / "07_ask_grpo_seeds"
    out.mkdir()
    model = {"hit_at": {"1": 0.9, "3": 0.95}, "query_hit_at": {"1": 0.8}, "queries_per_row": 1.2,
             "adherence": 1.0}
    (out / "grpo_seeds_val.json").write_text(json.dumps(
        {"rows": 160, "split": "val", "models": {"ask-sft": model}}))
    assert "| ask model, 160 val rows |" in render(tmp_path)
    (out / "grpo_seeds_pooled.json").write_text(json.dumps(
        {"rows": 320, "split": "val+test", "models": {"ask-grpo-seed1": model}}))
    text = render(tmp_path)
    assert "| ask model, 320 val+test rows |" in text
    assert "| ask-grpo-seed1 | 0.900 | 0.800 | 0.950 | 1.20 | 1.000 |" in text


def test_a_rerun_of_one_notebook_keeps_the_other_sections_marked_as_kept(tmp_path):
    """`main --out` with the previous report: a section whose results are missing now keeps
    its old body under a 'kept' line; a section with results is regenerated; a section that
    was missing before stays missing; without --keep everything missing is reported missing."""
    from mags_lib.summary import MECHANISMS_LEAD, README_END, README_START

    root = tmp_path / "results"
    (root / "01_synthesize_dataset").mkdir(parents=True)
    (root / "01_synthesize_dataset" / "metrics.json").write_text(json.dumps(
        {"counts": {"ask": {"train": 7, "val": 1, "test": 1}}}))
    (root / "06_evaluate_game").mkdir()
    (root / "06_evaluate_game" / "headline.json").write_text(json.dumps([
        {"surface": "varied", "agent": "mags", "label": "MAGS", "accuracy": 0.7, "ci_low": 0.6,
         "ci_high": 0.8, "after_drift": 0.6, "after_drift_ci_low": 0.5,
         "after_drift_ci_high": 0.7, "n_seeds": 3, "seed_mean": 0.7, "seed_std": 0.05,
         "governing_held_valid": 0.5, "stale_recalled": 0.0, "write_validity": 1.0}]))
    out = tmp_path / "RESULTS.md"
    out.write_text("# MAGS results\n\n## Dataset (01)\n\nold dataset table\n\n"
                   "## Graph dynamics (05)\n\n| old | dynamics |\n\n"
                   "## Ask GRPO over seeds (07)\n\n_notebook 07 results: not found; run `x`._\n")
    readme = tmp_path / "README.md"
    readme.write_text(f"{README_START}\nold\n\n{MECHANISMS_LEAD} (notebook 09):\n\n| m |\n\n"
                      f"Conversations (notebook 12): old line.\n\n"
                      f"Every table: here.\n{README_END}\n")
    (root / "12_conversations").mkdir()
    (root / "12_conversations" / "metrics.json").write_text(json.dumps({"persona": {
        "split": "dev", "conversations": 1, "evidence": {},
        "qa": {"summary": {"bare": {"f1": 0.1, "upper_bound": False}}}}}))
    assert main(["--results", str(root), "--out", str(out), "--readme", str(readme)]) == 0
    assert readme.read_text().count("Conversations (notebook 12") == 1  # regenerated, not kept
    assert "old line" not in readme.read_text()
    text = out.read_text()
    assert "| ask | 7 | 1 | 1 |" in text and "old dataset table" not in text
    dynamics = text.split("## Graph dynamics (05)")[1].split("\n## ")[0]
    assert "_Kept from the previous report" in dynamics and "| old | dynamics |" in dynamics
    assert "python -m mags_lib.pipeline --only 07" in text.split("## Ask GRPO over seeds (07)")[1]
    assert main(["--results", str(root), "--out", str(out)]) == 0  # kept twice: marked once
    assert out.read_text().count("_Kept from the previous report") == text.count(
        "_Kept from the previous report")
    block = readme.read_text()
    assert "| `mags` | MAGS | 0.700 (0.600–0.800) |" in block
    assert "| m |" in block and "kept from the previous block" in block
    assert block.index("| m |") < block.index("Every table")
    assert main(["--results", str(root), "--out", str(out), "--no-keep"]) == 0
    assert "| old | dynamics |" not in out.read_text()
    (root / "06_evaluate_game" / "headline.json").unlink()  # no 06 here: the block stays
    assert main(["--results", str(root), "--out", str(out), "--readme", str(readme)]) == 0
    assert readme.read_text() == block


def test_a_kept_mechanism_table_becomes_the_one_line_the_block_now_writes(tmp_path):
    from mags_lib.summary import MECHANISMS_LEAD, README_END, README_START, update_readme

    _one_headline_row(tmp_path)
    readme = tmp_path / "README.md"
    table = ("| mechanism | largest cost when off (regime, 95% CI) | smallest (regime, 95% CI) "
             "| verdict |\n|---|---|---|---|\n"
             "| decay | +0.097 (scale, [+0.09, +0.11]) | +0.000 (present, [+0.00, +0.00]) "
             "| helps in scale |\n"
             "| kcore | +0.000 (multi_hop, [+0.00, +0.00]) | -0.006 (recurrence, [-0.01, +0.00]) "
             "| costs < 0.05 when off in every regime tried |\n"
             "| reward | +0.002 (recurrence, [-0.01, +0.01]) | -0.012 (multi_hop, [-0.02, -0.00]) "
             "| costs < 0.05 when off in every regime tried |")
    readme.write_text(f"{README_START}\nold\n\n{MECHANISMS_LEAD} (notebook 09):\n\n{table}\n\n"
                      f"TextWorld (notebook 10): kept.\n\nEvery table: here.\n{README_END}\n")
    assert update_readme(readme, tmp_path, keep=True)
    text = readme.read_text()
    assert "| decay |" not in text and "TextWorld (notebook 10): kept." in text
    assert ("(notebook 09): decay helps in scale (largest cost when off +0.097 in scale, "
            "[+0.09, +0.11]); kcore, reward cost < 0.05 when off in every regime tried.") in text
    assert update_readme(readme, tmp_path, keep=True) and readme.read_text() == text


def test_the_textworld_table_is_built_from_the_games_with_pooled_rows(tmp_path):
    from mags_lib.summary import textworld_section

    games = [{"kind": kind, "level": 5, "agent": agent, "seed": seed,
              "normalized_score": float(won), "won": won, "steps": 6 if won else 30}
             for kind in ("coin_collector", "treasure_hunter") for seed in range(3)
             for agent, won in (("bare", seed == 0), ("oracle", True))]
    (tmp_path / "10_textworld").mkdir()
    (tmp_path / "10_textworld" / "metrics.json").write_text(json.dumps(
        {"smoke": False, "decision_llm": "base model", "games": games, "rows": []}))
    text = textworld_section(tmp_path)
    pooled = [line for line in text.splitlines() if line.startswith("| **all games**")]
    assert len(pooled) == 2
    assert "| bare | 0.33 |" in pooled[0] and "| 2/6 |" in pooled[0]
    assert "| oracle (ceiling) | 1.00 |" in pooled[1] and "| 6/6 | 6.0 |" in pooled[1]


def _one_headline_row(root):
    """A notebook 06 headline with one agent, so the README block renders."""
    (root / "06_evaluate_game").mkdir()
    (root / "06_evaluate_game" / "headline.json").write_text(json.dumps([
        {"surface": "varied", "agent": "mags", "label": "MAGS", "accuracy": 0.8, "ci_low": 0.7,
         "ci_high": 0.9, "after_drift": 0.8, "after_drift_ci_low": 0.7,
         "after_drift_ci_high": 0.9, "n_seeds": 3}]))


def test_the_readme_block_counts_textworld_wins_per_agent(tmp_path):
    from mags_lib.summary import readme_headline

    _one_headline_row(tmp_path)
    assert "TextWorld" not in readme_headline(tmp_path)
    games = [{"kind": "coin_collector", "level": 5, "agent": agent, "seed": seed,
              "normalized_score": float(won), "won": won, "steps": 10}
             for seed in range(3) for agent, won in (("bare", seed == 0), ("oracle", True))]
    (tmp_path / "10_textworld").mkdir()
    (tmp_path / "10_textworld" / "metrics.json").write_text(json.dumps({"games": games}))
    assert ("TextWorld (notebook 10, games won of 3): `oracle` (ceiling) 3, `bare` 1."
            in readme_headline(tmp_path))


def test_the_write_objectives_in_the_loop_reach_the_report_and_the_readme_block(tmp_path):
    from mags_lib.evaluation.write_models import compare_groups
    from mags_lib.summary import objectives_section, readme_headline

    _one_headline_row(tmp_path)
    assert "notebook 08" not in readme_headline(tmp_path)

    def writer(after: float) -> dict:
        pooled = {"accuracy": after, "ci_low": after - 0.1, "ci_high": after + 0.1, "n": 40}
        return {"accuracy": pooled, "after_drift": pooled, "per_game": [
            {"seed": 0, "accuracy": after, "after_drift": after, "rule_stores": 90,
             "rule_stores_exact": 88, "ops": {}}]}

    played = {"phrasings": "heldout", "seeds": [0], "turns": 200, "writers": {
        "f1-s0": writer(0.8), "f1-s1": writer(0.9), "outcome-s0": writer(0.7),
        "outcome-s1": writer(0.7)}}
    groups = compare_groups(played, {"f1-s0": "f1", "f1-s1": "f1", "outcome-s0": "outcome",
                                     "outcome-s1": "outcome"}, reference="f1")
    out = tmp_path / "08_write_objectives"
    out.mkdir()
    (out / "loop.json").write_text(json.dumps({"played": played, "groups": groups}))
    line = next(x for x in readme_headline(tmp_path).splitlines() if "notebook 08" in x)
    assert "f1 0.850" in line and "outcome 0.700" in line and "-0.150" in line
    (out / "metrics.json").write_text(json.dumps({"models": {}, "smoke": False}))
    assert "--only 08" in objectives_section(tmp_path)  # no models judged: says how to run


def test_the_ask_objectives_reach_the_report_and_the_readme_block(tmp_path):
    from mags_lib.evaluation.write_models import compare_groups
    from mags_lib.summary import ask_objectives_section, readme_headline

    _one_headline_row(tmp_path)
    assert "--only 11" in ask_objectives_section(tmp_path)
    judged = {"n": 4, "adherence": 1.0, "f1": 0.6, "hit_at_1": 0.9, "query_hit_at_1": 0.8,
              "play_hit_at_3": 1.0, "queries_per_row": 1.5}

    def asker(after: float) -> dict:
        pooled = {"accuracy": after, "ci_low": after - 0.1, "ci_high": after + 0.1, "n": 40}
        return {"accuracy": pooled, "after_drift": pooled, "per_game": [
            {"seed": 0, "accuracy": after, "after_drift": after, "rule_stores": 90,
             "rule_stores_exact": 88, "ops": {}}]}

    played = {"role": "ask", "phrasings": "heldout", "seeds": [0], "turns": 200,
              "writers": {"f1-s0": asker(0.8), "outcome-s0": asker(0.85)}}
    groups = compare_groups(played, {"f1-s0": "f1", "outcome-s0": "outcome"}, reference="f1")
    out = tmp_path / "11_ask_objectives"
    out.mkdir()
    (out / "metrics.json").write_text(json.dumps({
        "rows": 4, "split": "test", "smoke": False,
        "models": {"sft": judged, "f1-s0": {**judged, "objective": "f1"}},
        "by_objective": {"f1": {"n_seeds": 1, **{k: {"mean": judged[k], "ci_low": None,
                                                     "ci_high": None}
                                                 for k in ("hit_at_1", "play_hit_at_3", "f1")}}}}))
    (out / "loop.json").write_text(json.dumps({"played": played, "groups": groups}))
    section = ask_objectives_section(tmp_path)
    assert "| sft | 0.900 | 1.000 | 0.800 | 0.600 |" in section
    assert "| ask model | accuracy" in section
    line = next(x for x in readme_headline(tmp_path).splitlines() if "notebook 11" in x)
    assert line.startswith("Ask model trained") and "outcome 0.850" in line and "+0.050" in line


def test_conversations_reach_the_report_and_the_readme_block(tmp_path):
    from mags_lib.summary import conversations_section, readme_headline

    _one_headline_row(tmp_path)
    assert "Conversations" not in readme_headline(tmp_path)
    assert "not found" in conversations_section(tmp_path)
    qa = {"summary": {"bare": {"upper_bound": False, "f1": 0.05,
                               "persona": {"current_accuracy": 0.0}},
                      "gold_writes": {"upper_bound": True, "f1": 0.4,
                                      "persona": {"current_accuracy": 0.7}}}}
    ev = {"memory": {"all": {"recall@5": 0.5, "recall@10": 0.6}},
          "bm25": {"all": {"recall@5": 0.4, "recall@10": 0.5}}}
    (tmp_path / "12_conversations").mkdir()
    (tmp_path / "12_conversations" / "metrics.json").write_text(json.dumps(
        {"persona": {"split": "dev", "conversations": 2, "evidence": ev, "qa": qa},
         "locomo": {"missing": "LoCoMo is not on this machine"}}))
    block = readme_headline(tmp_path)
    assert ("persona (dev split): F1 `bare` 0.050 / current 0.000, `gold_writes` (upper bound) "
            "0.400 / current 0.700." in block)
    assert "gold_writes (upper bound)" in conversations_section(tmp_path)
    assert "one answer model)" in block  # a run that did not name its reader
    (tmp_path / "12_conversations" / "metrics.json").write_text(json.dumps(
        {"reader": "the trained answer model answer-grpo-q8_0.gguf",
         "persona": {"split": "dev", "conversations": 2, "evidence": ev, "qa": qa}}))
    assert ("one answer model: the trained answer model answer-grpo-q8_0.gguf)"
            in readme_headline(tmp_path))
    # an agent above the upper bound: the line says so (the bound bounds the writing only)
    qa["summary"]["bare"]["persona"]["current_accuracy"] = 0.8
    (tmp_path / "12_conversations" / "metrics.json").write_text(json.dumps(
        {"persona": {"split": "dev", "conversations": 2, "evidence": ev, "qa": qa}}))
    assert ("current 0.700 (an upper bound beaten is not a bound: `bare` is above the upper "
            "bound `gold_writes` on current (0.800 > 0.700); it bounds the writing, not the "
            "reading: `reports/RESULTS.md`)." in readme_headline(tmp_path))


def test_a_kept_readme_block_gets_notebook_12s_line_once(tmp_path):
    from mags_lib.summary import README_END, README_START, update_readme

    readme = tmp_path / "README.md"
    old = ("intro\n" + README_START + "\n<!-- generated -->\n\n| agent | acc |\n|---|---|\n"
           "| `mags` | 0.9 |\n\nEvery table: `reports/RESULTS.md`.\n\n" + README_END + "\nend\n")
    readme.write_text(old)
    root = tmp_path / "results"
    (root / "12_conversations").mkdir(parents=True)
    qa = {"summary": {"bare": {"upper_bound": False, "f1": 0.05}}}
    (root / "12_conversations" / "metrics.json").write_text(json.dumps(
        {"persona": {"split": "dev", "conversations": 1, "evidence": {}, "qa": qa}}))
    for _ in range(2):
        assert update_readme(readme, root, keep=True)
    text = readme.read_text()
    assert "| `mags` | 0.9 |" in text and text.count("Conversations (notebook 12") == 1
    assert text.index("Conversations (notebook 12") < text.index("Every table")
    assert text.startswith("intro\n") and text.endswith(README_END + "\nend\n")


def test_the_pipeline_table_keeps_the_notebooks_this_machine_did_not_run(tmp_path):
    from mags_lib.summary import render

    root = tmp_path / "results"
    root.mkdir()
    (root / "pipeline.json").write_text(json.dumps({"runs": [
        {"notebook": "12_c.ipynb", "ok": True, "seconds": 5, "smoke": False,
         "finished": "2026-11-27T23:00:00+00:00"}]}))
    previous = ("# MAGS results\n\n## Pipeline runs\n\n| notebook | mode | status | seconds | "
                "finished (UTC) |\n|---|---|---|---|---|\n| 01_a.ipynb | full | ok | 31 | x |\n"
                "| 12_c.ipynb | SMOKE | ok | 2 | y |\n")
    table = render(root, previous).split("## Pipeline runs")[1].split("##")[0]
    assert "| 01_a.ipynb | full | ok | 31 | x |" in table
    assert "| 12_c.ipynb | full | ok | 5 |" in table and "SMOKE" not in table


def test_the_readme_block_gives_the_game_and_conversation_speeds_with_their_targets(tmp_path):
    from mags_lib.summary import readme_headline

    _one_headline_row(tmp_path)
    assert "Speed:" not in readme_headline(tmp_path)  # no benchmark ran
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "conversation.json").write_text(json.dumps({
        "conversation": "conv-26", "targets": {
            "turn_p50": {"limit_s": 0.5, "value": 0.364, "met": True},
            "question_p50": {"limit_s": 1.0, "value": 1.2, "met": False}}}))
    line = next(x for x in readme_headline(tmp_path).splitlines() if x.startswith("Speed:"))
    assert line == ("Speed: on conv-26 0.36 s a turn and 1.20 s a question "
                    "(≤ 0.5 / 1.0 s: yes / no).")
    (tmp_path / "bench" / "agent.json").write_text(json.dumps({
        "config": {"turns": [50, 200]},
        "targets": {"mags_p50_s": [0.42, 0.36], "mags_p50_at_most_1s": True}}))
    line = next(x for x in readme_headline(tmp_path).splitlines() if x.startswith("Speed:"))
    assert line.startswith("Speed: mags p50 0.42 / 0.36 s a turn at turns 50 / 200 of one game "
                           "(≤ 1 s: yes); on conv-26 0.36 s a turn")
    (tmp_path / "bench" / "agent.json").write_text(json.dumps({
        "config": {"turns": [50, 1000]},
        "targets": {"mags_p50_s": [0.34, 0.67], "mags_p50_at_most_1s": True, "mags_flat": True,
                    "mags_p50_by_kind": {"decision": [0.79, 0.79], "other": [0.31, 0.32]}}}))
    line = next(x for x in readme_headline(tmp_path).splitlines() if x.startswith("Speed:"))
    assert line.startswith("Speed: mags p50 0.34 / 0.67 s a turn at turns 50 / 1000 of one game; "
                           "a decision turn 0.79 / 0.79, another 0.31 / 0.32, flat: yes "
                           "(≤ 1 s: yes); on conv-26")
    # a run that timed turns alone, and the machine's prompt speed for that write model
    (tmp_path / "bench" / "conversation.json").write_text(json.dumps({
        "conversation": "conv-26", "role_models": {"write": "/x/write-grpo-q8_0.gguf"},
        "targets": {"turn_p50": {"limit_s": 0.5, "value": 0.362, "met": True},
                    "question_p50": {"limit_s": 1.0, "value": None, "met": False}}}))
    (tmp_path / "bench" / "llm.json").write_text(json.dumps({"models": [
        {"model": "write-grpo-q8_0.gguf", "prompt_tokens_per_s": 478.9}]}))
    line = next(x for x in readme_headline(tmp_path).splitlines() if x.startswith("Speed:"))
    assert line.endswith("; on conv-26 0.36 s a turn (≤ 0.5 s: yes; no question timed), on a "
                         "machine that reads the write model's prompts at 479 tokens/s "
                         "(`bench llm`).")


def test_the_readme_block_gives_the_chat_across_restarts(tmp_path):
    from mags_lib.summary import readme_headline

    _one_headline_row(tmp_path)
    assert "The chat across restarts" not in readme_headline(tmp_path)  # the study did not run
    (tmp_path / "chat").mkdir()
    (tmp_path / "chat" / "chat_restart_test.json").write_text(json.dumps({
        "conversations": ["persona-test-1", "persona-test-2"],
        "scores": {"current_accuracy": 0.625, "n_current": 24, "stale_rate": 0.042,
                   "earlier_accuracy": 0.071, "when_accuracy": 0.5, "unknown_abstention": 0.5},
        "changed_facts": {"current_accuracy": 0.706, "n_current": 17}}))
    line = next(x for x in readme_headline(tmp_path).splitlines()
                if x.startswith("The chat across restarts"))
    assert "(2 test personas" in line and "current value 0.625 of 24 questions" in line
    assert "0.706 of the 17 whose fact changed" in line and "stale 0.042" in line


def test_the_test_splits_say_where_a_missed_locomo_f1_goes(tmp_path):
    """A MAGS agent below `static_rag` on LoCoMo's F1 gets, in the README line, how often its
    lines showed evidence and what it scored there; the report gets the table for every agent."""
    from mags_lib.evaluation.conversation_targets import conversation_targets
    from mags_lib.summary import tasks_table, test_headline, test_splits_section

    m = _test_split_metrics()
    qa = m["locomo"]["qa"]
    qa["summary"]["mags"]["f1"] = 0.05
    qa["config"] = {"k": 10, "max_questions": 20}
    qa["rows"] = ([{"agent": "static_rag", "f1": 0.4, "abstained": False, "recall@10": 1.0,
                    "conversation": "conv-44", "question": q} for q in range(3)]
                  + [{"agent": "mags", "f1": 0.1, "abstained": True, "recall@10": 1.0},
                     {"agent": "mags", "f1": 0.0, "abstained": True, "recall@10": 0.0},
                     {"agent": "mags", "f1": 0.05, "abstained": False, "recall@10": 0.0},
                     {"agent": "mags", "category": 5, "abstained": True, "recall@10": 0.0}])
    for q, row in enumerate(qa["rows"][3:]):
        row.update(conversation="conv-44", question=q)
    qa["reads"] = [{"agent": "mags", "counts": {"write_calls": 10, "op_add": 3, "op_update": 1,
                                                "op_none": 6}}]
    m["targets"]["conversations"] = conversation_targets(m, ("mags",), m["judged"])
    (tmp_path / "13_test_splits").mkdir()
    (tmp_path / "13_test_splits" / "metrics.json").write_text(json.dumps(m))
    line = test_headline(tmp_path)
    assert ("why LoCoMo's F1 trails static RAG: `mags` against `static_rag` on the 3 answerable "
            "questions with gold evidence: F1 0.050 against 0.400; its lines show evidence for 1 "
            "(`static_rag` 3), where it scores F1 0.100 (`static_rag` 0.400) and abstains on "
            "1.000 (`static_rag` 0.000); where none is shown F1 0.025; its write model wrote "
            "from 0.400 of the turns") in line
    assert "5 LoCoMo test conversations (4 questions, a seeded sample of up to 20 a " \
        "conversation); one answer model" in tasks_table(tmp_path)  # the sample is named
    section = test_splits_section(tmp_path)
    assert "among the best 10 lines shown" in section
    assert "| `mags` | 3 | 1 | 0.100 | 1.000 | 0.025 | 0.500 | 0.400 |" in section
    assert "| `static_rag` | 3 | 3 | 0.400 | 0.000 | n/a | n/a | n/a |" in section
    # met (mags above static_rag): no clause
    qa["summary"]["mags"]["f1"] = 0.5
    m["targets"]["conversations"] = conversation_targets(m, ("mags",), m["judged"])
    (tmp_path / "13_test_splits" / "metrics.json").write_text(json.dumps(m))
    assert "why LoCoMo" not in test_headline(tmp_path)


def _test_split_metrics(smoke: bool = False) -> dict:
    game_rows = [{"surface": "test bank", "agent": a, "label": a, "accuracy": acc, "ci_low": 0.1,
                  "ci_high": 0.9, "after_drift": drift, "after_drift_ci_low": 0.1,
                  "after_drift_ci_high": 0.9, "seed_mean": acc, "seed_std": 0.0, "n_seeds": 3,
                  "governing_held_valid": None, "stale_recalled": None, "write_validity": None}
                 for a, acc, drift in (("bare", 0.4, 0.3), ("static_rag", 0.8, 0.6),
                                       ("mags_scripted", 0.95, 0.94), ("mags", 0.82, 0.66))]
    qa = {"persona": {"summary": {
        "mem0": {"upper_bound": False, "f1": 0.3, "persona": {"current_accuracy": 0.4,
                                                              "stale_rate": 0.2}},
        "mags": {"upper_bound": False, "f1": 0.5, "persona": {"current_accuracy": 0.86,
                                                              "stale_rate": 0.1}}}},
          "locomo": {"summary": {"static_rag": {"upper_bound": False, "f1": 0.12,
                                                "recall@10": 0.6},
                                 "mags": {"upper_bound": False, "f1": 0.15, "recall@10": 0.7}}}}
    ev = {"memory": {"all": {"recall@5": 0.5, "recall@10": 0.6}}}
    return {"smoke": smoke, "reader": "the trained answer model a.gguf",
            "game": {"headline": game_rows, "oracle_vs_bare_gap": 0.5, "evaluation_valid": True},
            "persona": {"split": "test", "conversations": 6, "evidence": ev, "qa": qa["persona"]},
            "locomo": {"split": "test", "conversations": 5, "evidence": ev, "qa": qa["locomo"]},
            "judged": {"write": {"n": 40, "op_accuracy": 0.85, "dropped": 2,
                                 "op_confusion": {"add": {"add": 10}}}},
            "targets": {"game": {"after_drift_mags_minus_static_rag": 0.06,
                                 "mags_over_scripted": 0.863,
                                 "met": {"after_drift": False, "vs_scripted": False}}}}


def _lines_in_readme_block(root, lead: str) -> int:
    """How often `lead` stands in a README whose block was regenerated twice from `root`
    (keeping the old block, as `make summary` does where notebook 06's results are missing)."""
    from mags_lib.summary import README_END, README_START, update_readme

    readme = root / "README.md"
    readme.write_text("intro\n" + README_START + "\n| agent | acc |\n|---|---|\n\n"
                      "Every table: `reports/RESULTS.md`.\n\n" + README_END + "\n")
    for _ in range(2):
        assert update_readme(readme, root, keep=True)
    return readme.read_text().count(lead)


def test_the_test_splits_reach_the_report_and_the_readme_block_with_their_targets(tmp_path):
    from mags_lib.evaluation.conversation_targets import conversation_targets
    from mags_lib.summary import (
        tasks_table,
        test_headline,
        test_splits_section,
    )

    assert "--only 13" in test_splits_section(tmp_path) and test_headline(tmp_path) is None
    m = _test_split_metrics()
    m["targets"]["conversations"] = conversation_targets(m, ("mags",), m["judged"])
    (tmp_path / "13_test_splits").mkdir()
    (tmp_path / "13_test_splits" / "metrics.json").write_text(json.dumps(m))
    section = test_splits_section(tmp_path)
    assert "| test bank | mags |" in section and "op accuracy 0.850" in section
    assert "| `mags` | persona_current | 0.860 | >= 0.85 | True |" in section
    assert "| `mags` | persona_stale | 0.100 | <= 0.05 | False |" in section
    line = test_headline(tmp_path)
    assert "`mags` persona_stale 0.100 (<= 0.05)" in line  # a missed target is named
    assert "persona_current" not in line  # a met one is not
    assert "sha256" not in line  # results saved before the files were named
    table = tasks_table(tmp_path)
    assert table.startswith("The tasks side by side: the test splits (notebook 13)")
    rows = {r.split(" | ")[0].strip("| `"): r for r in table.splitlines() if r.startswith("| `")}
    assert list(rows) == ["bare", "static_rag", "mem0", "mags", "mags_scripted"]
    assert rows["mags_scripted"].split(" | ")[1] == "upper bound: perfect writer, game structure given"
    assert " | 0.820 (0.10–0.90) | 0.660 | 0.860 | 0.100 | 0.500 | 0.150 | 0.700 |" in rows["mags"]
    assert rows["mem0"].endswith("| – | – | 0.400 | 0.200 | 0.300 | – | – |")
    m["models"] = {"reader": "llamacpp:answer-grpo-q8_0.gguf:288e8af8c0ffee00",
                   "write": "llamacpp:write-grpo-q8_0.gguf:866ada74c0ffee00"}
    (tmp_path / "13_test_splits" / "metrics.json").write_text(json.dumps(m))
    assert "model files by sha256 prefix: reader 288e8af8, write 866ada74)" in test_headline(
        tmp_path)
    # judged: 4 locomo/persona targets met of 5 with numbers (no full_context), write not met,
    # the game's two not met
    assert "targets met: 3 of 8; missed:" in line and line.endswith("(`reports/RESULTS.md`).")
    assert _lines_in_readme_block(tmp_path, "Test splits (notebook 13") == 1
    assert _lines_in_readme_block(tmp_path, "The tasks side by side") == 1
    assert _lines_in_readme_block(tmp_path, "| `mags` |") == 1  # the table replaced, not added
    from mags_lib.summary import readme_headline

    _one_headline_row(tmp_path)
    block = readme_headline(tmp_path)
    assert (block.index("The tasks side by side") < block.index("Test splits (notebook 13")
            < block.index("The game in its development phrasings"))
    assert block.count("Test splits (notebook 13") == 1


def test_the_conversation_targets_are_judged_from_the_numbers_and_none_where_missing():
    from mags_lib.evaluation.conversation_targets import conversation_targets

    m = _test_split_metrics()
    t = conversation_targets(m, ("mags", "mags_episodic"), m["judged"])
    assert t["mags"]["locomo_evidence@10"] == {"value": 0.7, "target": ">= 0.75", "met": False}
    assert t["mags"]["locomo_f1_vs_static_rag"]["met"] is True
    assert t["mags"]["locomo_f1_vs_full_context"]["met"] is None  # full_context not run
    assert t["mags"]["persona_f1_vs_mem0"]["value"] == 0.2
    assert all(e["met"] is None for e in t["mags_episodic"].values())
    assert t["write_op_accuracy"]["met"] is False
    assert conversation_targets({}, ("mags",))["write_op_accuracy"]["value"] is None


def test_the_transfer_matrix_reaches_the_report_and_the_readme_block(tmp_path):
    from mags_lib.summary import (
        transfer_headline,
        transfer_section,
    )

    assert "--only 14" in transfer_section(tmp_path) and transfer_headline(tmp_path) is None
    cell = {"n": 10, "op_accuracy": 0.8, "op_ci95": [0.7, 0.9], "dropped": 0.1, "f1": 0.75,
            "op_balanced": 0.6,
            "op_confusion": {"add": {"add": 4, "none": 1}, "none": {"none": 4}, "update": {
                "add": 1}}}
    matrix = {"surfaces": {"game": 10, "persona": 10}, "skipped": ["LoCoMo test"],
              "reference": "mix", "cells": {w: {"game": cell, "persona": {
                  **cell, "op_accuracy": 0.5 if w == "game" else 0.8}} for w in ("mix", "game")},
              "differences": {"game": {"game": {"difference": 0.0, "ci95": [-0.1, 0.1]},
                                       "persona": {"difference": -0.3, "ci95": [-0.4, -0.2]}}}}
    (tmp_path / "14_transfer_matrix").mkdir()
    (tmp_path / "14_transfer_matrix" / "metrics.json").write_text(json.dumps({
        "smoke": False, "matrix": matrix, "trained_on": {"mix": "mix", "game": "game only"},
        "training": {"game": {"sources": ["game"], "stage": "grpo", "reused": True,
                              "data": {"n": {"train": 1398}}}}}))
    section = transfer_section(tmp_path)
    assert "| game only | 0.800 [0.70, 0.90], bal. 0.600 | 0.500 [0.70, 0.90], bal. 0.600 |" \
        in section
    assert "| game only | +0.000 [-0.10, 0.10] | -0.300 [-0.40, -0.20] |" in section
    assert "update: add 1" in section and "Not judged (no rows): LoCoMo test" in section
    assert "- `game`: sources game, 1398 train rows, stage grpo (reused)." in section
    (tmp_path / "14_transfer_matrix" / "config.json").write_text(json.dumps({"sides": {
        "game": {"sft": {"max_steps": 350}, "source_repeats": {"game": 2}}}}))
    assert ("- `game`: sources game, 1398 train rows (game x2), 350 SFT steps, stage grpo "
            "(reused).") in transfer_section(tmp_path)
    line = transfer_headline(tmp_path)
    assert line == ("Transfer matrix (notebook 14, the write model alone, op accuracy and "
                    "balanced): mix: game 0.800 (bal. 0.600), persona 0.800 (bal. 0.600); game "
                    "only: game 0.800 (bal. 0.600), persona 0.500 (bal. 0.600).")
    assert _lines_in_readme_block(tmp_path, "Transfer matrix (notebook 14") == 1


def test_the_mechanisms_on_conversations_reach_the_report_and_the_readme_block(tmp_path):
    from mags_lib.summary import (
        conversation_mechanisms_headline,
        conversation_mechanisms_section,
    )

    assert "--only 15" in conversation_mechanisms_section(tmp_path)
    assert conversation_mechanisms_headline(tmp_path) is None

    def effect(full, off, ci):
        return {"n": 48, "full": full, "ablated": off, "effect": full - off, "ci95": ci,
                "resampled": "conversations", "separated": ci[0] > 0 or ci[1] < 0}
    side = {"memory_size": 30.0, "supersession": None}
    table = [{"agent": "mags", "mechanism": "contradiction", "full": side, "ablated": side,
              "effects": {"current": effect(0.7, 0.4, [0.1, 0.5]),
                          "stale": effect(0.02, 0.3, [-0.4, -0.1])}},
             {"agent": "mags", "mechanism": "hebbian", "full": side, "ablated": side,
              "effects": {"current": effect(0.7, 0.7, [-0.05, 0.05])}}]
    (tmp_path / "15_conversation_mechanisms").mkdir()
    (tmp_path / "15_conversation_mechanisms" / "metrics.json").write_text(json.dumps({
        "smoke": False, "reader": "a reader", "persona": {
            "split": "test", "conversations": ["p1", "p2"], "ablations": table},
        "locomo": {"missing": "no LoCoMo here"}}))
    section = conversation_mechanisms_section(tmp_path)
    assert "| mags | contradiction | **0.700 → 0.400: +0.300 [+0.100, +0.500]** |" in section
    assert "| mags | hebbian | 0.700 → 0.700: +0.000 [-0.050, +0.050] |" in section
    assert "**locomo**: no LoCoMo here" in section
    line = conversation_mechanisms_headline(tmp_path)
    assert line.startswith("Mechanisms on conversations (notebook 15")
    assert ("persona test current: `mags` contradiction +0.300 [+0.10, +0.50], hebbian "
            "+0.000 [-0.05, +0.05]") in line
    assert "Intervals that exclude 0: persona mags without contradiction: current 0.700 -> " \
        "0.400; persona mags without contradiction: stale 0.020 -> 0.300." in line
    assert _lines_in_readme_block(tmp_path, "Mechanisms on conversations (notebook 15") == 1


def test_a_kept_readme_block_gets_a_rerun_chat_study_in_place(tmp_path):
    """Where notebook 06's results are missing the old block stays, but a chat study run here
    replaces its line where it stood (before 2026-12-01 it kept the old numbers)."""
    from mags_lib.summary import README_END, README_START, update_readme

    readme = tmp_path / "README.md"
    readme.write_text("intro\n" + README_START + "\n| agent | acc |\n|---|---|\n\n"
                      "The chat across restarts (old): current value 0.100.\n\nlater line\n\n"
                      "Every table: `reports/RESULTS.md`.\n\n" + README_END + "\n")
    root = tmp_path / "results"
    (root / "chat").mkdir(parents=True)
    (root / "chat" / "chat_restart_test.json").write_text(json.dumps({
        "conversations": ["a", "b", "c"], "scores": {"current_accuracy": 0.625, "n_current": 24},
        "changed_facts": {"current_accuracy": 0.765, "n_current": 17}}))
    for _ in range(2):
        assert update_readme(readme, root, keep=True)
    text = readme.read_text()
    assert "0.100" not in text and text.count("The chat across restarts") == 1
    assert "current value 0.625 of 24 questions" in text
    assert text.index("The chat across restarts") < text.index("later line")


def test_a_scored_bank_of_phrasings_reaches_the_report_and_the_readme_block(tmp_path):
    from mags_lib.summary import banks_headline, banks_section, readme_headline

    assert banks_headline(tmp_path) is None and "mags_lib bank" in banks_section(tmp_path)
    rows = _test_split_metrics()["game"]["headline"]
    targets = {"after_drift_mags_minus_static_rag": 0.06, "mags_over_scripted": 0.863,
               "met": {"after_drift": False, "vs_scripted": False}}
    for name, smoke in (("mine", False), ("mine_smoke", True)):
        folder = tmp_path / "game_bank" / name
        folder.mkdir(parents=True)
        (folder / "headline.json").write_text(json.dumps(rows))
        (folder / "targets.json").write_text(json.dumps(targets))
        (folder / "manifest.json").write_text(json.dumps({"bank": "mine:abc",
                                                          "config": {"smoke": smoke}}))
    line = banks_headline(tmp_path)
    assert line.startswith("Banks of phrasings scored once") and "mine_smoke" not in line
    assert "mine: `bare` 0.400 / 0.300" in line and "mags / mags_scripted 0.863 (no)" in line
    assert "**mine** (`mine:abc`)" in banks_section(tmp_path)
    assert "alone on bank" not in banks_section(tmp_path)
    # the write model judged alone on the bank (`game_bank --writer`) joins its section, but
    # only a report on the same bank content
    writer = {"bank": "mine:abc", "model": "w", "n": 4, "op_accuracy": 0.5, "parsed": 1.0,
              "op_confusion": {"update": {"none": 2}}, "frames": [
                  {"frame": "announce/change: It corrects itself: {rule}", "n": 2,
                   "gold_ops": {"update": 2}, "accuracy": 0.0, "errors": {"update -> none": 2}}]}
    (tmp_path / "game_bank" / "mine" / "writer.json").write_text(json.dumps(writer))
    assert "| announce/change: It corrects itself: {rule} | 2 | update 2 | 0.000 |" \
        in banks_section(tmp_path)
    assert ('op accuracy 0.500, worst frame "It corrects itself: {rule}" 0.000 of 2 turns'
            in banks_headline(tmp_path))
    # another write model's report (`--write-model`) shows in RESULTS.md, never on the README line
    (tmp_path / "game_bank" / "mine" / "writer-other.json").write_text(json.dumps(
        {**writer, "model_file": "other.gguf", "deployed": False, "op_accuracy": 0.25,
         "frames": [{**writer["frames"][0], "frame": "announce/change: Hark: {rule}"}]}))
    section = banks_section(tmp_path)
    assert "Write model `other.gguf` (not the deployed write model) alone on bank" in section
    assert section.index("Write model `w`") < section.index("Write model `other.gguf`")
    assert "Hark" not in banks_headline(tmp_path)
    assert "op accuracy 0.500" in banks_headline(tmp_path)
    (tmp_path / "game_bank" / "mine" / "writer.json").write_text(json.dumps(
        {**writer, "deployed": False}))
    assert "alone (`--writer`)" not in banks_headline(tmp_path)
    (tmp_path / "game_bank" / "mine" / "writer-other.json").unlink()
    (tmp_path / "game_bank" / "mine" / "writer.json").write_text(json.dumps(
        {**writer, "bank": "mine:old"}))
    assert "alone on bank" not in banks_section(tmp_path)
    _one_headline_row(tmp_path)
    block = readme_headline(tmp_path)
    assert block.count("Banks of phrasings scored once") == 1
    assert block.index("Banks of phrasings") < block.index("The game in its development")


def _scored_bank(root, name, models=None):
    folder = root / "game_bank" / name
    folder.mkdir(parents=True)
    (folder / "headline.json").write_text(json.dumps(_test_split_metrics()["game"]["headline"]))
    (folder / "targets.json").write_text(json.dumps({
        "after_drift_mags_minus_static_rag": 0.06, "mags_over_scripted": 0.863,
        "met": {"after_drift": False, "vs_scripted": False}}))
    (folder / "manifest.json").write_text(json.dumps({
        "bank": f"{name}:abc", "config": {"smoke": False}, **({"models": models} if models else {})}))


def test_scoring_one_bank_keeps_the_other_banks_in_the_report_and_the_readme(tmp_path):
    import mags_lib.summary as summary

    first, second = tmp_path / "first", tmp_path / "second"
    _scored_bank(first, "old_bank")
    _scored_bank(second, "new_bank", {"answer": "a.gguf:1", "write": "w.gguf:1a2b3c4d5e6f"})
    render, update_readme = summary.render, summary.update_readme
    report = render(second, render(first))
    section = report.split(f"## {summary.BANKS_TITLE}", 1)[1].split("\n## ", 1)[0]
    assert "**new_bank** (`new_bank:abc`)" in section and "Models: answer `a.gguf:1`" in section
    assert section.index("**new_bank**") < section.index("_Kept from the previous report: banks")
    assert section.index("(old_bank)._") < section.index("**old_bank** (`old_bank:abc`)")
    assert render(second, report) == report  # kept once, not again on the next run
    # scored again, a bank replaces its kept table
    _scored_bank(second, "old_bank")
    again = render(second, report)
    assert again.count("**old_bank**") == 1 and "_Kept from the previous report: banks" not in again

    readme = tmp_path / "README.md"
    readme.write_text("intro\n" + summary.README_START + "\n| agent | acc |\n|---|---|\n\n"
                      "Every table: `reports/RESULTS.md`.\n\n" + summary.README_END + "\n")
    assert update_readme(readme, first, keep=True)
    assert "old_bank: `bare` 0.400 / 0.300" in readme.read_text()
    (second / "game_bank" / "old_bank" / "headline.json").unlink()  # only new_bank scored
    for _ in range(2):
        assert update_readme(readme, second, keep=True)
    line = next(ln for ln in readme.read_text().split("\n") if ln.startswith(summary.BANKS_LEAD))
    assert "new_bank (write model 1a2b3c4d): `bare` 0.400 / 0.300" in line
    assert "; old_bank (kept from the previous block): `bare` 0.400 / 0.300" in line
    assert line.count("old_bank") == 1 and line.endswith("(no).")


def test_the_conversation_benchmark_has_its_section_with_the_reader(tmp_path):
    from mags_lib.summary import conversation_bench_section

    assert "python -m mags_lib.bench conversation" in conversation_bench_section(tmp_path)
    bench = {"conversation": "conv-26", "turns": 200, "questions": 20, "memory_size": 52,
             "peak_rss_mb": 1200.0, "turn_s": {"p50": 0.47, "p95": 0.81},
             "question_s": {"p50": 0.75, "p95": 0.92},
             "stages_p50": {"turn": {"write": 0.43}, "question": {"answer": 0.42, "ask": 0.27}},
             "targets": {"turn_p50": {"limit_s": 0.5, "value": 0.47, "met": True},
                         "question_p50": {"limit_s": 1.0, "value": 0.75, "met": True}},
             "role_models": {"write": "/x/write-grpo-q8_0.gguf"},
             "reader": {"model": "/x/answer-grpo-q8_0.gguf", "what": "the trained answer model"}}
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "conversation.json").write_text(json.dumps(bench))
    text = conversation_bench_section(tmp_path)
    assert "| question | 20 | 0.750 | 0.920 | ask 0.270, recall –, answer 0.420 |" in text
    assert "turn p50 0.470 (≤ 0.5 s: yes)" in text and "reader `answer-grpo-q8_0.gguf`" in text
    del bench["reader"]  # a run from before the benchmark named its reader
    (tmp_path / "bench" / "conversation.json").write_text(json.dumps(bench))
    assert "did not yet name its reader" in conversation_bench_section(tmp_path)


def test_the_llm_benchmark_has_its_section(tmp_path):
    from mags_lib.summary import llm_bench_section

    assert "python -m mags_lib.bench llm" in llm_bench_section(tmp_path)
    bench = {"config": {"prompt_tokens": 130, "gen_tokens": 16, "repeats": 5},
             "machine": {"load_average_1m_5m_15m": [0.1, 0.2, 0.3]},
             "models": [{"model": "smollm2.Q4_1.gguf", "file_type": "Q4_1", "size_mb": 95.2,
                         "load_s": 0.31, "prompt_s_p50": 0.69, "prompt_tokens_per_s": 188.4,
                         "new_token_ms_p50": 21.5}]}
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "llm.json").write_text(json.dumps(bench))
    text = llm_bench_section(tmp_path)
    assert "A prompt of 130 tokens" in text and "[0.1, 0.2, 0.3]" in text
    assert "| `smollm2.Q4_1.gguf` | Q4_1 | 95.2 | 0.31 | 0.690 | 188 | 21.5 |" in text


def test_a_kept_section_names_every_missing_notebook_and_stays_clean_when_kept_again(tmp_path):
    """The training section reads notebooks 02 and 03: when both are missing its kept line names
    both, in one line, and a report kept twice (or one written with the older two-line note)
    keeps the previous table without an extra note."""
    old = ("# MAGS results\n\n## Training (02, 03)\n\n02_train_ask_model\n\n| role |\n|---|\n"
           "| ask |\n")
    once = render(tmp_path, previous=old)
    section = once.split("## Training (02, 03)\n\n", 1)[1].split("\n## ", 1)[0]
    first, rest = section.split("\n\n", 1)
    assert first.startswith("_Kept from the previous report") and first.endswith("._")
    assert "--only 02" in first and "--only 03" in first
    assert rest.startswith("02_train_ask_model") and "not found" not in rest
    assert render(tmp_path, previous=once).count("not found; run `python -m mags_lib.pipeline "
                                                  "--only 03`") == 1
    legacy = once.replace(first, "_Kept from the previous report: this run's `results/` lacks "
                          "it (a: not found; run `x`._\n\n_b: not found; run `y`)._")
    again = render(tmp_path, previous=legacy)
    assert "run `y`)._" not in again and again.count("02_train_ask_model") == 1
    # a folder outside the project is named in full, not by its last part only
    assert f"Generated by `make summary` from `{tmp_path.resolve()}/`" in again


def test_a_kept_bank_has_one_parenthesis_in_its_head_and_a_doubled_one_is_mended():
    from mags_lib.summary import BANKS_LEAD, merge_bank_lines

    line = f"{BANKS_LEAD} (notes; more): new (write model 1a2b): `bare` 0.5 / 0.4; targets: t (no)."
    old = (f"{BANKS_LEAD} (notes; more): a (write model 9f9f): `bare` 0.6 / 0.5; targets: u (no); "
           "b (kept from the previous block) (write model 8e8e): `bare` 0.7 / 0.6; "
           "c: `bare` 0.8 / 0.7.")
    merged = merge_bank_lines(line, old)
    assert "; a (write model 9f9f; kept from the previous block): `bare` 0.6 / 0.5" in merged
    assert "; b (write model 8e8e; kept from the previous block): `bare` 0.7 / 0.6" in merged
    assert "; c (kept from the previous block): `bare` 0.8 / 0.7." in merged
    assert merged.count(") (") == 0 and merged.startswith(line.rstrip("."))
    assert merge_bank_lines(line, merged) == merged  # kept once, unchanged on the next run


def test_the_recall_reranker_reaches_the_report_and_the_readme_line(tmp_path, monkeypatch):
    from mags_lib.summary import recall_reranker_section, reranker_headline

    assert reranker_headline(tmp_path) is None
    assert "not found" in recall_reranker_section(tmp_path)
    folder = tmp_path / "recall_reranker"
    folder.mkdir()
    row = {"questions": 10, "current_recall@5": 0.5, "reranked_recall@5": 0.6,
           "current_recall@10": 0.6, "reranked_recall@10": 0.7}
    (folder / "dev.json").write_text(json.dumps({"available": True, "same_as_shipped": True,
        "study": {"by_source": {"conv-26": row, "persona dev": {**row, "current_recall@10": 0.9,
                                                                "reranked_recall@10": 0.95}},
                  "held_out_pooled": row}}))
    summary = {"all": {"n": 10, "recall@5": 0.5, "recall@10": 0.61, "recall@10_ci95": [0.55, 0.66]}}
    (folder / "test.json").write_text(json.dumps({"available": True,
        "current": {"LoCoMo test": summary},
        "reranked": {"LoCoMo test": {"all": {**summary["all"], "recall@10": 0.72}}}}))
    line = reranker_headline(tmp_path)
    assert "held out by conversation 0.600 -> 0.700" in line and "0.900 -> 0.950" in line
    assert "LoCoMo test 0.610 -> 0.720 [0.55, 0.66]" in line
    assert "in the agents' dialogue memory since 2026-12-06, on the episodic nodes" in line
    from mags_lib.memory import DIALOGUE_MEMORY
    monkeypatch.setitem(DIALOGUE_MEMORY, "reranker", "")
    assert "not yet in the agents" in reranker_headline(tmp_path)
    section = recall_reranker_section(tmp_path)
    assert "| conv-26 | 10 | 0.500 | 0.600 | 0.600 | 0.700 |" in section
    assert "| reranked | LoCoMo test | 10 | 0.500 | 0.720 (0.55–0.66) |" in section
    assert "is the same as the shipped" in section
    (folder / "dev.json").write_text(json.dumps({"available": False, "why": "no LoCoMo file"}))
    (folder / "test.json").unlink()
    assert recall_reranker_section(tmp_path) == "_LoCoMo was not here: no LoCoMo file_"


def test_a_notebook_missing_from_a_shared_section_keeps_its_previous_block():
    """Training shows notebooks 02 and 03: with only 03 rerun, 02's tables are kept."""
    from mags_lib.summary import KEPT_MARK, merge_kept_notebooks

    previous = ("_Kept from the previous report: x._\n\n02_train_ask_model\n\n| ask 02 |\n\n"
                "03_train_write_model\n\n| write 03 old |\n\nops old")
    body = ("_notebook 02 results: not found; run `python -m mags_lib.pipeline --only 02`._"
            "\n\n03_train_write_model\n\n| write 03 new |")
    merged = merge_kept_notebooks(body, previous)
    assert merged.startswith(KEPT_MARK) and "notebook 02 results: not found" in merged
    assert "02_train_ask_model\n\n| ask 02 |\n\n03_train_write_model\n\n| write 03 new |" in merged
    assert "old" not in merged and merged.count(KEPT_MARK) == 1
    assert merge_kept_notebooks(body, "nothing of 02 here") == body
