"""The SFT loss: the LM head on the supervised positions only, the decision token weighted.

    trainer = completion_loss_trainer(1.0, tokenizer, model=..., args=..., ...)   # plain
    trainer = completion_loss_trainer(10.0, tokenizer, ...)   # the op token counts 10x

**Why not TRL's own loss on a CPU.** TRL's SFT loss runs the LM head through its chunked
log-prob kernel; off a Triton device it scores *every* position (`compact = not Triton`, to keep
tile shapes fixed for compilers), so a write row of ~170 tokens whose completion is ~35 puts ~5x
the needed tokens through a 49,152-word head, forward and backward. Profiled on this machine
(4 write SFT steps at batch 8, cProfile): the kernel took 28 of 72 s. Here the backbone runs
once, its hidden states at the supervised positions are gathered, and only those go through the
head: the same loss (mean cross-entropy over supervised tokens, or over the trainer's
`num_items_in_batch` under gradient accumulation) to float rounding, checked against TRL's in
`tests/test_train_runs.py`. TRL's metrics keep their names (`mean_token_accuracy`, `entropy`,
`num_tokens`), so TensorBoard curves stay comparable across runs. A model whose head scales or
caps its logits (`logit_scale`, `final_logit_softcapping`: not SmolLM2) gets its own full forward.

**The decision token.** The write model's completion is `<engram>\\n` then either `</engram>`
(nothing new), `add ...` or `update ...`: the op is decided at one token, the first after the
completion's first newline, and the ~30 tokens after it copy a sentence. With the mean token
loss that token carries ~1/30 of the gradient; measured (notebook 03, 120 steps): the loss fell
to 0.04 while the op token's probabilities stayed at the data's prior on every row (P(empty)
0.52-0.66 whatever the gold op, so greedy decoding never stored). `weight` multiplies that
token's cross-entropy in training (evaluation stays unweighted, so `eval_loss` compares across
runs) and logs it on its own (`decision_loss`, `decision_accuracy`). The position is found from
the labels alone (the first supervised token whose previous supervised token decodes to a
newline), so it holds for any role whose completion opens with a tag line (`<recall>`,
`<engram>`); a row without one is weighted as usual.
"""

from __future__ import annotations

from typing import Any

from mags_lib.errors import MagsError

IGNORE = -100  # the label of a position the loss skips (prompt, padding)


def newline_token_ids(tokenizer: Any) -> list[int]:
    """Ids of the vocabulary's tokens whose text ends with a newline."""
    vocab = tokenizer.get_vocab()
    return sorted(i for t, i in vocab.items()
                  if tokenizer.convert_tokens_to_string([t]).endswith("\n"))


def decision_positions(labels: Any, newline_ids: list[int]) -> Any:
    """Per row of `labels` (B, T; IGNORE where unsupervised), the index of the decision token:
    the first supervised token right after a supervised newline token; -1 where there is none.

    >>> import torch
    >>> decision_positions(torch.tensor([[-100, 5, 9, 7, 9, 3], [-100, -100, 4, 4, 4, 4]]), [9])
    tensor([ 3, -1])
    """
    import torch

    supervised = labels != IGNORE
    is_newline = torch.isin(labels, torch.tensor(newline_ids, device=labels.device)) & supervised
    after = torch.zeros_like(supervised)
    after[:, 1:] = is_newline[:, :-1] & supervised[:, 1:]
    first = torch.where(after.any(dim=1), after.float().argmax(dim=1),
                        torch.full_like(labels[:, 0], -1))
    return first


def shifted_targets(labels: Any, newline_ids: list[int]) -> tuple[Any, Any, Any]:
    """The causal LM's view of `labels` (B, T): the mask of positions t whose logits predict a
    supervised label at t + 1 (B, T - 1), those labels (N,) in row-major order, and which of
    them is a row's decision token (N,).

    >>> import torch
    >>> mask, targets, is_decision = shifted_targets(torch.tensor([[-100, 5, 9, 7]]), [9])
    >>> mask.tolist(), targets.tolist(), is_decision.tolist()
    ([[True, True, True]], [5, 9, 7], [False, False, True])
    """
    import torch

    targets = labels[:, 1:]
    mask = targets != IGNORE
    decision = torch.zeros_like(mask)
    pos = decision_positions(labels, newline_ids)
    rows = torch.nonzero(pos > 0).flatten()
    decision[rows, pos[rows] - 1] = True  # logits at t predict the label at t + 1
    return mask, targets[mask], decision[mask]


def completion_loss(logits: Any, targets: Any, is_decision: Any, weight: float,
                    num_items: Any = None) -> tuple[Any, dict[str, float]]:
    """Cross-entropy of `logits` (N, V) at the supervised positions against `targets` (N,),
    the decision tokens' terms times `weight`, summed and divided by the number of supervised
    tokens (or `num_items`, the trainer's count under gradient accumulation); with TRL's
    metrics (mean token accuracy, entropy) and the decision token's loss and top-1 accuracy.

    >>> import torch
    >>> loss, stats = completion_loss(torch.zeros(3, 3), torch.tensor([2, 1, 0]),
    ...                               torch.tensor([False, True, False]), 3.0)
    >>> round(loss.item(), 4), round(stats["decision_loss"], 4)   # (1 + 3 + 1) ln 3 / 3
    (1.831, 1.0986)
    """
    import torch
    import torch.nn.functional as F

    logits = logits.float()
    ce = F.cross_entropy(logits, targets, reduction="none")
    weights = torch.where(is_decision, torch.as_tensor(weight, dtype=ce.dtype), 1.0)
    count = num_items if num_items is not None else targets.numel()
    loss = (ce * weights).sum() / torch.as_tensor(count, device=ce.device).clamp(min=1)
    stats: dict[str, float] = {}
    if targets.numel():
        with torch.no_grad():
            logp = logits.log_softmax(dim=-1)
            top1 = logits.argmax(dim=-1) == targets
            stats = {"mean_token_accuracy": top1.float().mean().item(),
                     "entropy": -(logp.exp() * logp).sum(-1).mean().item()}
            if is_decision.any():
                stats["decision_loss"] = ce[is_decision].mean().item()
                stats["decision_accuracy"] = top1[is_decision].float().mean().item()
    return loss, stats


def head_is_plain(model: Any) -> bool:
    """True when the model's logits are its LM head's output as is (no scale, no soft cap),
    so that the head may run on a subset of positions."""
    config = getattr(model, "config", None)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return not any(getattr(text, name, None) not in (None, 1.0) for name in (
        "final_logit_softcapping", "logit_scale", "output_multiplier", "lm_head_multiplier",
        "logits_scaling"))


def supervised_logits(model: Any, inputs: dict[str, Any], newline_ids: list[int]
                      ) -> tuple[Any, Any, Any]:
    """Logits (N, V) at the supervised positions of `inputs` (with `labels`), their targets and
    decision flags (`shifted_targets`). The backbone runs on the whole batch once; the head
    runs on those N positions only when `head_is_plain`, else on every position."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    mask, targets, is_decision = shifted_targets(inputs["labels"], newline_ids)
    forward = {k: v for k, v in inputs.items() if k != "labels"}
    if head_is_plain(base):
        backbone = getattr(base, base.base_model_prefix)
        hidden = backbone(**forward, use_cache=False).last_hidden_state[:, :-1]
        logits = base.get_output_embeddings()(hidden[mask])
    else:
        logits = model(**forward, use_cache=False).logits[:, :-1][mask]
    return logits, targets, is_decision


def completion_loss_trainer(weight: float, tokenizer: Any, **trainer_args: Any) -> Any:
    """A TRL `SFTTrainer` whose loss is `completion_loss` on `supervised_logits`, the decision
    token weighted by `weight` in training (1 = TRL's plain token mean); its metrics go to
    TRL's log (TensorBoard: train/mean_token_accuracy, train/decision_loss)."""
    if not weight > 0:
        raise MagsError(f"decision_token_weight must be > 0, got {weight!r}",
                        "set SFTStageConfig.decision_token_weight (notebook 03: "
                        "WRITE_DECISION_WEIGHT) to 1 for TRL's plain loss, or above 1 to "
                        "weigh the decision token more")
    from trl import SFTTrainer

    newline_ids = newline_token_ids(tokenizer)

    class CompletionLossSFTTrainer(SFTTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if return_outputs:  # someone wants the full logits: TRL's path builds them
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            mode = "train" if model.training else "eval"
            logits, targets, is_decision = supervised_logits(model, inputs, newline_ids)
            loss, stats = completion_loss(logits, targets, is_decision,
                                          weight if model.training else 1.0,
                                          num_items_in_batch if model.training else None)
            for key, value in stats.items():
                self._metrics[mode][key].append(value)
            if mode == "train" and "attention_mask" in inputs:
                self._total_train_tokens = (getattr(self, "_total_train_tokens", 0)
                                            + int(inputs["attention_mask"].sum()))
                self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
            return loss

    return CompletionLossSFTTrainer(processing_class=tokenizer, **trainer_args)
