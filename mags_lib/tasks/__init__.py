"""The training tasks both dataset synthesis (`synth`) and training (`train`) speak: the rows of
the ask / write / answer tasks (`data`: reading, writing, checking, hashing them), what a model's
output says (`completions`: its text, answer, engram ops, chosen op), the pure reward functions
that score a completion against a row's gold (`rewards`, registered by name; the write model's
outcome reward in `outcome`), the guard that keeps a bad row from stopping training and counts
it (`reward_guard`), and the write model's evaluation metrics (`write_metrics`).

    from mags_lib.tasks.data import load_jsonl, TASKS
    from mags_lib.tasks.rewards import REWARDS, recall_reward

It sits below both, so the dataset does not import training and training does not import the
dataset's generator.
"""
