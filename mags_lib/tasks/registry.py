"""Tasks by name: `get_task("persona").episodes("dev", 3)`.

    from mags_lib.tasks.registry import get_task, task_names, register_task

    task = get_task("locomo")            # options go to the task's class: get_task("game", turns=50)
    convs = task.episodes("train")       # Dialogues (task.interactive is False)
    register_task("mine", "my_pkg.my_task:MyTask")   # a task of your own, by import path

A task is named here by the import path of its class and imported when asked for, so this
module (at the bottom of the library's layers, beside the interface in `base.py`) depends on no
task, and a task outside the library plugs in the same way. The built-in ones:

| name | shape | splits | what |
|---|---|---|---|
| `game` | Env | train / dev / test | the senseless game on the varied surface; a split names the phrasing bank |
| `textworld` | Env | train / dev / test | tw-make games (needs `textworld`), split by seed range |
| `persona` | Dialogue | train / dev / test | a person's changing facts, generated offline |
| `locomo` | Dialogue | train / test | LoCoMo's long real conversations (dev: conv-43) |
"""

from __future__ import annotations

import importlib
from typing import Any

from mags_lib.errors import MagsError

TASKS: dict[str, str] = {
    "game": "mags_lib.game.task:SenselessTask",
    "textworld": "mags_lib.game.task:TextWorldTask",
    "persona": "mags_lib.conversations.task:PersonaTask",
    "locomo": "mags_lib.conversations.task:LocomoTask",
}


def task_names() -> tuple[str, ...]:
    return tuple(TASKS)


def register_task(name: str, path: str) -> None:
    """Make `get_task(name)` build the class at `path` ('package.module:Class')."""
    if ":" not in path:
        raise MagsError(f"task {name!r}: import path {path!r} names no class",
                        "give 'package.module:Class'")
    TASKS[name] = path


def get_task(name: str, **options: Any) -> Any:
    """The task called `name`, built with `options` (its class's keyword arguments)."""
    if name not in TASKS:
        raise MagsError(f"unknown task {name!r}",
                        f"use one of {', '.join(TASKS)}, or register_task(name, "
                        "'package.module:Class') for your own")
    module, _, cls = TASKS[name].partition(":")
    try:
        task_cls = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        raise MagsError(f"task {name!r}: cannot import {TASKS[name]} ({exc})",
                        "check the import path given to register_task") from exc
    try:
        return task_cls(**options)
    except TypeError as exc:
        raise MagsError(f"task {name!r} does not take {sorted(options)}: {exc}",
                        f"see help({cls}) for its options") from exc


def check_split(task: Any, split: str) -> None:
    """A clear error for a split the task does not have."""
    if split not in task.splits:
        raise MagsError(f"task {task.name!r} has no split {split!r}",
                        f"use one of {', '.join(task.splits)}")
