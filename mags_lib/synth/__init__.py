"""Dataset synthesis for the ask / write / answer models (notebook 01_synthesize_dataset).

    from mags_lib.synth import SynthConfig, synthesize
    result = synthesize(SynthConfig(smoke=True))     # data/synth/<task>/<split>.jsonl
    result.counts, result.diversity, result.expansion.to_dict()

Modules, one idea each: `config` (SynthConfig), `surface` (phrasings), `chains` (a game's
ground truth -> rows), `conversation_rows` (a person's facts and LoCoMo's training
conversations -> ask and write rows, by `SynthConfig.sources`), `expand` (few-shot LLM rewrites
kept only when they agree with the truth), `diversity` (distinct-n, near-duplicates, dedupe),
`build` (the whole run), `figures`.
Rows are in the one training format of `mags_lib.objectives.data`. Nothing heavy is imported here:
the LLM loads only when expansion runs.
"""

from mags_lib.synth.build import SynthResult, synthesize, verify_rows
from mags_lib.synth.config import SPLITS, SynthConfig

__all__ = ["SPLITS", "SynthConfig", "SynthResult", "synthesize", "verify_rows"]
