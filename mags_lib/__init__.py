"""MAGS: a Liquid Knowledge Graph memory that small language models read and write while they run.

`import mags_lib` is instant: heavy libraries (torch, transformers, llama_cpp) load inside the
functions that need them. Start with:

    from mags_lib.memory import LiquidMemory        # the graph memory
    from mags_lib.llm import load_llm               # a chat model (embedded SmolLM2 by default)
    from mags_lib.actions import parse_actions      # the recall / engram action protocol
"""

__version__ = "0.1.0"
