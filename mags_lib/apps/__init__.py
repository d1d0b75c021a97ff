"""What a person runs: the chat with a persistent memory and the playable game.

    python -m mags_lib chat [--memory DIR] [--model NAME]     # apps/chat_cli.py, apps/chat.py
    python -m mags_lib play [--agent mags|static_rag|...]     # apps/play.py
    python -m mags_lib graph DIR                              # a saved memory as HTML

The top layer: it uses the agents, the memory, the LLM backends and the evaluation's model
resolution; nothing below imports it.
"""
