"""What the models are trained toward, as both dataset synthesis (`synth`) and training
(`train`) speak it: the rows of the ask / write / answer roles (`data`: reading, writing, checking, hashing them), what a model's
output says (`completions`: its text, answer, engram ops, chosen op), the pure reward functions
that score a completion against a row's gold (`rewards`, registered by name; the write model's
outcome reward in `outcome`), the guard that keeps a bad row from stopping training and counts
it (`reward_guard`), and the write model's evaluation metrics (`write_metrics`).

    from mags_lib.objectives.data import load_jsonl, TASKS
    from mags_lib.objectives.rewards import REWARDS, recall_reward

It sits below both, so the dataset does not import training and training does not import the
dataset's generator. (A row's `task` field, and `data.TASKS`, name the role whose dataset the
row belongs to: 'ask', 'write', 'answer'; the tasks an agent is judged on, the game or a
conversation, are `mags_lib.tasks`.)
"""
