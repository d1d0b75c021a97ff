"""SFT loss with the decision token weighted: the write model's op is one token in thirty.

    trainer = decision_weighted_trainer(10.0, tokenizer, model=..., args=..., ...)

The write model's completion is `<engram>\\n` then either `</engram>` (nothing new), `add ...`
or `update ...`: the op is decided at one token, the first after the completion's first
newline, and the ~30 tokens after it copy a sentence. With the mean token loss, that one token
carries ~1/30 of the gradient; measured (notebook 03, 120 steps): the loss fell to 0.04 while
the op token's probabilities stayed at the data's prior on every row (P(empty) 0.52-0.66
whatever the gold op, so greedy decoding never stored). This loss multiplies the cross-entropy
of that token by `weight` and logs it on its own (`decision_loss`, `decision_accuracy`).

The position is found from the labels alone (the first supervised token whose previous
supervised token decodes to a newline), so it holds for any role whose completion opens with
a tag line (`<recall>`, `<engram>`); a row without one is weighted as usual.
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


def weighted_causal_loss(logits: Any, labels: Any, newline_ids: list[int], weight: float,
                         num_items: Any = None) -> tuple[Any, dict[str, float]]:
    """Causal LM loss on supervised tokens with the decision token's term times `weight`,
    divided by the number of supervised tokens (or `num_items`, the trainer's count under
    gradient accumulation); and the decision token's mean cross-entropy and top-1 accuracy.

    >>> import torch
    >>> logits = torch.zeros(1, 4, 3); labels = torch.tensor([[-100, 2, 1, 0]])
    >>> loss, stats = weighted_causal_loss(logits, labels, [2], 3.0)
    >>> round(loss.item(), 4), round(stats["decision_loss"], 4)   # (1 + 3 + 1) ln 3 / 3
    (1.831, 1.0986)
    """
    import torch
    import torch.nn.functional as F

    pos = decision_positions(labels, newline_ids)
    targets = labels[:, 1:]
    ce = F.cross_entropy(logits[:, :-1].transpose(1, 2).float(), targets.clamp(min=0),
                         reduction="none") * (targets != IGNORE)
    weights = torch.ones_like(ce)
    rows = torch.nonzero(pos > 0).flatten()
    weights[rows, pos[rows] - 1] = weight  # logits at t predict the label at t + 1
    count = num_items if num_items is not None else (targets != IGNORE).sum()
    loss = (ce * weights).sum() / torch.as_tensor(count, device=ce.device).clamp(min=1)
    stats: dict[str, float] = {}
    if len(rows):
        picked = ce[rows, pos[rows] - 1].detach()
        top1 = logits[rows, pos[rows] - 1].argmax(dim=-1) == labels[rows, pos[rows]]
        stats = {"decision_loss": picked.mean().item(),
                 "decision_accuracy": top1.float().mean().item()}
    return loss, stats


def decision_weighted_trainer(weight: float, tokenizer: Any, **trainer_args: Any) -> Any:
    """A TRL `SFTTrainer` whose training loss is `weighted_causal_loss` (evaluation keeps
    TRL's own loss, so eval_loss stays comparable across runs); the decision token's loss and
    accuracy are logged beside TRL's metrics (TensorBoard: train/decision_loss)."""
    if not weight > 0:
        raise MagsError(f"decision_token_weight must be > 0, got {weight!r}",
                        "set SFTStageConfig.decision_token_weight (notebook 03: "
                        "WRITE_DECISION_WEIGHT) to 1 for TRL's plain loss, or above 1 to "
                        "weigh the decision token more")
    from trl import SFTTrainer

    newline_ids = newline_token_ids(tokenizer)

    class DecisionWeightedSFTTrainer(SFTTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if not model.training:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            labels = inputs["labels"]
            outputs = model(**{k: v for k, v in inputs.items() if k != "labels"},
                            use_cache=False)
            loss, stats = weighted_causal_loss(outputs.logits, labels, newline_ids, weight,
                                               num_items_in_batch)
            for key, value in stats.items():
                self._metrics["train"][key].append(value)
            return (loss, outputs) if return_outputs else loss

    return DecisionWeightedSFTTrainer(processing_class=tokenizer, **trainer_args)
