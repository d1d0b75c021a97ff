# MAGS workbench. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SMOKE  ?= False
,      := ,
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
LOCOMO_URL := https://raw.githubusercontent.com/snap-research/LoCoMo/main/data/locomo10.json
# A native llama.cpp build segfaulted in batched decoding on these CPUs; the portable build is correct.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: help setup notebooks browser test test-fast reproduce models smoke summary lab lint bench demo chat play clean data

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  \033[36m%-10s\033[0m %s\n", $$1, $$2}'

setup: $(STAMP) ## Create .venv and install everything (idempotent)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip wheel setuptools
	# CPU build of torch first, so that nothing below pulls a multi-GB CUDA build
	$(PY) -m pip install "torch==2.13.0" || $(PY) -m pip install torch --index-url https://download.pytorch.org/whl/cpu
	$(PY) -m pip install -e ".[dev]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

notebooks: setup ## Rebuild notebooks/*.ipynb from their jupytext sources in notebooks/src/
	for f in notebooks/src/*.py; do \
	  $(VENV)/bin/jupytext --quiet --update --set-kernel python3 --to ipynb -o notebooks/$$(basename $$f .py).ipynb $$f; done

browser: ## Install Debian's Chromium for the browser tests, if missing (needs root)
	@bash tools/browser.sh

test: setup browser ## Run the test suite (CPU, offline, embedded models, real terminal and browser)
	$(PY) -m pytest -q --durations=30

test-fast: setup ## Run the tests that need no real model
	$(PY) -m pytest -q -m "not slow"

# reproduce resumes: a notebook or benchmark runs only when its inputs changed since its last
# successful run (results/pipeline.json; mags_lib/pipeline_state.py says what counts). FORCE=1
# runs everything again.
FORCE ?=
# PARAMS: notebook parameters for a variant, e.g. PARAMS="--param 01:WRITER_FRAME_SHARE=0.5";
# they count in the fingerprint, so the next run without them runs those notebooks again.
PARAMS ?=
RESUME = $(PY) -m mags_lib.pipeline --smoke $(SMOKE) $(if $(filter 1 true True yes,$(FORCE)),--force) $(PARAMS)

reproduce: setup ## Run the notebooks whose inputs changed (FORCE=1: all), the benchmarks, the summary (and the README's results block)
	$(RESUME)
	$(RESUME) --step bench-memory -- $(PY) -m mags_lib.bench memory --sizes $(if $(filter True true 1,$(SMOKE)),1000,1000$(,)10000$(,)100000) --out results/bench/memory.json >/dev/null
	$(RESUME) --step bench-agent --after 04 -- $(PY) -m mags_lib.bench agent --turns $(if $(filter True true 1,$(SMOKE)),10$(,)20 --window 10,50$(,)200$(,)1000) --out results/bench/agent.json >/dev/null
	$(RESUME) --step bench-conversation --after 04 -- $(PY) -m mags_lib.bench conversation $(if $(filter True true 1,$(SMOKE)),--turns 20 --questions 4) --out results/bench/conversation.json >/dev/null
	$(RESUME) --step bench-llm --after 04 -- $(PY) -m mags_lib.bench llm $(if $(filter True true 1,$(SMOKE)),--repeats 1) --out results/bench/llm.json >/dev/null
	$(RESUME) --step chat-restart --after 04 -- $(PY) -m mags_lib.apps.chat_study --split test --n $(if $(filter True true 1,$(SMOKE)),1,3) --out results/chat/chat_restart_test.json >/dev/null
	$(RESUME) --step recall-reranker -- $(PY) tools/train_recall_reranker.py results/recall_reranker $(if $(filter True true 1,$(SMOKE)),--smoke) >/dev/null
	$(RESUME) --step recall-reranker-test -- $(PY) tools/train_recall_reranker.py results/recall_reranker --split test $(if $(filter True true 1,$(SMOKE)),--smoke) >/dev/null
	$(PY) -m mags_lib.summary $(if $(filter True true 1,$(SMOKE)),,--out reports/RESULTS.md --readme README.md)

models: setup ## Only the trained models: notebooks 01-04 (2 to 3 h on 2 cores; resumes like reproduce)
	$(RESUME) --only 01 02 03 04

smoke: ## reproduce with SMOKE=True (minutes; resumes too, FORCE=1 runs all)
	$(MAKE) reproduce SMOKE=True

data: ## Download LoCoMo (CC BY-NC 4.0) to data/external/ where there is internet; never committed
	@mkdir -p data/external
	@if [ -f data/external/locomo10.json ]; then echo "data/external/locomo10.json is there"; \
	else curl -fsSL -o data/external/locomo10.json.part $(LOCOMO_URL) && \
	  mv data/external/locomo10.json.part data/external/locomo10.json && \
	  echo "LoCoMo saved to data/external/locomo10.json (CC BY-NC 4.0)" || \
	  { rm -f data/external/locomo10.json.part; echo "no internet here: set MAGS_LOCOMO=/path/to/locomo10.json (or use the shared copy); everything else runs without it"; }; fi

demo: setup ## Chat with the embedded model and emit a grammar-constrained recall action
	$(PY) -m mags_lib.llm --demo

chat: setup ## Talk to MAGS; its memory persists in data/chat/memory (python -m mags_lib chat --help)
	$(PY) -m mags_lib chat

play: setup ## Play the senseless game (or watch an agent: make play ARGS="--agent mags")
	$(PY) -m mags_lib play $(ARGS)

bench: setup ## Memory, agent, conversation and LLM benchmarks (JSON on stdout and in results/bench/)
	$(PY) -m mags_lib.bench memory --out results/bench/memory.json
	$(PY) -m mags_lib.bench agent --out results/bench/agent.json
	$(PY) -m mags_lib.bench conversation --out results/bench/conversation.json
	$(PY) -m mags_lib.bench llm --out results/bench/llm.json

summary: setup ## Every table of the last run (reports/RESULTS.md) and the README's headline block
	$(PY) -m mags_lib.summary --out reports/RESULTS.md --readme README.md

lab: setup ## Open JupyterLab on notebooks/
	$(VENV)/bin/jupyter lab notebooks/

lint: setup ## ruff over every Python file and notebook
	$(VENV)/bin/ruff check .

clean: ## Remove caches and results (keeps .venv and models/)
	rm -rf .pytest_cache .ruff_cache .hypothesis results/*/ 
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
