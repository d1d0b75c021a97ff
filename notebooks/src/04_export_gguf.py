# %% [markdown]
# # 04 Export the trained models to GGUF for llama.cpp
#
# Training (notebooks 02/03) leaves merged transformers checkpoints in `models/<role>-<stage>/`.
# For fast local inference, and for grammar-constrained memory actions, the game runs models
# under llama.cpp, which reads GGUF files. This notebook writes each model as
# `models/gguf/<name>-<type>.gguf` (F16, then llama.cpp's own Q8_0 and Q4_K_M quantisation) and
# checks every file against its checkpoint: greedy outputs on held-out prompts (first-token
# agreement, exact text), file size, load time and generated tokens per second on the CPU.
#
# The exporter copies tokenizer and hyper-parameters from the GGUF the models were fine-tuned
# from (the embedded SmolLM2-135M-Instruct), checks that shapes and vocabulary match, renames the
# tensors and re-applies llama.cpp's Q/K row permutation. With no trained model on disk it
# exports the unchanged base model: that round trip must agree token for token.
# Writes `results/04_export_gguf/` (config, metrics, manifest, figure).

# %% tags=["parameters"]
SMOKE = False  # True: the same run on fewer prompts, tokens and models (about a minute)
MODELS = []  # checkpoint dirs; empty: trained models under models/ (02/03), else the base model
QUANT_TYPES = ["f16", "q8_0", "q4_k_m"]  # f16 / f32 written here, the rest by llama.cpp
N_PROMPTS = 8  # held-out prompts (data/synth/<task>/test.jsonl, else built-in ones)
MAX_TOKENS = 32  # greedy tokens per prompt
N_THREADS = 1  # CPU threads for llama.cpp and torch; 1 is fairest on a shared 2-core machine

# %%
import pandas as pd
from IPython.display import display

from mags_lib.export import ExportConfig, export_and_verify, trained_models
from mags_lib.export.figures import size_speed_agreement
from mags_lib.llm import LLMConfig, load_llm
from mags_lib.manifest import write_run
from mags_lib.paths import results_dir
from mags_lib.plots import save_figure

NAME = "04_export_gguf"
OUT = results_dir(NAME)
found = trained_models()
models = MODELS or found or ["embedded"]
if not (MODELS or found):
    print("note: no trained model under models/ (run notebooks 02/03 first); exporting the "
          "base SmolLM2-135M-Instruct instead, as a round-trip check of the exporter")
cfg = ExportConfig(models=models, quant_types=QUANT_TYPES, n_prompts=N_PROMPTS,
                   max_tokens=MAX_TOKENS, n_threads=N_THREADS, smoke=SMOKE).resolved()
print("exporting", cfg.models, "as", cfg.quant_types)

# %% [markdown]
# ## Export and compare

# %%
metrics = export_and_verify(cfg)
write_run(NAME, config=cfg, metrics=metrics, smoke=SMOKE)
display(pd.DataFrame(metrics["summary"]).T)
display(pd.DataFrame([{"model": name, "type": q, **{k: m[k] for k in (
    "size_mb", "load_s", "tokens_per_s", "first_token_agreement", "exact_match",
    "prefix_agreement", "tokenizer_agreement")}}
    for name, r in metrics["models"].items() for q, m in r["verify"]["quants"].items()]))

# %% [markdown]
# ## Size, speed and agreement per GGUF type

# %%
fig = size_speed_agreement(metrics)
save_figure(fig, OUT / "size_speed_agreement.png")

# %% [markdown]
# ## What the outputs look like (first model, first prompts)

# %%
first = next(iter(metrics["models"].values()))
display(pd.DataFrame(first["verify"]["examples"]).T)

# %% [markdown]
# ## Use an exported file: `load_llm(LLMConfig(model=<path to .gguf>))`

# %%
smallest = first["files"][cfg.quant_types[-1]]["path"]
llm = load_llm(LLMConfig(model=smallest, cache=False, n_threads=N_THREADS))
print(smallest, "->", llm.chat([{"role": "user", "content": "Say hello in five words."}],
                               max_tokens=16).text)

# %%
check = "f16" if "f16" in cfg.quant_types else cfg.quant_types[0]
# SMOKE models are a few steps from the base model and sit on near ties, where F16 rounding
# can flip a first token on one of three prompts; a broken export disagrees nearly everywhere
floor = 0.6 if SMOKE else 0.9
assert all(r["verify"]["quants"][check]["first_token_agreement"] >= floor
           for r in metrics["models"].values()), f"{check} export disagrees with its checkpoint"
assert all(r["verify"]["quants"][check]["tokenizer_agreement"] == 1.0
           for r in metrics["models"].values()), "GGUF tokenizer differs from the checkpoint's"
print("ok:", {n: r["verify"]["quants"][check]["first_token_agreement"]
              for n, r in metrics["models"].items()})
