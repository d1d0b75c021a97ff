"""Conversations as a source of memories: a person's changing facts and LoCoMo.

    from mags_lib.conversations.persona import make_persona, persona_set
    from mags_lib.conversations.locomo import load_locomo, locomo_path, SPLITS

`persona` synthesises multi-session conversations offline in which a person's facts change
(its phrasings split into train / dev / test in `persona_phrases`); `locomo` reads LoCoMo's
long real dialogues. Both return the one shape of `types` (`Conversation`: turns in sessions,
questions with gold answers and evidence, gold facts), which the agents and the evaluation take
through the task interface, not by name.
"""
