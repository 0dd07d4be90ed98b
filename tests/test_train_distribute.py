"""Training under ``tf.distribute``: two replicas learn exactly what one device learns.

TensorFlow fixes its devices at start-up, so the check runs in a fresh
interpreter whose CPU is split into two logical devices, the way a two-GPU box
looks to ``MirroredStrategy``.
"""

from __future__ import annotations

import json
import subprocess
import sys

from test_train_targets import two_games  # noqa: F401  (a 9x9 positions file, fixture)

SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras

from harness.nets import build_model
from harness.train.distribute import make_strategy, predict_batch, replicas, train_batch

rng = np.random.default_rng(0)
x = rng.random((16, 9, 9, 17), dtype=np.float32)
targets = {"policy": rng.integers(0, 82, 16), "value": rng.choice([-1.0, 1.0], (16, 1))}
weights = {"policy": np.ones(16, np.float32), "value": np.ones(16, np.float32)}

def trained(kind):
    strategy = make_strategy(kind)
    with strategy.scope():
        model = build_model("qiqiao.tiny", 9, 17, seed=3)  # no batch norm: exact comparison
        model.compile(optimizer=keras.optimizers.SGD(0.05),
                      loss={"policy": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                            "value": keras.losses.MeanSquaredError()})
    losses = [train_batch(model, x, targets, weights)["loss"] for _ in range(3)]
    return model, losses

if sys.argv[1] == "cli":
    from harness.commands import train as command
    import argparse
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    code = command.run(parser.parse_args([
        "--model", "a0.tiny", "--data", sys.argv[2], "--runs-dir", sys.argv[3], "--epochs", "2",
        "--epoch-samples", "16", "--batch-size", "8", "--strategy", "mirrored",
        "--no-tensorboard", "--quiet"]))
    print(json.dumps({"exit": code}))
    sys.exit(0)

single, single_losses = trained("none")
mirrored, mirrored_losses = trained("mirrored")
gap = max(float(np.abs(a - b).max())
          for a, b in zip(single.get_weights(), mirrored.get_weights(), strict=True))
rows = {k: len(v) for k, v in predict_batch(mirrored, x[:6]).items()}
print(json.dumps({"replicas": replicas(mirrored), "single_replicas": replicas(single),
                  "weight_gap": gap, "single_losses": single_losses,
                  "mirrored_losses": mirrored_losses, "rows": rows}))

"""


def test_two_replicas_learn_what_one_device_learns(two_games, tmp_path):  # noqa: F811
    facts = _script("unit")
    # One MirroredStrategy per process, as in real runs: the CLI run gets its own.
    run = _script("cli", str(two_games), str(tmp_path))
    assert facts["replicas"] == 2 and facts["single_replicas"] == 1
    assert facts["weight_gap"] < 1e-4
    assert all(abs(a - b) < 1e-4 for a, b in
               zip(facts["single_losses"], facts["mirrored_losses"], strict=True))
    assert facts["single_losses"][-1] < facts["single_losses"][0]
    assert set(facts["rows"].values()) == {6}  # one output row per input row
    assert run["exit"] == 0
    metrics = (tmp_path / "a0.tiny" / "metrics.csv").read_text().splitlines()
    assert len(metrics) == 3 and metrics[-1].startswith("2,4,")  # two epochs, step 4


def _script(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")][-1]
