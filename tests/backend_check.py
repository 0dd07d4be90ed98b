"""One zoo family's whole life on the Keras backend this process runs
(``KERAS_BACKEND``, set by tests/test_backends.py before Keras loads).

Supervised training through ``harness train`` on ingested games, self-play
(the search's compiled forward), the learner's steps, a checkpoint loaded
with ``safe_mode`` and a searching player's game under the referee. Prints
one JSON line: what ran and the numbers a test checks.

    KERAS_BACKEND=jax python tests/backend_check.py a0.tiny /tmp/work
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

BOARD = 7
PLANES_ENCODER = "agz17"


def main(model: str, root: Path) -> dict:
    import keras
    import numpy as np

    from harness import api
    from harness.cli import main as harness
    from harness.config_io import from_mapping
    from harness.data.synthetic import write_random_sgfs
    from harness.rl.config import RLConfig
    from harness.rl.run import RLRun
    from harness.search.runtime import keras_forward

    root.mkdir(parents=True, exist_ok=True)
    games = write_random_sgfs(root / "games.sgf", 12, size=BOARD, moves=30, seed=1)
    data = root / "games.h5"
    api.ingest([games], data, board_size=BOARD, encoder=PLANES_ENCODER, val_games=2)

    code = harness(["train", "--model", model, "--data", str(data), "--run", "sl",
                    "--runs-dir", str(root), "--epochs", "1", "--epoch-samples", "64",
                    "--batch-size", "16", "--val-samples", "32", "--quiet"])
    assert code == 0, f"harness train exited {code}"
    with open(root / "sl" / "metrics.csv", newline="") as metrics:
        last = list(csv.DictReader(metrics))[-1]  # quoted fields (the device) hold commas
    train_loss = float(last["train_loss"])

    config = from_mapping(RLConfig, {
        "run": "rl", "runs_dir": str(root), "board_size": BOARD, "komi": 7.0,
        "model": model, "init": str(root / "sl" / "best.keras"), "encoder": PLANES_ENCODER,
        "generations": 1, "seed": 3, "mcts": {"playouts": 4},
        "evaluator": {"batch_size": 4}, "selfplay": {"games": 2, "parallel": 2, "max_moves": 12},
        "train": {"steps": 2, "batch_size": 8}, "window": {"initial": 2},
    }, "backend_check")
    state = RLRun(config, log=lambda _: None).run()
    final = root / "rl" / "models" / "gen-0001.keras"

    loaded = api.load_model(final)  # safe_mode: registered classes only
    x = np.zeros((1, BOARD, BOARD, loaded.inputs[0].shape[-1]), np.float32)
    policy = keras.ops.convert_to_numpy(loaded(x, training=False)["policy"])
    # The search's compiled forward against Keras's own predict, on 3 rows
    # (a shape-compiled forward pads them to 4).
    rows = (np.random.default_rng(0).random((3, *x.shape[1:])) < 0.3).astype(np.float32)
    logits, values = keras_forward(loaded)(rows)
    reference = loaded.predict_on_batch(rows)
    forward_error = max(
        float(np.abs(logits - np.asarray(reference["policy"], np.float32)).max()),
        float(np.abs(values - np.asarray(reference["value"], np.float32).reshape(-1)).max()))
    played = api.play_game(f"mcts:{final}@4", "random", size=BOARD, komi=7.0, max_moves=20,
                           seed=1)
    return {
        "backend": keras.backend.backend(),
        "model": model,
        "train_loss": train_loss,
        "selfplay_games": state.games_total,
        "policy_shape": list(policy.shape),
        "policy_finite": bool(np.all(np.isfinite(policy))),
        "moves": len(played.moves),
        "forward_rows": [len(logits), len(values)],
        "forward_error": forward_error,
        "finite_loss": math.isfinite(train_loss),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], Path(sys.argv[2]))))
