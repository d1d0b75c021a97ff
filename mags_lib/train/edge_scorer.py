"""Fit the attention edge scorer (`memory.edge_scorer.AttentionEdgeScorer`) with PyTorch.

Examples come from `evaluation.edge_study.collect_edge_examples`: for every candidate edge of a
new node in training games, the new node's and the candidate's embeddings, the graph features
and a label (1: the two nodes were later needed together to answer a decision). Binary
cross-entropy with positives up-weighted to the negatives' count, Adam, full batch (a few
thousand examples), a seeded initialisation; the fitted parameters come back as NumPy arrays.

    params, report = fit_edge_scorer(examples, EdgeScorerFitConfig())
    scorer = AttentionEdgeScorer(params)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mags_lib.errors import MagsError


@dataclass
class EdgeScorerFitConfig:
    dim: int = field(default=4, metadata={"help": "query / key projection size d"})
    hidden: int = field(default=8, metadata={"help": "hidden units over the graph features"})
    epochs: int = field(default=300, metadata={"help": "full-batch Adam steps"})
    lr: float = field(default=0.02, metadata={"help": "Adam learning rate"})
    weight_decay: float = field(default=1e-3, metadata={"help": "Adam weight decay"})
    seed: int = field(default=0, metadata={"help": "initialisation seed"})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fit_edge_scorer(examples: dict[str, np.ndarray], cfg: EdgeScorerFitConfig | None = None
                    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """`examples`: arrays `new` (n, D), `cand` (n, D), `features` (n, F), `label` (n,).
    Returns the parameters (`memory.edge_scorer.PARAMS`) and a report (loss, accuracy on the
    training examples, positives)."""
    import torch

    cfg = cfg or EdgeScorerFitConfig()
    label = np.asarray(examples["label"], dtype=np.float32)
    n_pos = int(label.sum())
    if len(label) == 0 or n_pos == 0 or n_pos == len(label):
        raise MagsError(f"edge scorer examples need both labels (got {n_pos} positives of "
                        f"{len(label)})", "collect from more training games (more seeds or "
                        "turns) in a regime whose decisions need two facts (multi_hop)")
    torch.manual_seed(cfg.seed)
    new = torch.tensor(np.asarray(examples["new"], dtype=np.float32))
    cand = torch.tensor(np.asarray(examples["cand"], dtype=np.float32))
    feats = torch.tensor(np.asarray(examples["features"], dtype=np.float32))
    y = torch.tensor(label)
    dim_in, n_feat = new.shape[1], feats.shape[1]
    wq = torch.nn.Parameter(torch.randn(cfg.dim, dim_in) * 0.05)
    wk = torch.nn.Parameter(torch.randn(cfg.dim, dim_in) * 0.05)
    u = torch.nn.Parameter(torch.randn(cfg.hidden, n_feat) * 0.3)
    b = torch.nn.Parameter(torch.zeros(cfg.hidden))
    v = torch.nn.Parameter(torch.randn(cfg.hidden) * 0.3)
    c = torch.nn.Parameter(torch.zeros(()))
    params = [wq, wk, u, b, v, c]
    opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    pos_weight = torch.tensor((len(label) - n_pos) / n_pos)
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)

    def logits() -> Any:
        attention = ((new @ wq.T) * (cand @ wk.T)).sum(1) / cfg.dim ** 0.5
        return attention + torch.relu(feats @ u.T + b) @ v + c

    losses = []
    for _ in range(cfg.epochs):
        opt.zero_grad()
        loss = loss_fn(logits(), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        pred = (logits() > 0).float()
        tp = float(((pred == 1) & (y == 1)).sum())
        report = {"examples": len(label), "positives": n_pos, "first_loss": losses[0],
                  "final_loss": losses[-1], "train_accuracy": float((pred == y).float().mean()),
                  "train_recall": tp / n_pos,
                  "train_precision": tp / max(1.0, float(pred.sum())),
                  "parameters": int(sum(p.numel() for p in params)), "config": cfg.to_dict()}
    out = {name: p.detach().numpy().copy() for name, p in
           zip(("wq", "wk", "u", "b", "v", "c"), params, strict=True)}
    return out, report
