"""`MemoryConfig`: every knob of the Liquid Knowledge Graph, a help string each, in one group per
concern: `engram` (writing), `recall` (reading), `dynamics` (`step()` and maintenance),
`consolidation` (working memory), `objective` (J) and `index` (vector index, snapshots), read as
`cfg.recall.lexical_weight`. Field names are unique across groups, so overrides and the saves of
before the groups can name fields flat (`MemoryConfig.from_dict({"lexical_weight": 0.5})`).

The defaults are tuned for all-MiniLM-L6-v2 sentence embeddings and game-turn time scales
(one `step()` per turn). SMOKE runs shrink sizes (`max_nodes`, `working_capacity`), never code.

Scoring rules documented here, implemented in the modules named in brackets:

* Attention edges [engram]: the new node's top-m valid neighbours with cosines c_i get weights
  w_i = c_max * exp((c_i - c_max) / attention_temperature), i.e. the softmax over c_i / T
  rescaled so that the best neighbour's weight equals its cosine; edges below
  `min_edge_weight` are dropped.
* Recall hybrid score [anchors]: (1 - lexical_weight) * max(cosine, 0)
  + lexical_weight * bm25 / max(bm25 of the candidates).
* Traversal [traversal]: score(v) = anchor score * prod(edge weights) * prod(cross-block factor
  for every hop that changes block) * block_weights[block(v)]; expansion stops where the plain
  product of edge weights falls below `min_path_product` or after `max_visited` nodes.
* Decay [dynamics]: an edge unused for s steps decays at rate decay_rate * s / (s + h),
  h = decay_recency_steps; integrated exactly between any two steps, so decay can be applied
  lazily and gives the same weight whenever it is applied.
* Consolidation [working]: score = consolidate_use_weight * min(uses / use_saturation, 1)
  + consolidate_surprise_weight * surprise + consolidate_importance_weight * importance, with
  surprise = 1 - max cosine to the stored nodes. An item is stored when score >=
  consolidate_threshold, dropped as redundant when surprise < redundancy_surprise (the nearest
  stored node gets a use instead), dropped otherwise.
* Objective [metrics]: J = mean reward - objective_lambda * recalls per query
  - objective_mu * engrams per turn - objective_nu * edge churn per step, over the last
  `metrics_window` steps.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from mags_lib.memory.index import (
    HNSW_CONNECTIVITY,
    HNSW_EXPANSION_ADD,
    HNSW_EXPANSION_SEARCH,
    HNSW_EXPANSION_WRITE,
    VectorIndex,
)

MAX_EPISODE_CONTEXT = 8
"""The most earlier episodes an episode may be embedded with (`episode_context`)."""

RERANK_BLOCKS = frozenset({"all", "episodic", "semantic"})
"""What `RecallConfig.rerank_blocks` may name: every node, or one block's."""

DIALOGUE_MEMORY: dict[str, Any] = {"episode_context": 0, "reranker": "dialogue",
                                   "rerank_blocks": "episodic"}
"""`MemoryConfig` overrides for a memory that reads a dialogue (the conversation evaluation,
the chat). `episode_context` stays 0 here: in notebook 12's sweep on the development splits
(LoCoMo's training conversations, the development personas; 2026-11-29) the turns before an
episode raise LoCoMo's raw-turn evidence recall@10 (0.680 -> 0.703 / 0.730 / 0.733 for 1 / 2 /
3 turns) and lower the persona set's (0.990 -> 0.969 / 0.816 / 0.847): averaged over both, no
value gains more than 0.01, the margin asked of a change from 0.

The learned reranker (`memory/rerank.py`) reorders the turns (episodic nodes) only, since
2026-12-06 (candidate S of the journal, by its rule written before it ran): on notebook 12's
development splits with one machine's trained models, `mags_episodic`'s evidence@10 on conv-43
0.588 -> 0.661 and F1 0.154 -> 0.221, and on the six development personas `mags` unchanged and
`mags_episodic` one current fact more and one stale answer more. Reranking every node
(`rerank_blocks="all"`) lost `mags` 5 of 48 current persona facts at the reader."""


@dataclass
class EngramConfig:
    """Writing: merging, initial edges, contradictions and supersession (`engram`)."""

    merge_threshold: float = field(default=0.92, metadata={
        "help": "cosine to the closest valid node of the same block at or above which a new "
                "item merges into it (confidence up, source added) instead of adding a node"})
    attention_top_m: int = field(default=5, metadata={
        "help": "number of nearest valid nodes a new node may connect to (attention edges)"})
    attention_temperature: float = field(default=0.1, metadata={
        "help": "softmax temperature over neighbour cosines; large = all neighbours as strong "
                "as the best, small = only the best one"})
    min_edge_weight: float = field(default=0.05, metadata={
        "help": "attention, temporal and hebbian edges are never created below this weight"})
    temporal_weight: float = field(default=0.6, metadata={
        "help": "weight of the edge from an episode to the previous episode in time"})
    link_weight: float = field(default=0.8, metadata={
        "help": "weight of an explicit Link action's edge"})
    default_confidence: float = field(default=0.8, metadata={
        "help": "confidence of an observation when the caller gives none"})
    max_sources: int = field(default=32, metadata={
        "help": "provenance entries kept per node (oldest dropped first on merge)"})
    write_overquery: int = field(default=8, metadata={
        "help": "extra neighbours fetched per write, so that filtering invalid nodes leaves m"})
    write_chunk: int = field(default=256, metadata={
        "help": "observe_many searches the index for this many items at once"})
    contradiction_candidates: int = field(default=5, metadata={
        "help": "most similar valid semantic nodes checked for a contradiction per new fact"})
    contradiction_min_cosine: float = field(default=0.3, metadata={
        "help": "candidates less similar than this are never checked"})
    contradiction_min_overlap: float = field(default=0.6, metadata={
        "help": "rule detector: shared content tokens / content tokens of the shorter fact"})
    contradiction_max_diff: int = field(default=3, metadata={
        "help": "rule detector: at most this many content tokens differ on each side"})
    subject_check: bool = field(default=True, metadata={
        "help": "a fact never supersedes one that opens with another name (\"Felix lives in "
                "Ghent.\" leaves \"Mira lives in Ghent.\" valid), whatever the detector or an "
                "update's nearest fact; keyed writes are not checked"})
    superseded_confidence_factor: float = field(default=0.5, metadata={
        "help": "a superseded or forgotten node's confidence is multiplied by this"})
    keep_history: bool = field(default=True, metadata={
        "help": "supersedes edges are solid, so the chain of old versions is never pruned"})
    update_supersede_threshold: float = field(default=0.5, metadata={
        "help": "EngramUpdate with no detected contradiction supersedes the closest valid node "
                "of its block if that node's cosine is at least this (and below merge)"})
    update_shared_words: int = field(default=0, metadata={
        "help": "an EngramUpdate with no detected contradiction retires its nearest fact only "
                "if the two share at least this many content words besides the name they open "
                "with (contradiction.shared_words), else nothing (no farther fact either): "
                "'Oskar's plants are watered.' then leaves 'Oskar's favourite food is pho.' "
                "valid; 0: off, the nearest fact above update_supersede_threshold; not applied "
                "with a judge (written 2026-12-07; at 1 it failed the first step of its rule "
                "on the persona development sets: wrong retirements 19 -> 14, the bar halved; "
                "not adopted: journal, fifteenth session)"})
    update_judge_candidates: int = field(default=3, metadata={
        "help": "with a judge (LiquidMemory(judge=...)): how many of an update's nearest same-"
                "block facts above update_supersede_threshold the judge is asked about, "
                "nearest first; the first it says the update replaces is superseded"})
    match_threshold: float = field(default=0.25, metadata={
        "help": "minimum hybrid score for Forget / Link / connect to pick a node for a string"})
    episode_context: int = field(default=0, metadata={
        "help": "an episode's vector also embeds the texts of this many episodes before it "
                "(normalised sum of its own embedding and its context's; its text and BM25 "
                "entry stay its own), so a reply such as 'Yes, last week!' is found by what it "
                "answers; an episode then merges only into one with the same text. 0: its own "
                f"text alone. At most {MAX_EPISODE_CONTEXT}; dialogues use DIALOGUE_MEMORY"})

@dataclass
class RecallConfig:
    """Reading: candidates, hybrid score, anchors, traversal, Hebbian wiring of co-recalled nodes
    (`anchors`, `traversal`, `recall`)."""

    recall_overquery: int = field(default=4, metadata={
        "help": "candidates per recall = max(recall_overquery * k, min_candidates)"})
    min_candidates: int = field(default=16, metadata={"help": "see recall_overquery"})
    lexical_weight: float = field(default=0.3, metadata={
        "help": "weight of normalised BM25 in the hybrid anchor score (dense gets 1 - this)"})
    lexical_stem: bool = field(default=False, metadata={
        "help": "BM25 over English stems (Snowball): 'painted' finds 'painting'. Raw-turn "
                "evidence recall@10 on LoCoMo's training conversations 0.680 -> 0.701, the "
                "development personas 0.990 either way (2026-11-30); off by default"})
    feedback_weight: float = field(default=0.0, metadata={
        "help": "pseudo-relevance feedback (Rocchio): the query vector moves this far toward "
                "the mean of its first `feedback_hits` candidates' vectors, and candidates are "
                "drawn again (BM25 keeps the query's words); 0 = off"})
    feedback_hits: int = field(default=3, metadata={
        "help": "how many of the first round's best candidates feed the query (feedback_weight)"})
    n_anchors: int = field(default=4, metadata={
        "help": "anchors chosen by MMR coverage among the candidates; traversal starts there"})
    mmr_lambda: float = field(default=0.7, metadata={
        "help": "MMR trade-off: 1 = top relevance only, 0 = farthest-point coverage only"})
    min_path_product: float = field(default=0.1, metadata={
        "help": "traversal stops where the product of edge weights from the anchor drops below"})
    max_visited: int = field(default=64, metadata={
        "help": "at most this many nodes are expanded per recall (all anchors together)"})
    cross_block_factor: float = field(default=0.8, metadata={
        "help": "score multiplier for every traversal hop between episodic and semantic"})
    block_weights: dict[str, float] = field(
        default_factory=lambda: {"episodic": 1.0, "semantic": 1.0},
        metadata={"help": "score multiplier of a traversed node by its block (routing)"})
    hit_mmr_lambda: float = field(default=1.0, metadata={
        "help": "diversity of the returned hits: the k hits are chosen from the ranked ones by "
                "MMR with this lambda (1 = the plain ranking; lower trades a hit's score for "
                "its distance to the hits already chosen)"})
    reranker: str = field(default="", metadata={
        "help": "a learned second pass over the ranking (memory/rerank.py): a shipped "
                "reranker's name ('dialogue') or a JSON path; '' = off"})
    rerank_blocks: str = field(default="all", metadata={
        "help": "which nodes the reranker reorders: 'all' (every node of the pool, each scored "
                "by its probability), or one block ('episodic'): that block's nodes are "
                "reordered among the places they held in the ranking, each place keeping its "
                "score, and the other blocks' nodes keep their places (the shipped reranker was "
                "fitted on turns, and its neighbour features read episodic nodes only)"})
    rerank_pool: int = field(default=50, metadata={
        "help": "how many of the ranked nodes the reranker rescores (at least k); the rest "
                "are dropped"})
    hebbian_rate: float = field(default=0.1, metadata={
        "help": "co-recalled anchors: w <- w + rate * (1 - w) (bounded, stays <= 1)"})
    hebbian_init: float = field(default=0.1, metadata={
        "help": "weight of a new hebbian edge between co-recalled anchors"})
    hebbian_min_score: float = field(default=0.3, metadata={
        "help": "only anchors with a hybrid score at least this wire together"})
    working_use_cosine: float = field(default=0.5, metadata={
        "help": "a recall query this similar to a working-memory item counts as a use of it"})
    connect_max_visited: int = field(default=20_000, metadata={
        "help": "node budget of the strongest-path search in connect()"})

@dataclass
class DynamicsConfig:
    """`step()` and maintenance: reward, decay with recency correction, pruning, solidification,
    k-core consolidation, forgetting, capacity, importance (`dynamics`, `maintenance`)."""

    reward_rate: float = field(default=0.2, metadata={
        "help": "reward r in [-1, 1] on the last recalled paths: r > 0: w += rate*r*(1-w); "
                "r < 0: w *= 1 + rate*r"})
    decay_rate: float = field(default=0.005, metadata={
        "help": "decay per step of an edge unused for a long time (w *= exp(-rate*f(s)))"})
    decay_recency_steps: float = field(default=20.0, metadata={
        "help": "h in the recency correction f(s) = s / (s + h): edges used in the last h "
                "steps decay at most at half the rate"})
    prune_threshold: float = field(default=0.03, metadata={
        "help": "non-solid edges whose (decayed) weight falls below this are removed"})
    solidify_threshold: float = field(default=0.95, metadata={
        "help": "edges at or above this weight become solid: no decay, never pruned"})
    solid_node_uses: int = field(default=25, metadata={
        "help": "a node recalled or merged this many times becomes solid (never removed)"})
    max_degree: int = field(default=64, metadata={
        "help": "overcrowding: a node keeps at most this many non-solid edges (weakest go)"})
    maintenance_every: int = field(default=50, metadata={
        "help": "prune / solidify / k-core / importance / removal pass every this many steps"})
    core_keep_k: int = field(default=3, metadata={
        "help": "nodes in the k-core for this k are central: kept even when inactive"})
    isolated_grace: int = field(default=200, metadata={
        "help": "a node without edges is removed once unused for this many steps"})
    inactive_after: int = field(default=5_000, metadata={
        "help": "a node outside the k-core unused for this many steps is removed"})
    max_nodes: int = field(default=250_000, metadata={
        "help": "capacity: beyond it the lowest-importance removable nodes go"})
    capacity_headroom: float = field(default=0.05, metadata={
        "help": "when over capacity, remove down to max_nodes * (1 - headroom) at once"})
    importance_strength: float = field(default=0.3, metadata={
        "help": "importance weight of tanh(weighted degree / 2)"})
    importance_degree: float = field(default=0.1, metadata={
        "help": "importance weight of tanh(degree / 8) (out-degree = degree: undirected)"})
    importance_use: float = field(default=0.3, metadata={
        "help": "importance weight of tanh(uses / 5)"})
    importance_core: float = field(default=0.1, metadata={
        "help": "importance weight of min(core number / core_keep_k, 1)"})
    importance_base: float = field(default=0.2, metadata={
        "help": "importance weight of the node's confidence"})

@dataclass
class ConsolidationConfig:
    """The working-memory block and what of it is consolidated into long-term memory (`working`)."""

    working_capacity: int = field(default=16, metadata={
        "help": "recent turns held in working memory; the oldest overflow into consolidation"})
    working_ttl: int = field(default=8, metadata={
        "help": "steps an item stays in working memory before step() consolidates it"})
    consolidate: bool = field(default=True, metadata={
        "help": "items leaving working memory are judged by the consolidation rule (stored, "
                "reinforcing or dropped); False: they leave unstored, so that only a writer "
                "(the closed loop's write model) decides what enters long-term memory"})
    consolidate_threshold: float = field(default=0.45, metadata={
        "help": "consolidation score at or above which a working item becomes a node"})
    redundancy_surprise: float = field(default=0.05, metadata={
        "help": "surprise below this means already stored: the item is dropped"})
    consolidate_use_weight: float = field(default=0.3, metadata={"help": "see module doc"})
    consolidate_surprise_weight: float = field(default=0.5, metadata={"help": "see module doc"})
    consolidate_importance_weight: float = field(default=0.2, metadata={"help": "see doc"})
    use_saturation: int = field(default=3, metadata={
        "help": "uses at which a working item's usage term saturates at 1"})

@dataclass
class ObjectiveConfig:
    """The composite objective J over recent steps (`metrics`)."""

    metrics_window: int = field(default=100, metadata={
        "help": "steps over which metrics() averages rewards, recalls, engrams and churn"})
    objective_lambda: float = field(default=0.05, metadata={"help": "J cost per recall"})
    objective_mu: float = field(default=0.05, metadata={"help": "J cost per engram"})
    objective_nu: float = field(default=0.001, metadata={"help": "J cost per changed edge"})

@dataclass
class IndexConfig:
    """The vector index (exact below a size, HNSW above) and in-memory snapshots (`index`,
    `snapshots`)."""

    exact_below: int = field(default=20_000, metadata={
        "help": "vector index is exact (brute force) below this many nodes, HNSW above"})
    seed: int = field(default=0, metadata={"help": "seed of the approximate vector index"})
    hnsw_connectivity: int = field(default=HNSW_CONNECTIVITY, metadata={
        "help": "HNSW graph degree: higher = better candidate recall, bigger and slower writes"})
    hnsw_expansion_add: int = field(default=HNSW_EXPANSION_ADD, metadata={
        "help": "HNSW beam width while inserting: the main cost of a write above exact_below"})
    hnsw_expansion_search: int = field(default=HNSW_EXPANSION_SEARCH, metadata={
        "help": "HNSW beam width while searching (candidates are rescored exactly)"})
    hnsw_expansion_write: int = field(default=HNSW_EXPANSION_WRITE, metadata={
        "help": "HNSW beam width of a write's neighbour search (merge, contradiction, edges)"})
    max_snapshots: int = field(default=8, metadata={
        "help": "in-memory snapshots kept; the oldest is dropped beyond this"})


@dataclass
class MemoryConfig:
    """Every knob of the memory, by concern (see the module doc).

    `MemoryConfig.from_dict` reads nested dicts (`{"recall": {"lexical_weight": 0.5}}`, as
    `to_dict` writes them) and flat ones (`{"lexical_weight": 0.5}`: the format memories were
    saved in before the split, and the short form of overrides); `replaced(**flat)` is a copy
    with some fields changed by their (unique) names."""

    engram: EngramConfig = field(default_factory=EngramConfig, metadata={
        "help": "writing: merges, initial edges, contradictions, supersession"})
    recall: RecallConfig = field(default_factory=RecallConfig, metadata={
        "help": "reading: anchors, traversal, Hebbian wiring at recall"})
    dynamics: DynamicsConfig = field(default_factory=DynamicsConfig, metadata={
        "help": "step(): reward, decay, pruning, solidification, consolidation, forgetting"})
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig, metadata={
        "help": "the working-memory block and its consolidation"})
    objective: ObjectiveConfig = field(default_factory=ObjectiveConfig, metadata={
        "help": "the composite objective J"})
    index: IndexConfig = field(default_factory=IndexConfig, metadata={
        "help": "the vector index and in-memory snapshots"})

    def __post_init__(self) -> None:
        check_config(self)

    def flat(self) -> dict[str, Any]:
        """Every field by its own name, the groups flattened (names are unique across groups)."""
        return {k: v for group in GROUPS for k, v in asdict(getattr(self, group)).items()}

    def replaced(self, **changes: Any) -> MemoryConfig:
        """A copy with the fields named in `changes` (flat names) set, checked as `from_dict`."""
        return MemoryConfig.from_dict({**self.flat(), **changes})

    def vector_index(self, dim: int) -> VectorIndex:
        """A new, empty `VectorIndex` of dimension `dim` with this config's index settings."""
        ix = self.index
        return VectorIndex(dim, exact_below=ix.exact_below, seed=ix.seed,
                           connectivity=ix.hnsw_connectivity, expansion_add=ix.hnsw_expansion_add,
                           expansion_search=ix.hnsw_expansion_search)

    def to_dict(self) -> dict[str, Any]:
        """Nested by group: {"engram": {...}, "recall": {...}, ...}."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryConfig:
        """Nested or flat keys (or both), each group read strictly (`configs.strict_from_dict`):
        unknown keys, wrong types and out-of-range values raise ConfigError (a ValueError and a
        MagsError)."""
        from mags_lib.configs import strict_from_dict
        from mags_lib.errors import ConfigError

        if not isinstance(data, dict):
            raise ConfigError(f"MemoryConfig must be read from an object (a dict), got "
                              f"{type(data).__name__}", "pass a dict of MemoryConfig fields")
        nested: dict[str, dict[str, Any]] = {group: {} for group in GROUPS}
        unknown = []
        for key, value in data.items():
            if key in GROUPS:
                if not isinstance(value, dict):
                    raise ConfigError(f"MemoryConfig.{key} = {value!r} is not an object",
                                      f"give {key} as a dict of {GROUPS[key].__name__} fields")
                nested[key].update(value)
            elif key in FIELD_GROUP:  # flat: saves from before the groups, and overrides
                nested[FIELD_GROUP[key]][key] = value
            else:
                unknown.append(key)
        if unknown:
            raise ConfigError(f"unknown MemoryConfig keys {sorted(unknown)}",
                              f"use only these keys: the groups {list(GROUPS)} or their fields "
                              f"{sorted(FIELD_GROUP)}")
        return cls(**{group: strict_from_dict(GROUPS[group], values)
                      for group, values in nested.items()})


LOOP_MEMORY_DEFAULTS: dict[str, Any] = {"contradiction_max_diff": 1}
"""Memory settings of the closed loop, under any the caller gives. A model writes free text
without keys, so supersession rests on the memory's own detector: a fact that differs from a
stored one in one content word on each side is its new version, two or more make it another
fact. (At the default 3, two rules about one creature under two conditions superseded each
other: with a perfect stand-in writer on two fixed games, 0.79 / 0.77 accuracy at 3 against
0.97 / 1.00 at 1, MiniLM embedder.)"""

GROUPS: dict[str, type] = {"engram": EngramConfig, "recall": RecallConfig,
                           "dynamics": DynamicsConfig, "consolidation": ConsolidationConfig,
                           "objective": ObjectiveConfig, "index": IndexConfig}
"""MemoryConfig's groups by attribute name."""
FIELD_GROUP: dict[str, str] = {f.name: group for group, kind in GROUPS.items()
                               for f in fields(kind)}
"""The group of every field, by the field's (unique) name."""

_UNIT = ("merge_threshold", "min_edge_weight", "temporal_weight", "link_weight",
         "default_confidence", "contradiction_min_cosine", "contradiction_min_overlap",
         "superseded_confidence_factor", "update_supersede_threshold", "match_threshold",
         "lexical_weight", "feedback_weight", "mmr_lambda", "hit_mmr_lambda", "min_path_product", "cross_block_factor",
         "hebbian_rate", "hebbian_init", "hebbian_min_score", "working_use_cosine",
         "reward_rate", "prune_threshold", "solidify_threshold", "capacity_headroom",
         "consolidate_threshold", "redundancy_surprise")
_POSITIVE_INT = ("attention_top_m", "update_judge_candidates", "max_sources", "write_chunk", "contradiction_candidates",
                 "recall_overquery", "min_candidates", "feedback_hits", "n_anchors", "max_visited", "rerank_pool",
                 "connect_max_visited", "maintenance_every", "max_nodes", "working_capacity",
                 "working_ttl", "use_saturation", "metrics_window", "max_snapshots", "max_degree",
                 "hnsw_connectivity", "hnsw_expansion_add", "hnsw_expansion_search",
                 "hnsw_expansion_write")
_MAX_INT = 10**9


def check_config(cfg: MemoryConfig) -> None:
    """Raise ValueError naming the first field out of its range."""
    flat = cfg.flat()
    for name, value in flat.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"config {name} must be finite, got {value}")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_INT:
            raise ValueError(f"config {name}={value} is out of range (|x| <= {_MAX_INT})")
    for name in _UNIT:
        value = flat[name]
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"config {name} must be in [0, 1], got {value}")
    for name in _POSITIVE_INT:
        if flat[name] < 1:
            raise ValueError(f"config {name} must be >= 1, got {flat[name]}")
    for name in ("attention_temperature", "decay_recency_steps"):
        if flat[name] <= 0:
            raise ValueError(f"config {name} must be > 0, got {flat[name]}")
    if not 0 <= flat["episode_context"] <= MAX_EPISODE_CONTEXT:
        raise ValueError(f"config episode_context must be in [0, {MAX_EPISODE_CONTEXT}], got "
                         f"{flat['episode_context']}")
    for name in ("write_overquery", "contradiction_max_diff", "update_shared_words",
                 "solid_node_uses", "core_keep_k", "isolated_grace", "inactive_after",
                 "exact_below", "seed", "decay_rate",
                 "objective_lambda", "objective_mu", "objective_nu", "importance_strength",
                 "importance_degree", "importance_use", "importance_core", "importance_base",
                 "consolidate_use_weight", "consolidate_surprise_weight",
                 "consolidate_importance_weight"):
        if flat[name] < 0:
            raise ValueError(f"config {name} must be >= 0, got {flat[name]}")
    if flat["min_edge_weight"] <= 0 or flat["hebbian_init"] <= 0:
        raise ValueError("config min_edge_weight and hebbian_init must be > 0 (weights in (0, 1])")
    if flat["temporal_weight"] <= 0 or flat["link_weight"] <= 0:
        raise ValueError("config temporal_weight and link_weight must be > 0")
    for name in ("subject_check", "keep_history", "consolidate", "lexical_stem"):
        if not isinstance(flat[name], bool):
            raise ValueError(f"config {name} must be true or false, got {flat[name]!r}")
    if not isinstance(flat["reranker"], str):
        raise ValueError(f"config reranker must be a name or a path (str), got {flat['reranker']!r}")
    if flat["rerank_blocks"] not in RERANK_BLOCKS:
        raise ValueError(f"config rerank_blocks must be one of {sorted(RERANK_BLOCKS)}, "
                         f"got {flat['rerank_blocks']!r}")
    if not isinstance(flat["block_weights"], dict):
        raise ValueError("config block_weights must be a dict of block -> weight")
    for block, weight in flat["block_weights"].items():
        if not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"config block_weights[{block!r}] must be a finite number >= 0")
