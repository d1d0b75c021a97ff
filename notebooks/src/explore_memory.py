# %% [markdown]
# # Explore a memory
#
# The Liquid Knowledge Graph as an interactive graph (pyvis): colour = block (episodic blue,
# semantic orange, working-memory green squares), faded and dashed = superseded (the label gives
# the steps it was valid), edge width = current weight, hover a node for its text, provenance,
# time and uses. Type a recall query to highlight its hits, search to mark nodes by text, slide
# through the snapshots taken during play.
#
# `MEMORY_DIR` names a saved memory (the chat's is `data/chat/memory`); empty builds a small
# demo memory by observing a game (no trained model: see `mags_lib/apps/explore.py`).

# %% tags=["parameters"]
MEMORY_DIR = ""
EMBEDDER = "embedded"  # all-MiniLM-L6-v2; "hashing" for a fast fake
DEMO_TURNS = 120
SNAPSHOT_EVERY = 30

# %%
from mags_lib.apps.chat import load_embedder
from mags_lib.apps.explore import open_or_demo
from mags_lib.widgets import explore_memory

memory, frames = open_or_demo(MEMORY_DIR, embedder=load_embedder(EMBEDDER), turns=DEMO_TURNS,
                              snapshot_every=SNAPSHOT_EVERY)
graph = memory.to_networkx(valid_only=False)
print(f"memory: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges, "
      f"{len(frames)} snapshots")

# %%
explore_memory(memory, frames=frames)

# %%
assert graph.number_of_nodes() > 0, "an empty memory: name a saved one in MEMORY_DIR"
