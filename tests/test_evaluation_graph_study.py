"""Memory dynamics study (notebook 05): traces are complete and tell the ablations apart."""

from __future__ import annotations

from mags_lib.evaluation.graph_study import GraphStudyConfig, run_graph_study, summarize_trace
from mags_lib.game import GameConfig


def _study(variants, length=150):
    cfg = GraphStudyConfig(variants=variants, seeds=[0], game=GameConfig(episode_length=length),
                         embedder="hashing", snapshot_every=50)
    return run_graph_study(cfg)


def test_trace_has_one_row_per_turn_and_counts_add_up():
    study = _study(["mags_scripted"])
    rows = study.traces["mags_scripted"][0]
    assert [r["turn"] for r in rows] == list(range(len(rows)))
    for r in rows:
        assert r["nodes"] == r["valid_nodes"] + r["superseded_nodes"]
        assert r["valid_nodes"] == r["episodic"] + r["semantic"]
        assert sum(r["edge_kinds"].values()) == r["edges"]
    assert [t for t, _ in study.snapshots] == [0, 50, 100]
    assert study.memories["mags_scripted"].graph.number_of_nodes() == rows[-1]["nodes"]


def test_supersession_keeps_stale_rules_out_of_recall():
    study = _study(["mags_scripted", "mags_scripted_no_contradiction"], length=300)
    full, ablated = study.summary["mags_scripted"], study.summary["mags_scripted_no_contradiction"]
    assert study.changes[0], "the game must change rules for this test to mean anything"
    assert full["stale_recall_rate"] < ablated["stale_recall_rate"]
    assert full["accuracy"] > ablated["accuracy"]


def test_summarize_trace_on_hand_rows():
    rows = [{"turn": 0, "nodes": 1, "edges": 0, "churn": 0, "solid_edges": 0},
            {"turn": 1, "nodes": 2, "edges": 1, "churn": 2, "solid_edges": 0, "decision": True,
             "correct": True, "hit": True, "stale": False},
            {"turn": 2, "nodes": 2, "edges": 1, "churn": 1, "solid_edges": 1, "decision": True,
             "correct": False, "hit": False, "stale": True}]
    s = summarize_trace(rows)
    assert (s["accuracy"], s["recall_hit_rate"], s["stale_recall_rate"]) == (0.5, 0.5, 0.5)
    assert (s["final_nodes"], s["max_nodes"], s["mean_churn"]) == (2, 2, 1.0)
