"""Tasks: what feeds the agents a stream of observations and asks them questions or decisions
with gold answers. `base.py` is the interface (`Observation`, `StepResult`, `Env`, `Dialogue`,
`Task`, `match_action`); `registry.py` finds a task by name. The tasks themselves live with
their worlds: `mags_lib.game.task` (the senseless game, TextWorld) and
`mags_lib.conversations.task` (persona conversations, LoCoMo).

    from mags_lib.tasks.registry import get_task
    task = get_task("persona")
    conv = task.episodes("dev", 1)[0]
    conv.stream()[0].text, conv.qa[0].answer, conv.gold_facts[0].text
"""
