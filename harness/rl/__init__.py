"""Self-play reinforcement learning: AlphaZero-style generations that resume where killed.

- :mod:`harness.rl.config` — ``RLConfig`` and its TOML tables
- :mod:`harness.rl.run` — ``RLRun``: the generation loop, its commit points and resume
- :mod:`harness.rl.selfplay` — one generation's games on the batched search
- :mod:`harness.rl.game_rows` — per-position training targets of a finished game
- :mod:`harness.rl.buffer` — the on-disk replay buffer and its window
- :mod:`harness.rl.window` — how the window grows
- :mod:`harness.rl.samples` — augmented training batches from the window
- :mod:`harness.rl.learner` — one network trained generation after generation
- :mod:`harness.rl.gating` — candidate against best, and the promotion rule
- :mod:`harness.rl.curriculum` — when the large network takes over
- :mod:`harness.rl.strength` — ``harness rl-report``: Elo against games and wall time

Nothing here imports TensorFlow at import time.
"""
