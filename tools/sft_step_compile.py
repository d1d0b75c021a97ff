"""Does torch.compile make a LoRA SFT step faster on this CPU? (journal 2026-11-26 afternoon)

    python tools/sft_step_compile.py eager
    python tools/sft_step_compile.py compile

Times six optimiser steps of the embedded SmolLM2-135M with notebook 03's LoRA (r 16, alpha 32,
dropout 0.05, all linear layers), a batch of 8 random rows of 192 tokens, loss on the last 32
(the shape of a write SFT step), 2 torch threads. Prints seconds per step.
"""
import sys
import time

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

from mags_lib.models import torch_checkpoint

torch.set_num_threads(2)
torch.manual_seed(0)
mode = sys.argv[1] if len(sys.argv) > 1 else "eager"
model = AutoModelForCausalLM.from_pretrained(str(torch_checkpoint()), dtype=torch.float32)
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05,
                                         target_modules="all-linear", task_type="CAUSAL_LM"))
model.train()
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
B, T = 8, 192
run = torch.compile(model) if mode == "compile" else model
for i in range(6):
    t = time.time()
    ids = torch.randint(0, 49000, (B, T))
    labels = ids.clone()
    labels[:, :T - 32] = -100
    logits = run(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False).logits
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)),
                                             labels[:, 1:].reshape(-1), ignore_index=-100)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(mode, i, round(time.time() - t, 2), flush=True)
