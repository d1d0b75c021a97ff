"""The game's closed loop on a bank of phrasings, scored exactly as notebook 13 scores the
test bank (the command is `python -m mags_lib bank BANK.json`, `apps/bank_cli.py`).

The issue behind the test bank also promises that "a bank of phrasings kept outside the
project will be scored the same way". This is that way: write the bank as JSON
(`python -m mags_lib bank --example bank.json` writes the training bank as a
model to edit; `game.phrasing.load_bank` says what each list holds and checks it), then

    python -m mags_lib bank bank.json            # 3 seeds x 200 turns
    python -m mags_lib bank bank.json --smoke    # one short game, a check
    python -m mags_lib bank bank.json --writer   # the write model alone, by frame

Notebook 13's agents (`bare`, `oracle`, `static_rag`, the upper bound `mags_scripted`, `mags`)
play the same seeded games with notebook 04's models and notebook 06's settings
(`bank_eval_config`, which notebook 13 uses too); the bank changes only the words. It prints
the headline table and the targets (after drift `mags` − `static_rag` ≥ +0.10, `mags` /
`mags_scripted` ≥ 0.9) and writes `results/game_bank/<bank name>/` (`headline.json`,
`targets.json`, every game in `games.jsonl` with explanations, the summary in `metrics.json`,
`config.json`, `manifest.json`). Games already played with the same bank
content and models are reused (`--fresh` replays them all). The bank never reaches a dataset:
synthesis reads the training bank only. `--writer` plays no game: it judges the write model
alone on the bank's write turns and splits its op accuracy by the bank's templates
(`bank_writer`), to say which frame a lost score comes from; it writes `writer.json` there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

GAME_AGENTS = ("bare", "oracle", "static_rag", "mags_scripted", "mags")
"""Notebook 13's game agents: the baselines, the ceiling, the upper bound and MAGS."""


def bank_eval_config(phrasings: str, *, seeds: list[int] | tuple[int, ...] = (0, 1, 2),
                     episode_length: int = 200, agents: tuple[str, ...] | list[str] = GAME_AGENTS,
                     models: dict[str, str] | None = None, embedder: str = "embedded", k: int = 3,
                     smoke: bool = False, resume: bool = True, output: str) -> Any:
    """The `EvalConfig` of notebook 13's game part on the bank `phrasings` (a set's name or a
    JSON bank's path): the varied surface, the trained answer model as the decision LLM
    (completion prompt, every option order scored), the trained ask and write models."""
    from mags_lib.evaluation import EvalConfig
    from mags_lib.evaluation.answer_model import decision_llm_settings
    from mags_lib.game import GameConfig
    from mags_lib.llm import LLMConfig

    decision = decision_llm_settings("auto", "completion")
    return EvalConfig(
        agents=list(agents), seeds=list(seeds),
        game=GameConfig(episode_length=episode_length, surface="varied", phrasings=phrasings),
        llm=LLMConfig(model=decision["model"], n_ctx=1024), answer_tags=decision["answer_tags"],
        prompt_format="completion", debias_order=True,
        models=dict(models or {"ask": "auto", "write": "auto"}), embedder=embedder, k=k,
        smoke=smoke, smoke_seeds=1, resume=resume, output=output)


def score_bank(phrasings: str, *, seeds: list[int] | tuple[int, ...] = (0, 1, 2),
               episode_length: int = 200, agents: tuple[str, ...] | list[str] = GAME_AGENTS,
               smoke: bool = False, resume: bool = True, out_dir: Path | None = None,
               models: dict[str, str] | None = None, **loaded: Any) -> dict[str, Any]:
    """Play and score the bank; {"bank", "source", "headline", "targets", "oracle_vs_bare_gap",
    "evaluation_valid", "seconds", "games", "smoke", "out_dir"}. Beside `run_eval`'s files
    (games, explanations, its summary as `metrics.json`) it writes `headline.json` and
    `targets.json`, as notebook 06 does, and `manifest.json`; in
    results/game_bank/<bank name>/ unless `out_dir`. `models` ({"ask", "write"}: 'auto' or a
    .gguf) are the trained loop's models (default notebook 04's). `loaded` goes to `run_eval`
    (`llm`, `embedder`, `roles`: models already loaded, as the tests pass fakes)."""
    from mags_lib.evaluation import run_eval
    from mags_lib.evaluation.headline import closed_loop_targets, headline_rows
    from mags_lib.game.phrasing import bank, bank_id
    from mags_lib.manifest import manifest, write_json
    from mags_lib.paths import results_dir

    name = bank(phrasings).key
    output = f"game_bank/{name}{'_smoke' if smoke else ''}"
    out_dir = Path(out_dir) if out_dir is not None else results_dir(output)
    cfg = bank_eval_config(phrasings, seeds=seeds, episode_length=episode_length,
                           agents=agents, models=models, smoke=smoke, resume=resume,
                           output=output)
    result = run_eval(cfg, out_dir=out_dir, **loaded)
    summary = result.summary
    rows = headline_rows({name: summary})
    targets = closed_loop_targets(summary)
    write_json(out_dir / "headline.json", rows)
    write_json(out_dir / "targets.json", targets)
    models = played_models(cfg.resolved(), loaded.get("llm"), loaded.get("roles"))
    write_json(out_dir / "manifest.json", manifest(cfg.resolved(), bank=bank_id(phrasings),
                                                  source=str(phrasings), models=models))
    return {"bank": bank_id(phrasings), "source": str(phrasings), "smoke": smoke,
            "models": models, "headline": rows, "targets": targets,
            "oracle_vs_bare_gap": summary.get("oracle_vs_bare_gap"),
            "evaluation_valid": summary.get("evaluation_valid"),
            "seconds": result.seconds, "games": len(result.games), "out_dir": str(out_dir)}


def model_label(spec: str | Path) -> str:
    """A model file as `name:sha256 prefix` (what it is, not only where it lies: two trainings
    of one recipe export to the same name); anything that is not a file ('embedded') as given.

    >>> model_label("embedded")
    'embedded'
    """
    from mags_lib.models import file_digest

    path = Path(spec)
    return f"{path.name}:{file_digest(path)[:16]}" if path.is_file() else str(spec)


def _name(model: Any) -> str:
    return str(getattr(model, "name", type(model).__name__))


def played_models(cfg: Any, llm: Any = None, roles: dict[str, Any] | None = None
                  ) -> dict[str, str]:
    """{role: model} that a bank run played with: the decision (answer) model, and the ask and
    write models where a trained closed-loop agent played; the names of the models handed in
    (`llm`, `roles`: tests pass fakes), else the files `cfg` resolves to."""
    from mags_lib.agents.registry import TRAINED_LOOP_AGENTS
    from mags_lib.errors import MagsError

    out = {"answer": _name(llm) if llm is not None else model_label(cfg.llm.model)}
    if not any(a in TRAINED_LOOP_AGENTS for a in cfg.agents):
        return out
    if roles:
        return {**out, **{role: _name(m) for role, m in roles.items()}}
    try:
        paths = cfg.role_model_paths()
    except MagsError:  # no trained model: run_eval has already said so
        return out
    return {**out, **{role: model_label(path) for role, path in paths.items()}}


def report(metrics: dict[str, Any]) -> str:
    """The result as Markdown: the headline table, the validity check and the targets."""
    from mags_lib.evaluation.headline import headline_markdown

    out = [f"Bank `{metrics['bank']}` ({metrics['source']}){', SMOKE' if metrics['smoke'] else ''}:"
           f" {metrics['games']} games in {metrics['seconds']:.0f} s", "",
           headline_markdown(metrics["headline"]), "",
           f"oracle − bare {metrics['oracle_vs_bare_gap']:+.3f}: " + (
               "the evaluation tells the agents apart (their 95% intervals are disjoint)."
               if metrics["evaluation_valid"] else "their 95% intervals overlap, so this run "
               "cannot tell the agents apart (too few decisions? play more seeds or turns).")
           if metrics.get("oracle_vs_bare_gap") is not None else "oracle or bare not played."]
    t = metrics.get("targets") or {}
    played = {r["agent"] for r in metrics["headline"]}

    def target(value: float | None, met: bool | None, wanted: str, signed: bool,
               needs: set[str]) -> str:
        if value is None:
            why = ("an agent it needs was not played" if not needs <= played
                   else "no decision came after a rule change; play longer games")
            return f"– ({wanted}: {why})"
        return f"{value:{'+' if signed else ''}.3f} ({wanted}: {'met' if met else 'not met'})"
    if t:
        out.append("Targets: mags after drift − static_rag " + target(
            t.get("after_drift_mags_minus_static_rag"), t["met"].get("after_drift"), "≥ +0.10",
            True, {"mags", "static_rag"}) + "; mags / mags_scripted " + target(
            t.get("mags_over_scripted"), t["met"].get("vs_scripted"), "≥ 0.9", False,
            {"mags", "mags_scripted"}) + ".")
    if metrics.get("models"):
        out.append(models_line(metrics["models"]))
    return "\n".join(out)


def models_line(models: dict[str, str]) -> str:
    """The models a bank run played, as one line (the printed report and `reports/RESULTS.md`).

    >>> models_line({"answer": "a.gguf:12", "write": "w.gguf:34"})
    'Models: answer `a.gguf:12`, write `w.gguf:34`.'
    """
    return "Models: " + ", ".join(f"{role} `{m}`" for role, m in models.items()) + "."


if __name__ == "__main__":  # the command moved up to the apps (its judge needs synth)
    import sys

    print("the command is now `python -m mags_lib bank BANK.json` (apps/bank_cli.py)",
          file=sys.stderr)
    sys.exit(2)
