"""`python -m mags_lib.summary`: the headline tables of the last run, as Markdown.

Reads what the notebooks and the benchmark wrote (`results/pipeline.json`,
`results/NN_name/metrics.json`, `results/06_evaluate_game/{targets,answer_model}.json`,
`results/bench/{memory,agent}.json`) and prints every table; `--out PATH` also writes them
(default `results/SUMMARY.md`; `make summary` writes the committed `reports/RESULTS.md`), and
`--readme README.md` refreshes the README's short headline block. A missing result is reported
as missing, with the command that makes it, unless the report being replaced had that section:
then (`--keep`, the default) its previous body stays under a line saying it was kept, so that
re-running one notebook does not blank the tables of the others. Nothing here computes a number
of its own.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.paths import PROJ_ROOT, RESULTS_DIR


def _load(path: Path) -> Any | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _load_run(root: Path, folder: str) -> dict | None:
    """A notebook's metrics.json; where that run is partial (stopped, or still running) and the
    last complete run was kept beside it (`manifest.PartialRun`), the kept one, marked
    `shown_kept_run` so the section says so."""
    from mags_lib.manifest import LAST_COMPLETE, is_partial

    m = _load(root / folder / "metrics.json")
    if not is_partial(m):
        return m
    kept = _load(root / folder / LAST_COMPLETE / "metrics.json")
    return {**kept, "shown_kept_run": True} if isinstance(kept, dict) else m


def _run_note(m: dict, number: str) -> list[str]:
    """The lines a section opens with: SMOKE, and which run of a partly rerun notebook."""
    out = ["_SMOKE run_"] if m.get("smoke") else []
    if m.get("shown_kept_run"):
        out.append(f"_The last complete run of notebook {number}; a later run stopped partway "
                   f"(its parts are in `metrics.json`, this run in `last_complete/`)._")
    elif m.get("partial"):
        out.append(f"_A partial run: notebook {number} stopped before its last part._")
    return out


def _f(x: Any, digits: int = 3, signed: bool = False) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    return str(x)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _missing(what: str, how: str) -> str:
    return f"_{what}: not found; run `{how}`._"


def pipeline_section(root: Path) -> str:
    data = _load(root / "pipeline.json")
    if not data:
        return _missing("results/pipeline.json", "make reproduce")
    rows = [[r["notebook"], "SMOKE" if r.get("smoke", data.get("smoke")) else "full",
             "ok" if r.get("ok") else f"failed: {r.get('error', '')}", _f(r.get("seconds"), 0),
             r.get("finished", "–")] for r in data.get("runs", [])]
    return _table(["notebook", "mode", "status", "seconds", "finished (UTC)"], rows)


def merge_pipeline_rows(body: str, previous: str) -> str:
    r"""The pipeline table with the previous report's rows for the notebooks this machine's
    record lacks (a run of one notebook keeps the others' last runs), in notebook order.

    >>> new = "| notebook | mode |\n|---|---|\n| 12_c.ipynb | full |"
    >>> old = "| notebook | mode |\n|---|---|\n| 01_a.ipynb | full |\n| 12_c.ipynb | SMOKE |"
    >>> merge_pipeline_rows(new, old).splitlines()[2:]
    ['| 01_a.ipynb | full |', '| 12_c.ipynb | full |']
    """
    def rows(text: str) -> dict[str, str]:
        return {ln.split("|")[1].strip(): ln for ln in text.splitlines()
                if ln.startswith("| ") and ".ipynb" in ln.split("|")[1]}
    mine, kept = rows(body), rows(previous.split(KEPT_MARK, 1)[0] if KEPT_MARK in previous
                                  else previous)
    merged = {**kept, **mine}
    head = [ln for ln in body.splitlines() if not (ln.startswith("| ") and ".ipynb" in ln)]
    return "\n".join(head[:2] + [merged[k] for k in sorted(merged)] + head[2:])


def synth_section(root: Path) -> str:
    m = _load(root / "01_synthesize_dataset" / "metrics.json")
    if not m:
        return _missing("notebook 01 results", "python -m mags_lib.pipeline --only 01")
    rows = [[task, c.get("train"), c.get("val"), c.get("test")]
            for task, c in m.get("counts", {}).items()]
    return _table(["task", "train", "val", "test"], rows)


def training_section(root: Path) -> str:
    parts = []
    for nb, roles in (("02_train_ask_model", ("ask", "answer")), ("03_train_write_model", ("write",))):
        m = _load(root / nb / "metrics.json")
        if not m:
            parts.append(_missing(f"notebook {nb[:2]} results",
                                  f"python -m mags_lib.pipeline --only {nb[:2]}"))
            continue
        rows = []
        for role in roles:
            r = m.get(role) or {}
            for stage in ("base", "sft", "grpo"):
                s = r.get("stages", {}).get(stage)
                if not s:
                    continue
                g = s.get(role, {})
                rows.append([role, stage, g.get("n"), _f(g.get("adherence")),
                             f"{g.get('accuracy_name', 'accuracy')} {_f(g.get('accuracy'))}"
                             + _per_query(g),
                             _f(s.get("train_s"), 0), _f(s.get("wall_s"), 0),
                             _f(s.get("peak_rss_mb"), 0)])
            test = (r.get("test") or {}).get(role)
            if test:
                final = test.get("stage") or r.get("selected_stage") or "grpo"
                rows.append([role, f"{final} (final), test split", test.get("n"),
                             _f(test.get("adherence")),
                             _f(test.get("accuracy")) + _per_query(test), "", "", ""])
        smoke = " (SMOKE run)" if m.get("smoke") else ""
        parts.append(f"{nb}{smoke}\n\n" + _table(
            ["role", "stage", "n judged", "adherence (no grammar)", "accuracy", "train s",
             "stage wall s", "peak RSS MB"], rows))
        parts += [n for role in roles if (n := _selection_note(root, role, m.get(role) or {}))]
        if m.get("write_ops"):
            parts.append(write_ops_table(m["write_ops"]))
    return "\n\n".join(parts)


def _selection_note(root: Path, role: str, run: dict) -> str | None:
    """A line when `models/<role>-selected.json` (beside the results folder) names another
    stage than the run's final one: the models the later notebooks use are then not the ones
    whose test split the table shows."""
    from mags_lib.checkpoints import selection_path

    path = selection_path(role, root.parent / "models")
    ran = ((run.get("test") or {}).get(role) or {}).get("stage") or run.get("selected_stage")
    try:
        chosen = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(chosen, dict) or not ran or chosen.get("stage") in (None, ran):
        return None
    return (f"_`models/{path.name}` names **{chosen['stage']}**, not this run's {ran}: the "
            f"later notebooks use {role}-{chosen['stage']}, whose test split this table does "
            f"not show. Its reason: {chosen.get('reason', 'none recorded')}._")


def write_ops_table(rows: list[dict]) -> str:
    """Notebook 03's op confusion per stage: the write model's discrete choice (gold op ->
    chosen op), on val rows and on rows in held-out phrasings, beside op accuracy, F1 and
    text exact (the stored sentence is exactly the gold one) and facts dropped (add / update
    rows written as nothing; "-" in runs before either)."""
    ops = ("add", "update", "none")
    body = [[r["rows"], r["stage"], r["n"], _f(r.get("op_accuracy")), _f(r.get("F1")),
             _f(r.get("text_exact")), _f(r.get("facts_dropped")), _f(r.get("adherence")),
             *[" / ".join(str(r.get(f"{want} -> {got}", 0)) for got in (*ops, "bad"))
               for want in ops]] for r in rows]
    return ("The write model's op (gold -> chosen add / update / none / unparsed):\n\n"
            + _table(["rows", "stage", "n", "op accuracy", "F1", "text exact", "facts dropped",
                      "adherence",
                      "add ->", "update ->", "none ->"], body))


def _per_query(g: dict) -> str:
    """' (per query 0.93, 1.5 queries / row)' for an ask report with query hit rates, else ''."""
    at = g.get("query_hit_at") or {}
    q = at.get("1", at.get(1))
    if q is None:
        return ""
    return f" (per query {_f(q)}, {_f(g.get('queries_per_row'), 1)} queries / row)"


def seeds_section(root: Path) -> str:
    """Notebook 07: the ask models over GRPO seeds, pooled over val and test when judged on
    both, else on the first split judged."""
    from mags_lib.train.seed_spread import markdown

    for name in ("grpo_seeds_pooled.json", "grpo_seeds_val.json", "grpo_seeds_test.json"):
        out = _load(root / "07_ask_grpo_seeds" / name)
        if out and out.get("models"):
            return markdown(out)
    return _missing("notebook 07 results", "python -m mags_lib.pipeline --only 07")


STUDIES = {"08_write_objectives": ("08", "Write model trained by F1, by the memory's outcome or "
                                          "by their mix"),
           "11_ask_objectives": ("11", "Ask model trained by F1 to the gold queries or by "
                                       "whether its queries find the rule")}
"""The objective studies (folder -> notebook number, README lead): same loop.json layout."""


def _study_section(root: Path, folder: str, study_markdown) -> str:
    number = STUDIES[folder][0]
    out = _load(root / folder / "metrics.json")
    if not out or not out.get("models"):
        return _missing(f"notebook {number} results",
                        f"python -m mags_lib.pipeline --only {number}")
    text = ("_SMOKE run_\n\n" if out.get("smoke") else "") + study_markdown(out)
    loop = _load(root / folder / "loop.json")
    if loop and loop.get("played"):
        from mags_lib.evaluation.write_models import markdown as loop_markdown

        text += ("\n\nEach model in the closed loop (`mags`, notebook 06's evaluation games):"
                 "\n\n" + loop_markdown(loop["played"], loop.get("groups")))
    return text


def objectives_section(root: Path) -> str:
    """Notebook 08: the write model's GRPO under F1, outcome and mixed rewards."""
    from mags_lib.train.write_objectives import markdown

    return _study_section(root, "08_write_objectives", markdown)


def ask_objectives_section(root: Path) -> str:
    """Notebook 11: the ask model's GRPO under F1 to gold queries and the retrieval outcome."""
    from mags_lib.train.ask_objectives import markdown

    return _study_section(root, "11_ask_objectives", markdown)


def objectives_headline(root: Path, folder: str = "08_write_objectives") -> str | None:
    """One README line: after-drift accuracy in the loop per objective of a study."""
    loop = _load(root / folder / "loop.json") or {}
    groups = loop.get("groups") or {}
    if not groups:
        return None
    parts = []
    for name, g in groups.items():
        d = g["after_drift"]
        part = f"{name} {_f(d['mean'])} [{_f(d['ci_low'])}, {_f(d['ci_high'])}]"
        diff = g.get("after_drift_minus_reference")
        if diff:
            part += (f" ({_f(diff['mean'], signed=True)} [{_f(diff['ci_low'], signed=True)}, "
                     f"{_f(diff['ci_high'], signed=True)}] vs {diff['reference']})")
        parts.append(part)
    smoke = ", SMOKE run" if (_load(root / folder / "metrics.json") or {}).get(
        "smoke") else ""
    seeds = max(g["n"] for g in groups.values())
    number, lead = STUDIES[folder]
    return (f"{lead} (notebook {number}, after-drift accuracy of `mags` in the loop, mean of "
            f"{seeds} GRPO seeds, 95% t CI{smoke}): " + "; ".join(parts) + ".")


def mechanisms_section(root: Path) -> str:
    """Notebook 09: regimes x mechanisms, paired ablations, memory cost, Optuna tuning."""
    from mags_lib.evaluation.mechanisms import markdown, verdict_markdown

    m = _load(root / "09_mechanisms" / "metrics.json")
    if not m or not m.get("mechanisms"):
        return _missing("notebook 09 results", "python -m mags_lib.pipeline --only 09")
    parts = ["_SMOKE run_"] if m.get("smoke") else []
    parts += [verdict_markdown(m["mechanisms"]),
              markdown(m["mechanisms"], m.get("baselines") or [], m.get("cost"))]
    tuning = m.get("tuning") or {}
    if tuning.get("heldout"):
        rows = [[h["regime"], _f(h["effect"], signed=True),
                 f"[{_f(h['ci_low'], signed=True)}, {_f(h['ci_high'], signed=True)}]",
                 _f(h["tuned_score"], 4), _f(h["default_score"], 4)] for h in tuning["heldout"]]
        parts += [f"Optuna ({len(tuning.get('config', {}).get('train_seeds', []))} training "
                  f"seeds, {tuning.get('config', {}).get('trials')} trials), judged on held-out "
                  f"seeds: tuned minus default accuracy, and the composite objective J; the "
                  f"tuned config wins: {tuning.get('wins')}.",
                  _table(["regime", "tuned − default", "95% CI", "tuned J", "default J"], rows)]
    return "\n\n".join(parts)


def textworld_section(root: Path) -> str:
    """Notebook 10: the agents on generated TextWorld games."""
    from mags_lib.evaluation.textworld_eval import summarize_textworld, textworld_markdown

    m = _load(root / "10_textworld" / "metrics.json")
    if not m or not m.get("games"):
        return _missing("notebook 10 results", "python -m mags_lib.pipeline --only 10")
    rows = summarize_textworld(m["games"])  # the table from the games, as the notebook does
    return ("_SMOKE run_\n\n" if m.get("smoke") else "") + \
        f"{m.get('decision_llm', '')}\n\n" + textworld_markdown(rows)


def conversations_section(root: Path) -> str:
    """Notebook 12: evidence recall, supersession and QA on the persona set and LoCoMo."""
    from mags_lib.evaluation.conversation_study import study_markdown

    m = _load(root / "12_conversations" / "metrics.json")
    if not m or not m.get("persona"):
        return _missing("notebook 12 results", "python -m mags_lib.pipeline --only 12")
    return ("_SMOKE run_\n\n" if m.get("smoke") else "") + study_markdown(m)


CONVERSATIONS_LEAD = "Conversations"


def conversations_headline(root: Path) -> str | None:
    """One line per source for the README: QA F1 of each agent, the upper bound labelled."""
    m = _load(root / "12_conversations" / "metrics.json") or {}
    parts = []
    for source in ("persona", "locomo"):
        qa = ((m.get(source) or {}).get("qa") or {}).get("summary") or {}
        if not qa:
            continue
        cur = {n: (s.get("persona") or {}).get("current_accuracy") for n, s in qa.items()}
        parts.append(f"{source} ({m[source]['split']} split): F1 " + ", ".join(
            f"`{n}`{' (upper bound)' if s['upper_bound'] else ''} {_f(s.get('f1'))}"
            + (f" / current {_f(cur[n])}" if cur.get(n) is not None else "")
            + (f" / evidence@10 {_f(s['recall@10'])}" if s.get("recall@10") is not None else "")
            for n, s in qa.items()) + _beaten(qa))
    if not parts:
        return None
    reader = f": {m['reader']}" if m.get("reader") else ""
    return (f"{CONVERSATIONS_LEAD} (notebook 12, one answer model{reader}"
            f"{', SMOKE run' if m.get('smoke') else ''}): " + "; ".join(parts) + ".")


TEST_LEAD = "Test splits"


def test_splits_section(root: Path) -> str:
    """Notebook 13: the frozen configuration on the game's test bank, the persona test set and
    LoCoMo's test conversations, with the issue's targets."""
    from mags_lib.evaluation.conversation_study import study_markdown
    from mags_lib.evaluation.conversation_targets import targets_markdown
    from mags_lib.evaluation.headline import headline_markdown

    m = _load_run(root, "13_test_splits")
    if not m or not m.get("game"):
        return _missing("notebook 13 results", "python -m mags_lib.pipeline --only 13")
    game, targets = m["game"], m.get("targets") or {}
    gt = targets.get("game") or {}
    out = _run_note(m, "13")
    out += [f"The game's test bank (oracle − bare {_f(game.get('oracle_vs_bare_gap'), signed=True)}"
            f", evaluation valid: {game.get('evaluation_valid')}):", "",
            headline_markdown(game["headline"]), "",
            f"Game targets: mags after drift − static_rag "
            f"{_f(gt.get('after_drift_mags_minus_static_rag'), signed=True)} (≥ +0.10: "
            f"{_f((gt.get('met') or {}).get('after_drift'))}); mags / mags_scripted "
            f"{_f(gt.get('mags_over_scripted'))} (≥ 0.9: {_f((gt.get('met') or {}).get('vs_scripted'))}).",
            "", study_markdown(m)]
    w = (m.get("judged") or {}).get("write")
    if w:
        out += ["", f"The write model alone on {w['n']} persona test turns, as in play: op accuracy "
                f"{_f(w['op_accuracy'])}, confusion (gold -> chosen) "
                f"`{json.dumps(w['op_confusion'])}`, facts dropped {_f(w['dropped'])}."]
    a = (m.get("judged") or {}).get("ask")
    if a:
        out += [f"The ask model alone on {a['n']} persona test questions: hit@3 {_f(a['hit'])}."]
    if targets.get("conversations"):
        out += ["", targets_markdown(targets["conversations"])]
    split = _locomo_split(m)
    if split:
        out += ["", "Where LoCoMo's F1 goes (`evaluation.evidence_split`; the answerable test "
                "questions split by whether any evidence turn is among the best 10 lines "
                "shown):", "", split]
    return "\n".join(out)


def _locomo_split(m: dict) -> str:
    """`evidence_split.split_markdown` of a study's LoCoMo rows ('' where none)."""
    from mags_lib.evaluation.evidence_split import split_markdown

    qa = (m.get("locomo") or {}).get("qa") or {}
    return split_markdown(qa.get("rows") or [], qa.get("reads") or [])


def _f1_gaps(m: dict, targets: dict) -> list[str]:
    """For each MAGS agent that misses F1 above `static_rag` on LoCoMo, where the F1 goes
    (`evidence_split.gap_clause`)."""
    from mags_lib.evaluation.evidence_split import gap_clause

    qa = (m.get("locomo") or {}).get("qa") or {}
    out = []
    for agent, entries in (targets.get("conversations") or {}).items():
        if "value" in entries or (entries.get("locomo_f1_vs_static_rag") or {}).get("met") is not False:
            continue
        clause = gap_clause(qa.get("rows") or [], qa.get("reads") or [], agent, "static_rag")
        if clause:
            out.append(clause)
    return out


def _beaten(qa: dict) -> str:
    """A README note where an agent beats an upper bound of the same run ('' where none)."""
    from mags_lib.evaluation.conversation_qa import bound_breaches

    breaches = bound_breaches(qa)
    return (f" (an upper bound beaten is not a bound: {'; '.join(breaches)}; it bounds the "
            "writing, not the reading: `reports/RESULTS.md`)") if breaches else ""


def test_headline(root: Path) -> str | None:
    """The README's line on the test splits under the side-by-side table (`tasks_table`): which
    models, the write model alone, the targets met and those missed, and where an agent beats an
    upper bound."""
    from mags_lib.evaluation.conversation_qa import bound_breaches

    m = _load_run(root, "13_test_splits") or {}
    if not m.get("game"):
        return None
    targets = m.get("targets") or {}
    judged, missed = [], []
    for agent, entries in (targets.get("conversations") or {}).items():
        for name, e in ({agent: entries} if "value" in entries else entries).items():
            if e.get("met") is not None:
                judged.append(e["met"])
                if not e["met"]:
                    who = "write model" if "value" in entries else f"`{agent}`"
                    missed.append(f"{who} {name} {_f(e.get('value'))} ({e.get('target')})")
    judged += [x for x in ((targets.get("game") or {}).get("met") or {}).values() if x is not None]
    parts = [f"targets met: {sum(bool(x) for x in judged)} of {len(judged)}"
             + (f"; missed: {', '.join(missed)}" if missed else "")]
    w = (m.get("judged") or {}).get("write")
    if w and "write_op_accuracy" not in (targets.get("conversations") or {}):
        parts.append(f"write model op accuracy on the persona test turns {_f(w['op_accuracy'])}")
    breaches = [f"{source}: {b}" for source in ("persona", "locomo")
                for b in bound_breaches(((m.get(source) or {}).get("qa") or {}).get("summary")
                                        or {})]
    gaps = _f1_gaps(m, targets)
    if gaps:
        parts.append("why LoCoMo's F1 trails static RAG: " + "; ".join(gaps))
    if breaches:
        parts.append("upper bounds beaten (they bound the writing, not the reading): "
                     + "; ".join(breaches))
    files = _model_hashes(m.get("models") or {})
    return (f"{TEST_LEAD} (notebook 13{', SMOKE run' if m.get('smoke') else ''}; "
            f"{m.get('reader', '')}{f'; model files by sha256 prefix: {files}' if files else ''}"
            "): " + "; ".join(parts) + " (`reports/RESULTS.md`).")


BANKS_LEAD = "Banks of phrasings scored once"


def bank_runs(root: Path) -> dict[str, dict]:
    """{bank folder: {"headline", "targets", "bank", "writer", "other_writers"}} of every full
    (not SMOKE) run of `python -m mags_lib bank` under results/game_bank/; "writer" is the
    deployed write model's `--writer` report (`writer.json`) where one was made on the same bank
    content (else None), "other_writers" the reports of other write models on it
    (`writer-<file>.json`, `--write-model`), which only `reports/RESULTS.md` shows."""
    out = {}
    for folder in sorted((root / "game_bank").glob("*")):
        rows, targets = _load(folder / "headline.json"), _load(folder / "targets.json")
        run = _load(folder / "manifest.json") or {}
        if rows and targets is not None and not (run.get("config") or {}).get("smoke"):
            writer = _load(folder / "writer.json") or {}
            others = [w for w in (_load(f) or {} for f in sorted(folder.glob("writer-*.json")))
                      if w.get("bank") == run.get("bank")]
            same = writer.get("bank") == run.get("bank") and writer.get("deployed", True)
            out[folder.name] = {"headline": rows, "targets": targets, "bank": run.get("bank"),
                                "models": run.get("models") or {},
                                "writer": writer if same else None, "other_writers": others}
    return out


def _models_clause(models: dict[str, str]) -> str:
    """' (write model 1a2b3c4d)': which trained write model played a bank (its file's sha256
    prefix), '' where the run did not record it (runs before 2026-12-02).

    >>> _models_clause({"write": "write-grpo-q8_0.gguf:1a2b3c4d5e6f7a8b"})
    ' (write model 1a2b3c4d)'
    """
    write = (models or {}).get("write")
    return f" (write model {write.rsplit(':', 1)[-1][:8]})" if write else ""


def banks_section(root: Path) -> str:
    """Every bank of phrasings scored with `game_bank`: its headline table and targets."""
    from mags_lib.evaluation.bank_writer import frames_markdown
    from mags_lib.evaluation.game_bank import models_line
    from mags_lib.evaluation.headline import headline_markdown

    runs = bank_runs(root)
    if not runs:
        return _missing("a scored bank of phrasings",
                        "python -m mags_lib bank data/banks/<bank>.json")
    out = []
    for name, r in runs.items():
        t = r["targets"]
        out += [f"**{name}** (`{r['bank']}`)", ""]
        if r["models"]:
            out += [models_line(r["models"]), ""]
        out += [headline_markdown(r["headline"]), "",
                f"Targets: mags after drift − static_rag "
                f"{_f(t.get('after_drift_mags_minus_static_rag'), signed=True)} (≥ +0.10: "
                f"{_f(t['met'].get('after_drift'))}); mags / mags_scripted "
                f"{_f(t.get('mags_over_scripted'))} (≥ 0.9: {_f(t['met'].get('vs_scripted'))}).",
                ""]
        for writer in ([r["writer"]] if r["writer"] else []) + r.get("other_writers", []):
            out += [frames_markdown(writer), ""]
    return "\n".join(out).rstrip()


BANKS_TITLE = "Banks of phrasings scored once (game_bank)"
KEPT_BANKS = ("_Kept from the previous report: banks this run's `results/` has not scored, as "
              "their own runs scored them ({names})._")


def _bank_chunks(body: str) -> dict[str, str]:
    r"""A banks section's subsections by bank name (kept-marker lines dropped).

    >>> _bank_chunks("**a** (`a:1`)\n\n| t |\n\n_Kept from the previous report: x._\n\n**b** (`b:2`)\n\nw")
    {'a': '**a** (`a:1`)\n\n| t |', 'b': '**b** (`b:2`)\n\nw'}
    """
    import re

    out: dict[str, list[str]] = {}
    name = None
    for line in body.split("\n"):
        head = re.match(r"\*\*([^*]+)\*\* \(`", line)
        if head:
            name = head.group(1)
            out[name] = []
        if name is not None and not line.startswith(KEPT_MARK):
            out[name].append(line)
    return {n: "\n".join(lines).strip() for n, lines in out.items()}


def merge_kept_banks(body: str, previous: str) -> str:
    """The banks section `body` of this run, followed by the previous report's banks that this
    run did not score, under a line saying they were kept: scoring one bank again (or a new
    one) does not blank the others' tables."""
    mine, old = _bank_chunks(body), _bank_chunks(previous)
    kept = [name for name in old if name not in mine]
    if not kept or _is_missing(body):
        return body
    return "\n\n".join([body.rstrip(), KEPT_BANKS.format(names=", ".join(kept)),
                        *(old[name] for name in kept)])


def _bank_parts(line: str) -> dict[str, str]:
    r"""The README's banks line split into its banks' parts, by name.

    >>> _bank_parts("Banks (x; y): a: `bare` 0.5 / 0.4; targets: t; b (write model 12ab): `bare` 1")
    {'a': 'a: `bare` 0.5 / 0.4; targets: t', 'b': 'b (write model 12ab): `bare` 1'}
    """
    head = re.compile(r"(?:(?<=\): )|(?<=; ))([\w.-]+)(?: \([^)]*\))*: `")
    starts = [(m.start(), m.group(1)) for m in head.finditer(line)]
    return {name: line[at:(starts[i + 1][0] - 2 if i + 1 < len(starts) else None)].rstrip(".")
            for i, (at, name) in enumerate(starts)}


KEPT_BANK = "kept from the previous block"


def _marked_kept(name: str, part: str) -> str:
    """A bank's part of the README line, its head marked as kept: inside the head's own
    parenthesis where it has one, so that the head holds one parenthesis (a line written
    before this rule, with two, is mended).

    >>> _marked_kept("b", "b: `bare` 1")
    'b (kept from the previous block): `bare` 1'
    >>> _marked_kept("b", "b (write model 12ab): `bare` 1")
    'b (write model 12ab; kept from the previous block): `bare` 1'
    >>> _marked_kept("b", "b (kept from the previous block) (write model 12ab): `bare` 1")
    'b (write model 12ab; kept from the previous block): `bare` 1'
    """
    head, sep, rest = part.partition(": ")
    notes = [x.strip() for n in re.findall(r"\(([^)]*)\)", head[len(name):])
             for x in n.split(";") if x.strip() and x.strip() != KEPT_BANK]
    return f"{name} ({'; '.join([*notes, KEPT_BANK])}){sep}{rest}"


def merge_bank_lines(line: str, previous: str) -> str:
    """This run's README banks line with the previous line's banks that this run did not
    score appended, each marked as kept."""
    mine, old = _bank_parts(line), _bank_parts(previous)
    kept = [_marked_kept(name, part) for name, part in old.items() if name not in mine]
    if not kept or not mine:
        return line
    return line.rstrip(".") + "; " + "; ".join(kept) + "."


def _merge_banks_in(text: str, previous: str) -> str:
    """`text` (README block lines) with its banks line merged with `previous`'s."""
    old = next((ln for ln in previous.split("\n") if ln.startswith(BANKS_LEAD)), None)
    if old is None:
        return text
    return "\n".join(merge_bank_lines(ln, old) if ln.startswith(BANKS_LEAD) else ln
                     for ln in text.split("\n"))


def _writer_clause(writer: dict | None) -> str:
    """'; the write model alone ...' with its worst frame, from a `--writer` report."""
    if not writer or not writer.get("frames"):
        return ""
    worst = writer["frames"][0]
    frame = worst["frame"].split(": ", 1)[-1]
    return (f"; the write model alone (`--writer`) op accuracy {_f(writer['op_accuracy'])}, "
            f"worst frame \"{frame}\" {_f(worst['accuracy'])} of {worst['n']} turns")


def banks_headline(root: Path) -> str | None:
    """The README's line: each scored bank, the agents' accuracy / after drift, the targets."""
    runs = bank_runs(root)
    if not runs:
        return None
    parts = []
    for name, r in runs.items():
        rows = {x["agent"]: x for x in r["headline"]}
        t = r["targets"]
        parts.append(f"{name}{_models_clause(r['models'])}: " + ", ".join(
            f"`{a}`{' (upper bound)' if a == 'mags_scripted' else ''} {_f(x['accuracy'])} / "
            f"{_f(x['after_drift'])}" for a, x in rows.items() if a != "oracle")
            + f"; targets: after drift − static_rag "
            f"{_f(t.get('after_drift_mags_minus_static_rag'), signed=True)} "
            f"({_f(t['met'].get('after_drift'))}), mags / mags_scripted "
            f"{_f(t.get('mags_over_scripted'))} ({_f(t['met'].get('vs_scripted'))})"
            + _writer_clause(r["writer"]))
    return (f"{BANKS_LEAD} (`python -m mags_lib bank`, notebook 13's settings; "
            "accuracy / after drift): " + "; ".join(parts) + ".")


TASKS_LEAD = "The tasks side by side"


def tasks_table(root: Path) -> str | None:
    """The README's first table: every agent on the game's test bank, the persona test set and
    LoCoMo's test conversations (notebook 13), with its lead line; None without notebook 13."""
    from mags_lib.evaluation.side_by_side import side_by_side_markdown

    m = _load_run(root, "13_test_splits") or {}
    table = side_by_side_markdown(m) if m.get("game") else ""
    if not table:
        return None
    n = {s: (m.get(s) or {}).get("conversations") for s in ("persona", "locomo")}
    seeds = max((r.get("n_seeds") or 0) for r in m["game"]["headline"])
    asked = _questions_asked(m, "locomo")
    return (f"{TASKS_LEAD}: the test splits (notebook 13{', SMOKE run' if m.get('smoke') else ''}"
            f"), scored once with the configuration frozen; the game's test bank of phrasings "
            f"({seeds} seeds), {n['persona'] or '–'} test personas, {n['locomo'] or '–'} LoCoMo "
            f"test conversations{asked}; one answer model; 95% intervals: Wilson over the pooled "
            "decisions (game), bootstrap over conversations:\n\n" + table)


def _questions_asked(m: dict, source: str) -> str:
    """' (N questions, a seeded sample of up to Q a conversation)' from a study's rows and
    config ('' where it has no rows): a sample is not the whole set, and the line says so."""
    qa = (m.get(source) or {}).get("qa") or {}
    asked = {(r.get("conversation"), r.get("question")) for r in qa.get("rows") or []}
    if not asked:
        return ""
    cap = (qa.get("config") or {}).get("max_questions")
    return f" ({len(asked)} questions" + (f", a seeded sample of up to {cap} a conversation)"
                                          if cap else ", all of them)")


def _model_hashes(models: dict[str, str]) -> str:
    """'reader 288e8af8, ask c543002c, write 866ada74' from a result's `models` (backend names,
    `conversation_study.model_ids`; a GGUF's ends in its sha256 prefix): two trainings of one
    recipe give different files and numbers, so the README says which draw it shows. Names
    without a hash (another backend) are left out.

    >>> _model_hashes({"reader": "llamacpp:answer.gguf:288e8af8aa:fa", "ask": "openai:gpt"})
    'reader 288e8af8'
    """
    out = []
    for role, name in models.items():
        parts = str(name).split(":")  # llamacpp:<file>:<digest>[:fa]
        if parts[0] == "llamacpp" and len(parts) >= 3 and len(parts[2]) >= 8:
            out.append(f"{role} {parts[2][:8]}")
    return ", ".join(out)


TRANSFER_LEAD = "Transfer matrix"


def transfer_section(root: Path) -> str:
    """Notebook 14: the write skill trained on one side or the mix, judged on every task."""
    from mags_lib.evaluation.transfer import transfer_markdown

    m = _load(root / "14_transfer_matrix" / "metrics.json")
    if not m or not m.get("matrix"):
        return _missing("notebook 14 results", "python -m mags_lib.pipeline --only 14")
    out = ["_SMOKE run_", ""] if m.get("smoke") else []
    out.append(transfer_markdown(m["matrix"], m.get("trained_on")))
    sides = (_load(root / "14_transfer_matrix" / "config.json") or {}).get("sides") or {}
    for side, t in (m.get("training") or {}).items():
        n = ((t.get("data") or {}).get("n") or {}).get("train")
        cfg = sides.get(side) or {}
        steps = (cfg.get("sft") or {}).get("max_steps")
        repeats = ", ".join(f"{s} x{k}" for s, k in (cfg.get("source_repeats") or {}).items())
        out.append(f"- `{side}`: sources {', '.join(t.get('sources') or [])}, {n} train rows"
                   f"{f' ({repeats})' if repeats else ''}"
                   f"{f', {steps} SFT steps' if steps else ''}, "
                   f"stage {t.get('stage')}{' (reused)' if t.get('reused') else ''}.")
    return "\n".join(out)


def transfer_headline(root: Path) -> str | None:
    """The README's line: each write model's op accuracy on each task's held-out text."""
    m = _load(root / "14_transfer_matrix" / "metrics.json") or {}
    matrix = m.get("matrix") or {}
    if not matrix.get("cells"):
        return None
    names = m.get("trained_on") or {}
    parts = [f"{names.get(w, w)}: " + ", ".join(
        f"{s} {_f(c['op_accuracy'])} (bal. {_f(c.get('op_balanced'))})"
        for s, c in by_surface.items())
             for w, by_surface in matrix["cells"].items()]
    return (f"{TRANSFER_LEAD} (notebook 14, the write model alone, op accuracy and balanced"
            f"{', SMOKE run' if m.get('smoke') else ''}): " + "; ".join(parts) + ".")


CONV_MECHANISMS_LEAD = "Mechanisms on conversations"
RERANKER_LEAD = "Recall's learned reranker"
RERANKER_DIR = "recall_reranker"
# The leads of the one-line headlines, in the README's order (`headline_lines`).
HEADLINE_LEADS = (CONVERSATIONS_LEAD, TEST_LEAD, BANKS_LEAD, TRANSFER_LEAD,
                  CONV_MECHANISMS_LEAD, RERANKER_LEAD)
CONV_MECHANISMS = "15_conversation_mechanisms"


def conversation_mechanisms_section(root: Path) -> str:
    """Notebook 15: the memory's mechanisms switched off one at a time on conversations."""
    from mags_lib.evaluation.conversation_mechanisms import mechanisms_markdown

    m = _load_run(root, CONV_MECHANISMS)
    if not m or not (m.get("persona") or m.get("missing")):
        return _missing("notebook 15 results", "python -m mags_lib.pipeline --only 15")
    return "".join(f"{line}\n\n" for line in _run_note(m, "15")) + mechanisms_markdown(m)


def conversation_mechanisms_headline(root: Path) -> str | None:
    """The README's line: each mechanism's paired effect on conversations."""
    from mags_lib.evaluation.conversation_mechanisms import mechanisms_headline

    m = _load_run(root, CONV_MECHANISMS) or {}
    line = mechanisms_headline(m) if m.get("persona") else None
    if not line:
        return None
    return (f"{CONV_MECHANISMS_LEAD} (notebook 15, the closed loop with one mechanism off, "
            "effect = with it minus without it, paired by question, 95% interval"
            f"{', SMOKE run' if m.get('smoke') else ''}): {line}")


def export_section(root: Path) -> str:
    m = _load(root / "04_export_gguf" / "metrics.json")
    if not m:
        return _missing("notebook 04 results", "python -m mags_lib.pipeline --only 04")
    rows = [[name, q, _f(s.get("size_mb"), 1), _f(s.get("tokens_per_s"), 1),
             _f(s.get("first_token_agreement")), _f(s.get("exact_match")),
             _f(s.get("prefix_agreement"))]
            for name, r in m.get("models", {}).items()
            for q, s in r.get("verify", {}).get("quants", {}).items()]
    return _table(["model", "type", "MB", "tokens/s", "first token = torch", "exact = torch",
                   "prefix agreement"], rows)


def dynamics_section(root: Path) -> str:
    m = _load(root / "05_graph_dynamics" / "metrics.json")
    if not m:
        return _missing("notebook 05 results", "python -m mags_lib.pipeline --only 05")
    rows = [[v, _f(s.get("accuracy")), _f(s.get("accuracy_std")), _f(s.get("recall_hit_rate")),
             _f(s.get("stale_recall_rate")), _f(s.get("final_nodes"), 0),
             _f(s.get("final_edges"), 0), _f(s.get("mean_churn"), 2)]
            for v, s in m.get("summary", {}).items()]
    return _table(["variant", "accuracy", "± seeds", "recall hit", "stale recall", "nodes",
                   "edges", "churn/turn"], rows)


def evaluation_section(root: Path) -> str:
    from mags_lib.evaluation.headline import headline_markdown

    out = root / "06_evaluate_game"
    rows = _load(out / "headline.json")
    if not rows:
        return _missing("notebook 06 results", "python -m mags_lib.pipeline --only 06")
    lines = []
    for surface in dict.fromkeys(r["surface"] for r in rows):
        m = _load(out / surface / "metrics.json") or {}
        lines.append(f"- {surface}: oracle - bare = {_f(m.get('oracle_vs_bare_gap'), signed=True)}"
                     f"; evaluation valid: {_f(m.get('evaluation_valid'))}")
    lines += ["", headline_markdown(rows)]
    targets = (_load(out / "targets.json") or {}).get("varied")
    if targets:
        lines += ["", "Closed-loop targets on the varied held-out surface:", "",
                  _table(["target", "value", "met"], [
                      ["mags after drift - static_rag after drift (>= +0.10)",
                       _f(targets.get("after_drift_mags_minus_static_rag"), signed=True),
                       _f(targets["met"].get("after_drift"))],
                      ["mags / mags_scripted (>= 0.9)", _f(targets.get("mags_over_scripted")),
                       _f(targets["met"].get("vs_scripted"))],
                      ["mags - mags_prompted (> 0)",
                       _f(targets.get("mags_minus_prompted"), signed=True),
                       _f(targets["met"].get("vs_prompted"))]])]
    study = _load(out / "answer_model.json")
    if study:
        rows = [[g["setting"], _f(g.get("oracle_minus_bare"), signed=True), _f(g.get("valid"))]
                for g in study.get("gaps", [])]
        lines += ["", "Decision LLM and prompt format (oracle - bare on the varied surface):", "",
                  _table(["setting", "oracle - bare", "valid"], rows)]
    return "\n".join(lines)


def bench_section(root: Path) -> str:
    m = _load(root / "bench" / "memory.json")
    if not m:
        return _missing("results/bench/memory.json",
                        "python -m mags_lib.bench memory --out results/bench/memory.json")
    rows = [[r["size"], _f(r.get("engram_per_s"), 0), _f(r["recall"]["p50_ms"], 1),
             _f(r["recall"]["p95_ms"], 1), _f(r.get("peak_rss_mb"), 0),
             _f(r.get("recall_answer_hit_rate")), _f(r.get("vector_index_approximate"))]
            for r in m.get("results", [])]
    text = _table(["nodes", "engram/s", "recall p50 ms", "recall p95 ms", "peak RSS MB",
                   "answer in top k", "HNSW"], rows)
    met = m.get("targets_met") or m.get("meets_targets")
    if met:
        text += "\n\nTargets at the largest size: " + ", ".join(
            f"{k} {'met' if v else 'MISSED'}" for k, v in met.items())
    return text


def agent_bench_section(root: Path) -> str:
    m = _load(root / "bench" / "agent.json")
    if not m:
        return _missing("results/bench/agent.json", "python -m mags_lib.bench agent")
    rows = []
    for name, a in m.get("agents", {}).items():
        for mark in a.get("marks", []):
            stages = mark.get("stages", {})
            rows.append([name, mark["turn"], _f(mark["turn_s"]["p50_s"], 2),
                         _f(mark["turn_s"]["p95_s"], 2), _f(mark["decision_turn_s"]["p50_s"], 2),
                         _f((mark.get("other_turn_s") or {}).get("p50_s"), 2),
                         (f"{mark['decisions_timed']} of {mark.get('turns_timed')}"
                          if "decisions_timed" in mark else "–"),
                         *[_f((stages.get(s) or {}).get("p50_s"), 3)
                           for s in ("write", "ask", "recall", "answer", "apply_step")],
                         _f(mark.get("prompt_tokens_per_turn"), 0)])
    text = _table(["agent", "turn", "p50 s/turn", "p95 s/turn", "p50 s/decision turn",
                   "p50 s/other turn", "decision turns timed",
                   "write p50", "ask p50", "recall p50", "answer p50", "apply+step p50",
                   "prompt tokens/turn"], rows)
    targets = m.get("targets") or {}
    if "mags_p50_at_most_1s" in targets:
        text += (f"\n\nmags p50 <= 1.0 s per turn at every mark: "
                 f"{_f(targets['mags_p50_at_most_1s'])}; flat (last mark within 1.5x the first"
                 + (", decision turns and other turns each; all turns pooled: "
                    f"{_f(targets.get('mags_flat_pooled'))}, which also moves with the window's "
                    "share of decision turns" if "mags_p50_by_kind" in targets else "")
                 + f"): {_f(targets.get('mags_flat'))}. Role models: "
                 + ", ".join(f"{role} `{_name(p)}`" for role, p in
                             (m.get("role_models") or {}).items())
                 + f"; decision LLM `{_name(m.get('decision_llm'))}`.")
    return text


def conversation_bench_section(root: Path) -> str:
    """`bench conversation`: `mags` reading one conversation and answering its questions, p50 /
    p95 seconds with each stage's p50, the targets, and which models (reader included) ran."""
    m = _load(root / "bench" / "conversation.json")
    if not m:
        return _missing("results/bench/conversation.json", "python -m mags_lib.bench conversation")
    stages = m.get("stages_p50") or {}
    rows = []
    for kind, n, names in (("turn", m.get("turns"), ("write", "write_recall", "apply_step")),
                           ("question", m.get("questions"), ("ask", "recall", "answer"))):
        s = m.get(f"{kind}_s") or {}
        rows.append([kind, n, _f(s.get("p50"), 3), _f(s.get("p95"), 3),
                     ", ".join(f"{x} {_f((stages.get(kind) or {}).get(x), 3)}" for x in names)])
    targets = m.get("targets") or {}
    met = "; ".join(f"{k.split('_')[0]} p50 {_f(t.get('value'), 3)} (≤ {t.get('limit_s')} s: "
                    f"{_f(t.get('met'))})" if t.get("value") is not None
                    else f"{k.split('_')[0]} not timed" for k, t in targets.items())
    reader = (m.get("reader") or {}).get("model")
    models = ", ".join(f"{role} `{_name(p)}`" for role, p in (m.get("role_models") or {}).items())
    return (f"On {m.get('conversation')} (memory of {m.get('memory_size')} nodes; "
            f"peak RSS {_f(m.get('peak_rss_mb'), 0)} MB):\n\n"
            + _table(["", "n", "p50 s", "p95 s", "stages p50 s"], rows)
            + f"\n\nTargets: {met}. Models: {models}; reader "
            + (f"`{_name(reader)}`" if reader else "the embedded base model (an earlier run: the "
               "benchmark did not yet name its reader)")
            + (f". {m['note']}" if m.get("note") else "") + ".")


def llm_bench_section(root: Path) -> str:
    """`bench llm`: each GGUF's quantization, size, load time, prompt evaluation (p50 s for the
    benchmark's prompt, tokens/s) and the p50 ms of a new token."""
    m = _load(root / "bench" / "llm.json")
    if not m or not m.get("models"):
        return _missing("results/bench/llm.json", "python -m mags_lib.bench llm")
    cfg = m.get("config") or {}
    rows = [[f"`{r['model']}`", r.get("file_type"), _f(r.get("size_mb"), 1),
             _f(r.get("load_s"), 2), _f(r.get("prompt_s_p50"), 3),
             _f(r.get("prompt_tokens_per_s"), 0), _f(r.get("new_token_ms_p50"), 1)]
            for r in m["models"]]
    load = (m.get("machine") or {}).get("load_average_1m_5m_15m")
    return (f"A prompt of {cfg.get('prompt_tokens')} tokens read from an empty cache and "
            f"{cfg.get('gen_tokens')} new tokens, "
            + ("once" if cfg.get("repeats") == 1 else f"{cfg.get('repeats')} times (p50)")
            + (f"; load average at the start {load}" if load else "") + ":\n\n"
            + _table(["model", "type", "MB", "load s", "prompt s", "prompt tokens/s",
                      "new token ms"], rows))


def _name(path: Any) -> str:
    """A model file by its name (results hold absolute paths of the machine that ran them)."""
    return Path(str(path)).name if path else "?"


README_START, README_END = "<!-- summary:start -->", "<!-- summary:end -->"
GAME_LEAD = "The game in its development phrasings"
MECHANISMS_LEAD = "Which mechanism pays off where"
REPORT_POINTER = "Every table"


def _prompt_rate(root: Path, model: Any) -> float | None:
    """Prompt tokens a second that `bench llm` measured for the GGUF named like `model`."""
    rows = (_load(root / "bench" / "llm.json") or {}).get("models") or []
    return next((r.get("prompt_tokens_per_s") for r in rows
                 if model and r.get("model") == _name(model)), None)


def _speed_line(root: Path) -> str:
    """`mags`'s p50 seconds a game turn (`bench agent`) and a LoCoMo turn and question
    (`bench conversation`; a run that timed no question gives the turn alone), each with its
    target, and how fast this machine reads the write model's prompts (`bench llm`), since the
    seconds depend on the machine; empty when neither benchmark ran."""
    parts = []
    agent_bench = _load(root / "bench" / "agent.json") or {}
    bench = agent_bench.get("targets") or {}
    if bench.get("mags_p50_s"):
        marks = (agent_bench.get("config") or {}).get("turns") or []
        kinds = bench.get("mags_p50_by_kind") or {}
        split = (f"; a decision turn {' / '.join(_f(x, 2) for x in kinds['decision'])}, "
                 f"another {' / '.join(_f(x, 2) for x in kinds['other'])}, "
                 f"flat: {_f(bench.get('mags_flat'))}" if kinds else "")
        parts.append("mags p50 " + " / ".join(_f(x, 2) for x in bench["mags_p50_s"])
                     + " s a turn at turns " + " / ".join(str(t) for t in marks)
                     + f" of one game{split} (≤ 1 s: {_f(bench.get('mags_p50_at_most_1s'))})")
    conv = _load(root / "bench" / "conversation.json") or {}
    turn = (conv.get("targets") or {}).get("turn_p50") or {}
    question = (conv.get("targets") or {}).get("question_p50") or {}
    if turn.get("value") is not None and question.get("value") is not None:
        parts.append(f"on {conv.get('conversation')} {_f(turn['value'], 2)} s a turn and "
                     f"{_f(question['value'], 2)} s a question (≤ {turn['limit_s']} / "
                     f"{question['limit_s']} s: {_f(turn.get('met'))} / {_f(question.get('met'))})")
    elif turn.get("value") is not None:
        parts.append(f"on {conv.get('conversation')} {_f(turn['value'], 2)} s a turn "
                     f"(≤ {turn['limit_s']} s: {_f(turn.get('met'))}; no question timed)")
    rate = _prompt_rate(root, (conv.get("role_models") or {}).get("write"))
    if turn.get("value") is not None and rate:
        parts[-1] += (f", on a machine that reads the write model's prompts at {_f(rate, 0)} "
                      "tokens/s (`bench llm`)")
    return f"{SPEED_LEAD} " + "; ".join(parts) + "." if parts else ""


def _chat_line(root: Path) -> str:
    """The chat across restarts on the test personas (`apps.chat_study`, `make reproduce`'s
    chat-restart step); empty when it did not run."""
    report = _load(root / "chat" / "chat_restart_test.json") or {}
    s, changed = report.get("scores") or {}, report.get("changed_facts") or {}
    if not s.get("n_current"):
        return ""
    n = len(report.get("conversations") or [])
    return (f"{CHAT_LEAD} ({n} test personas told to `python -m mags_lib chat` a "
            "session at a time, closed and reopened between sessions; `apps/chat_study.py`): "
            f"current value {_f(s.get('current_accuracy'))} of {s['n_current']} questions "
            f"({_f(changed.get('current_accuracy'))} of the {changed.get('n_current')} whose "
            f"fact changed), stale {_f(s.get('stale_rate'))}, earlier value "
            f"{_f(s.get('earlier_accuracy'))}, when {_f(s.get('when_accuracy'))}, \"I don't "
            f"know\" on never-said facts {_f(s.get('unknown_abstention'))}"
            f"{' (SMOKE models)' if report.get('smoke') else ''}.")


def _reranker_runs(root: Path) -> tuple[dict, dict]:
    """`tools/train_recall_reranker.py`'s dev.json and test.json ({} where absent)."""
    folder = root / RERANKER_DIR
    return _load(folder / "dev.json") or {}, _load(folder / "test.json") or {}


def recall_reranker_section(root: Path) -> str:
    """Recall's learned reranker on raw turns: held out by conversation on the development
    splits, and the shipped one on the test splits (`make reproduce`'s recall-reranker steps)."""
    dev, test = _reranker_runs(root)
    if not dev.get("available") and not test.get("available"):
        why = dev.get("why") or test.get("why")
        return (f"_LoCoMo was not here: {why}_" if why else _missing(
            "recall reranker results",
            "python tools/train_recall_reranker.py results/recall_reranker (and --split test)"))
    out = ["_SMOKE run_", ""] if dev.get("smoke") or test.get("smoke") else []
    study = dev.get("study") or {}
    if study:
        rows = [[name, r["questions"], _f(r["current_recall@5"]), _f(r["reranked_recall@5"]),
                 _f(r["current_recall@10"]), _f(r["reranked_recall@10"])]
                for name, r in {**study["by_source"],
                                "LoCoMo train, pooled": study["held_out_pooled"]}.items()]
        out += ["Development splits, raw turns in the memory: each LoCoMo training conversation "
                "judged by a reranker fitted on the other four and the training personas; the "
                "development personas by the one fitted on all (`dev.json`; the fit is "
                f"{'the same as' if dev.get('same_as_shipped') else 'not'} the shipped "
                "`memory/rerankers/dialogue.json`):", "",
                _table(["held out", "questions", "recall@5", "reranked", "recall@10",
                        "reranked"], rows), ""]
    if test.get("available"):
        rows = []
        for name in ("current", "reranked"):
            for src, summary in (test.get(name) or {}).items():
                a = summary.get("all") or {}
                lo, hi = a.get("recall@10_ci95") or (None, None)
                rows.append([name, src, a.get("n"), _f(a.get("recall@5")),
                             f"{_f(a.get('recall@10'))} ({_f(lo, 2)}–{_f(hi, 2)})"])
        out += ["Test splits, the shipped reranker, scored once its configuration was frozen "
                "(`test.json`; 95% bootstrap over conversations):", "",
                _table(["memory", "source", "questions", "recall@5", "recall@10 (95% CI)"],
                       rows)]
    return "\n".join(out).rstrip()


def reranker_headline(root: Path) -> str | None:
    """The README's line: raw-turn evidence recall@10 with and without the reranker."""
    dev, test = _reranker_runs(root)
    parts = []
    pooled = (dev.get("study") or {}).get("held_out_pooled") or {}
    if pooled:
        persona = ((dev.get("study") or {}).get("by_source") or {}).get("persona dev") or {}
        parts.append(f"LoCoMo train, held out by conversation {_f(pooled['current_recall@10'])}"
                     f" -> {_f(pooled['reranked_recall@10'])}, development personas "
                     f"{_f(persona.get('current_recall@10'))} -> "
                     f"{_f(persona.get('reranked_recall@10'))}")
    for src in ("LoCoMo test", "persona test"):
        cur = (((test.get("current") or {}).get(src) or {}).get("all") or {})
        new = (((test.get("reranked") or {}).get(src) or {}).get("all") or {})
        if cur and new:
            lo, hi = new.get("recall@10_ci95") or (None, None)
            parts.append(f"{src} {_f(cur.get('recall@10'))} -> {_f(new.get('recall@10'))} "
                         f"[{_f(lo, 2)}, {_f(hi, 2)}]")
    if not parts:
        return None
    smoke = ", SMOKE run" if dev.get("smoke") or test.get("smoke") else ""
    return (f"{RERANKER_LEAD} (raw turns in the memory, no LLM; `RecallConfig.reranker`, "
            f"{_reranker_use()}; evidence recall@10 without -> with it"
            f"{smoke}): " + "; ".join(parts) + ".")


def _reranker_use() -> str:
    """Whether the agents' dialogue memory (`memory.DIALOGUE_MEMORY`) reranks, and what."""
    from mags_lib.memory import DIALOGUE_MEMORY

    if not DIALOGUE_MEMORY.get("reranker"):
        return "an option not yet in the agents' memory"
    blocks = DIALOGUE_MEMORY.get("rerank_blocks", "all")
    what = {"all": "every node", "episodic": "the episodic nodes (turns) only"}.get(
        blocks, f"the {blocks} nodes only")
    return f"in the agents' dialogue memory since 2026-12-06, on {what}"


def headline_lines(root: Path) -> list[tuple[str, str | None]]:
    """(lead, line or None) of the README block's one-line headlines after the tables, in
    order: `readme_headline` writes them, `update_readme` replaces them in a kept block."""
    makers = (conversations_headline, test_headline, banks_headline, transfer_headline,
              conversation_mechanisms_headline, reranker_headline)
    return [(lead, make(root)) for lead, make in zip(HEADLINE_LEADS, makers, strict=True)]


SPEED_LEAD, CHAT_LEAD = "Speed:", "The chat across restarts"


def kept_block_lines(root: Path) -> list[tuple[str, str | None]]:
    """(lead, text or None) of what `update_readme` regenerates in a kept block (no notebook 06
    results here): the side-by-side table with its lead, the speed and chat lines and
    `headline_lines`, so that a benchmark or a chat study rerun alone still reaches the README."""
    return [(TASKS_LEAD, tasks_table(root)), (SPEED_LEAD, _speed_line(root) or None),
            (CHAT_LEAD, _chat_line(root) or None), *headline_lines(root)]


def readme_headline(root: Path) -> str:
    """The README's block: the closed loop on the varied held-out surface, its targets and its
    speed, with a pointer to the full report."""
    out = root / "06_evaluate_game"
    rows = [r for r in _load(out / "headline.json") or [] if r["surface"] == "varied"]
    if not rows:
        return _missing("notebook 06 results", "python -m mags_lib.pipeline --only 06")
    table = _table(["agent", "what it is", "accuracy (95% CI)", "after drift (95% CI)"], [
        [f"`{r['agent']}`", r["label"], f"{_f(r['accuracy'])} ({_f(r['ci_low'])}–"
         f"{_f(r['ci_high'])})", f"{_f(r['after_drift'])} ({_f(r['after_drift_ci_low'])}–"
         f"{_f(r['after_drift_ci_high'])})"] for r in rows])
    seeds = max((r.get("n_seeds") or 0) for r in rows)
    top = (tasks_table(root), test_headline(root), banks_headline(root))
    lines = [part for text in top if text for part in (text, "")]
    lines += [f"{GAME_LEAD} (notebook 06; held out from training, but they steered choices: a "
              f"development set), {seeds} seeds pooled:", "", table]
    t = (_load(out / "targets.json") or {}).get("varied")
    if t:
        lines += ["", "Targets: mags after drift − static_rag "
                  f"{_f(t.get('after_drift_mags_minus_static_rag'), signed=True)} (≥ +0.10: "
                  f"{_f(t['met'].get('after_drift'))}); mags / mags_scripted "
                  f"{_f(t.get('mags_over_scripted'))} (≥ 0.9: {_f(t['met'].get('vs_scripted'))}); "
                  f"mags − mags_prompted {_f(t.get('mags_minus_prompted'), signed=True)} "
                  f"(> 0: {_f(t['met'].get('vs_prompted'))})."]
    speed = _speed_line(root)
    if speed:
        lines += ["", speed]
    chat = _chat_line(root)
    if chat:
        lines += ["", chat]
    mech = _load(root / "09_mechanisms" / "metrics.json") or {}
    if mech.get("mechanisms"):
        from mags_lib.evaluation.mechanisms import verdict_line, verdicts

        lines += ["", MECHANISMS_LEAD + " (notebook 09; `mags_scripted`, the upper "
                  "bound, perfect reader; effect = accuracy lost when the mechanism is off, "
                  f"paired decisions{', SMOKE run' if mech.get('smoke') else ''}): "
                  + verdict_line(verdicts(mech["mechanisms"]))]
    for folder in STUDIES:
        objectives = objectives_headline(root, folder)
        if objectives:
            lines += ["", objectives]
    tw = _load(root / "10_textworld" / "metrics.json") or {}
    if tw.get("games"):
        from mags_lib.evaluation.textworld_eval import summarize_textworld

        pooled = [r for r in summarize_textworld(tw["games"]) if r["kind"] == "all"]
        pooled.sort(key=lambda r: -r["wins"])
        lines += ["", "TextWorld (notebook 10, games won of "
                  f"{pooled[0]['n_seeds']}{', SMOKE run' if tw.get('smoke') else ''}): "
                  + ", ".join(f"`{r['agent']}`{' (ceiling)' if r['agent'] == 'oracle' else ''}"
                              f" {r['wins']}" for r in pooled) + "."]
    for lead, line in headline_lines(root):
        if line and lead not in (TEST_LEAD, BANKS_LEAD):  # these stand under the table
            lines += ["", line]
    lines += ["", REPORT_POINTER + " (both surfaces, ablations, training, export, dynamics, "
              "mechanisms, benchmarks): `reports/RESULTS.md`."]
    return "\n".join(lines)


def update_readme(readme: Path, root: Path, keep: bool = False) -> bool:
    """Replace the block between the README's summary markers with the generated headline
    tables; False (and nothing written) when the markers are missing. With `keep`, the old
    block stays as it was when notebook 06's results are missing, and its mechanism paragraph
    stays (marked as kept) when notebook 09's are."""
    text = readme.read_text()
    if README_START not in text or README_END not in text:
        return False
    head, rest = text.split(README_START, 1)
    old, tail = rest.split(README_END, 1)
    body = readme_headline(root)
    if keep and _is_missing(body) and "|" in old:  # no notebook 06 here: the old block stays,
        lines = old.strip("\n").split("\n")      # with the lines whose results are here updated
        for lead, line in kept_block_lines(root):
            if not line:
                continue
            at = next((i for i, ln in enumerate(lines) if ln.startswith(lead)), None)
            if at is not None:  # replaced where it stood, with the table under it if any
                if lead == BANKS_LEAD:
                    line = merge_bank_lines(line, lines[at])
                end = at + 1
                if end + 1 < len(lines) and not lines[end] and lines[end + 1].startswith("|"):
                    end += 1
                    while end < len(lines) and lines[end].startswith("|"):
                        end += 1
                lines[at:end] = line.split("\n")
                continue
            before = (GAME_LEAD, REPORT_POINTER) if lead == TASKS_LEAD else (REPORT_POINTER,)
            at = next((i for b in before for i, ln in enumerate(lines) if ln.startswith(b)),
                      len(lines))  # the table leads the block; other lines go before the pointer
            lines[at:at] = [*line.split("\n"), ""]
        readme.write_text(f"{head}{README_START}\n" + "\n".join(lines) + f"\n\n{README_END}{tail}")
        return True
    if keep and MECHANISMS_LEAD not in body and MECHANISMS_LEAD in old:
        kept = MECHANISMS_LEAD + old.split(MECHANISMS_LEAD, 1)[1].split(REPORT_POINTER, 1)[0]
        for lead in HEADLINE_LEADS:  # regenerated lines
            if lead in body:
                kept = "\n".join(ln for ln in kept.split("\n") if not ln.startswith(lead))
        kept = _one_line_verdicts(kept.rstrip())
        if not kept.startswith(MECHANISMS_LEAD + " (kept"):
            kept = kept.replace(MECHANISMS_LEAD, MECHANISMS_LEAD + " (kept from the previous "
                                "block: this run's results/ has no notebook 09)", 1)
        before = next((lead for lead in ("\n" + CONVERSATIONS_LEAD, REPORT_POINTER)
                       if lead in body), None)  # where notebook 09's paragraph stood
        body = (body.replace(before, before[:-len(before.lstrip("\n"))] + kept + "\n\n"
                             + before.lstrip("\n"), 1) if before else body + "\n\n" + kept)
    if keep:
        body = _merge_banks_in(body, old)
    readme.write_text(f"{head}{README_START}\n<!-- generated by `make summary` from results/; "
                      f"do not edit by hand -->\n\n{body}\n\n{README_END}{tail}")
    return True


PIPELINE_TITLE = "Pipeline runs"
SECTIONS = ((PIPELINE_TITLE, pipeline_section), ("Dataset (01)", synth_section),
            ("Training (02, 03)", training_section), ("Ask GRPO over seeds (07)", seeds_section),
            ("Write objectives (08)", objectives_section),
            ("Ask objectives (11)", ask_objectives_section),
            ("GGUF export (04)", export_section),
            ("Graph dynamics (05)", dynamics_section), ("Game evaluation (06)", evaluation_section),
            ("Mechanisms by regime (09)", mechanisms_section),
            ("TextWorld (10)", textworld_section),
            ("Conversations (12)", conversations_section),
            ("Test splits (13)", test_splits_section),
            (BANKS_TITLE, banks_section),
            ("Transfer matrix (14)", transfer_section),
            ("Mechanisms on conversations (15)", conversation_mechanisms_section),
            ("Recall's learned reranker", recall_reranker_section),
            ("Memory benchmark", bench_section), ("Agent benchmark", agent_bench_section),
            ("Conversation benchmark", conversation_bench_section),
            ("LLM benchmark", llm_bench_section))


KEPT = "_Kept from the previous report: this run's `results/` lacks it ({why})._"
KEPT_MARK = "_Kept from the previous report"


def _one_line_verdicts(kept: str) -> str:
    """A kept notebook 09 paragraph whose verdicts are a table (README blocks written before
    2026-12-01) as the one line `readme_headline` now writes; other text unchanged."""
    from mags_lib.evaluation.mechanisms import verdict_line, verdicts_from_markdown

    lines = kept.split("\n")
    at = [i for i, ln in enumerate(lines) if ln.startswith("|")]
    found = verdicts_from_markdown("\n".join(lines[i] for i in at))
    if not found or not lines[0].endswith(":"):
        return kept
    return "\n".join([f"{lines[0]} {verdict_line(found)}", *lines[at[-1] + 1:]])


def _is_missing(body: str) -> bool:
    return body.startswith("_") and body.rstrip().endswith("._") and ": not found; run" in body


def _missing_why(body: str) -> str:
    r"""What a missing section lacks, for its `KEPT` line: each of its "not found" notes
    (a section can hold two, as notebooks 02 and 03 share one), joined by "; ".

    >>> _missing_why("_a: not found; run `x`._\n\n_b: not found; run `y`._")
    'a: not found; run `x`; b: not found; run `y`'
    """
    return "; ".join(p.strip().strip("_").rstrip(".") for p in body.split("\n\n") if p.strip())


def previous_sections(text: str) -> dict[str, str]:
    r"""The bodies of a report's `## ` sections, by title (the first `KEPT` line dropped).

    >>> previous_sections("# R\n\n## A\n\n| x |\n\n## B\n\ntext\n")
    {'A': '| x |', 'B': 'text'}
    """
    out = {}
    for chunk in text.split("\n## ")[1:]:
        title, _, body = chunk.partition("\n")
        body = body.strip()
        if body.startswith("_Kept from the previous report"):
            body = body.partition("\n\n")[2].strip()
            while _is_missing(body.partition("\n\n")[0]):  # a note left by older reports
                body = body.partition("\n\n")[2].strip()
        out[title.strip()] = body
    return out


_NOTEBOOK_HEAD = re.compile(r"^(\d\d)_[a-z0-9_]+(?: \(SMOKE run\))?$", re.M)
_NOTEBOOK_MISSING = re.compile(r"_notebook (\d\d) results: not found; run `[^`]*`\._")


def merge_kept_notebooks(body: str, previous: str) -> str:
    """A section made of one block per notebook, each headed by the notebook's name (training:
    02 and 03): a block whose results are missing in this run keeps the previous report's
    block, under a `KEPT` line, so that re-running one notebook does not blank the other's."""
    heads = list(_NOTEBOOK_HEAD.finditer(previous))
    blocks = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(previous)
        paragraphs = previous[head.start():end].strip().split("\n\n")
        blocks[head.group(1)] = "\n\n".join(x for x in paragraphs
                                            if not x.startswith(KEPT_MARK))
    out = []
    for part in body.split("\n\n"):
        found = _NOTEBOOK_MISSING.fullmatch(part.strip())
        if found and found.group(1) in blocks:
            part = KEPT.format(why=_missing_why(part)) + "\n\n" + blocks[found.group(1)]
        out.append(part)
    return "\n\n".join(out)


def render(root: Path = RESULTS_DIR, previous: str | None = None) -> str:
    """Every section from `root`; with `previous` (the report this one replaces), a section
    whose results are missing here keeps its previous body under a `KEPT` line, so that
    re-running one notebook does not blank the others' tables."""
    from mags_lib.manifest import git_commit

    where = root.resolve()
    where = where.relative_to(PROJ_ROOT) if where.is_relative_to(PROJ_ROOT) else where
    head = (f"# MAGS results\n\nGenerated by `make summary` from `{where}/`, written at "
            f"commit {git_commit() or 'unknown'}; the commit and date of each run are in its "
            "`manifest.json`, the dates also in the pipeline table below. Do not edit by hand.")
    old = previous_sections(previous) if previous else {}
    parts = [head]
    for title, fn in SECTIONS:
        body = fn(root)
        if title == PIPELINE_TITLE and old.get(title) and not _is_missing(body):
            body = merge_pipeline_rows(body, old[title])
        if title == BANKS_TITLE and old.get(title):
            body = merge_kept_banks(body, old[title])
        if _is_missing(body) and old.get(title) and not _is_missing(old[title]):
            body = KEPT.format(why=_missing_why(body)) + "\n\n" + old[title]
        elif old.get(title) and _NOTEBOOK_MISSING.search(body):
            body = merge_kept_notebooks(body, old[title])
        parts.append(f"## {title}\n\n{body}")
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mags_lib.summary", description=__doc__)
    ap.add_argument("--results", default=str(RESULTS_DIR), help="the results folder to read")
    ap.add_argument("--out", default=None, help="also write here (default results/SUMMARY.md)")
    ap.add_argument("--keep", action=argparse.BooleanOptionalAction, default=True,
                    help="keep the previous report's section (marked as kept) where this run's "
                         "results are missing, and the README's mechanism paragraph where "
                         "notebook 09's are")
    ap.add_argument("--readme", default=None,
                    help="also refresh the generated block of this README (between "
                         f"{README_START} and {README_END})")
    args = ap.parse_args(argv)
    root = Path(args.results)
    out = Path(args.out) if args.out else root / "SUMMARY.md"
    previous = out.read_text() if args.keep and out.is_file() else None
    text = render(root, previous)
    sys.stdout.write(text)
    write_text(out, text)
    if args.readme and not update_readme(Path(args.readme), root, keep=args.keep):
        sys.stderr.write(f"{args.readme} has no {README_START} ... {README_END} block; "
                         "left unchanged\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
