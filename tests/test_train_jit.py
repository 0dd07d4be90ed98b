"""The training step under XLA (``jit_compile = "on"``): the same update as
without it, to float rounding, and the choice survives a resume."""

from __future__ import annotations

import numpy as np
import pytest
from test_train_config import assert_stops, run_train
from test_train_targets import two_games  # noqa: F401  (a 9x9 positions file, fixture)

from harness.train.config import ConfigError, OptimizerSettings


def _three_steps(jit: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(weights before, weights after) three steps on one fixed batch. SGD, not
    Adam: Adam's update of a weight whose gradient is rounding noise is a full
    step of either sign, so Adam would magnify the kernels' rounding."""
    from harness.nets import build_model
    from harness.train.trainer import compile_model

    model = build_model("a0.tiny", 9, 17, seed=1)
    compile_model(model, OptimizerSettings(optimizer="sgd", jit_compile=jit), 0.05, "mse",
                  soft_policy=False)
    before = model.get_weights()
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (16, 9, 9, 17)).astype(np.float32)
    targets = {"policy": rng.integers(0, 82, 16), "value": rng.choice([-1.0, 1.0], 16)}
    for _ in range(3):
        model.train_on_batch(x, targets)
    assert model.jit_compile is (jit == "on")
    return before, model.get_weights()


def test_the_xla_step_moves_the_weights_as_the_plain_step_does():
    start, plain = _three_steps("off")
    same_start, xla = _three_steps("on")
    for a, b in zip(start, same_start, strict=True):
        np.testing.assert_array_equal(a, b)
    moved = max(float(np.abs(a - b).max()) for a, b in zip(start, plain, strict=True))
    assert moved > 1e-3  # the steps did train
    for a, b in zip(plain, xla, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_unknown_jit_compile_is_refused(tmp_path, capsys):
    with pytest.raises(ConfigError, match="unknown jit_compile 'xla'"):
        OptimizerSettings(jit_compile="xla")
    config = tmp_path / "run.toml"
    config.write_text('model = "a0.tiny"\ndata = "x.h5"\njit_compile = "maybe"\n')
    assert_stops(["--config", str(config)], capsys, tmp_path / "models",
                 "unknown jit_compile 'maybe'")


def test_a_resumed_run_takes_the_setting_again(two_games, tmp_path):  # noqa: F811
    from harness.train.checkpoints import load_checkpoint
    from harness.train.trainer import apply_jit_compile

    code, _ = run_train(["--model", "a0.tiny", "--data", str(two_games), "--epochs", "1",
                         "--epoch-samples", "16", "--batch-size", "8", "--jit-compile", "on",
                         "--runs-dir", str(tmp_path), "--no-tensorboard", "--quiet"], None)
    assert code == 0
    model = load_checkpoint(tmp_path / "a0.tiny" / "best.keras", compile=True)
    assert model.jit_compile is True  # the file remembers it
    apply_jit_compile(model, OptimizerSettings(jit_compile="auto"))
    assert model.jit_compile is True  # auto keeps what the run chose
    apply_jit_compile(model, OptimizerSettings(jit_compile="off"))
    assert model.jit_compile is False
