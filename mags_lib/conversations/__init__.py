"""Conversations as a source of memories: LoCoMo's long real dialogues (`locomo`).

    from mags_lib.conversations.locomo import load_locomo, locomo_path, SPLITS

Readers return plain dataclasses (turns, questions with gold answers and evidence, gold facts);
the agents and the evaluation take them through the task interface, not by name.
"""
