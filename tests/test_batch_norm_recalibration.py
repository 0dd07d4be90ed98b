"""Precise batch-norm statistics: known batches in, their average statistics out."""

from __future__ import annotations

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from harness.nets.layers import FusedBatchNormalization  # noqa: E402
from harness.train.batch_norm import batch_norm_layers, recalibrate_batch_norm  # noqa: E402


def _board_model(norm):
    x = keras.Input((3, 3, 2))
    return keras.Model(x, norm(x))


@pytest.mark.parametrize("norm", [keras.layers.BatchNormalization, FusedBatchNormalization])
def test_moving_statistics_become_the_mean_of_the_batches_statistics(norm):
    model = _board_model(norm())
    rng = np.random.default_rng(0)
    # channel 0 centred on 5 with spread 2, channel 1 on -1 with spread 0.5
    batches = [np.stack([rng.normal(5, 2, (4, 3, 3)), rng.normal(-1, 0.5, (4, 3, 3))],
                        axis=-1).astype("float32") for _ in range(3)]
    (layer,) = batch_norm_layers(model)
    assert recalibrate_batch_norm(model, batches) == 3
    means = np.mean([b.mean(axis=(0, 1, 2)) for b in batches], axis=0)
    variances = np.mean([b.var(axis=(0, 1, 2)) for b in batches], axis=0)  # biased
    np.testing.assert_allclose(np.asarray(layer.moving_mean), means, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(layer.moving_variance), variances, rtol=1e-4)
    assert layer.momentum == pytest.approx(0.99)  # restored


def test_a_lagging_net_scores_in_inference_as_it_trains_after_recalibration():
    x = keras.Input((3, 3, 2))
    h = keras.layers.Conv2D(4, 3, padding="same")(x)
    h = FusedBatchNormalization()(h)
    h = keras.layers.Conv2D(4, 1)(keras.layers.ReLU()(h))
    model = keras.Model(x, keras.layers.BatchNormalization()(h))
    batch = np.random.default_rng(1).normal(3, 1, (64, 3, 3, 2)).astype("float32")
    trained_mode = np.asarray(model(batch, training=False))
    assert len(batch_norm_layers(model)) == 2
    # fresh moving statistics (mean 0, variance 1) are far from the batch's
    lagging_error = np.abs(trained_mode - np.asarray(model(batch, training=True))).mean()
    recalibrate_batch_norm(model, [batch])
    error = np.abs(np.asarray(model(batch, training=False))
                   - np.asarray(model(batch, training=True))).mean()
    assert error < 1e-3 < lagging_error


def test_a_run_with_recalibrate_bn_checkpoints_the_recalibrated_statistics(tmp_path):
    from test_train_loop import PLANES, SIZE, tiny_split

    from harness.train.batch_norm import recalibrate_from_source
    from harness.train.checkpoints import load_checkpoint
    from harness.train.config import TrainConfig
    from harness.train.trainer import TrainingPlan, train

    def model_with_batch_norm():
        keras.utils.set_random_seed(1)
        inp = keras.Input((SIZE, SIZE, PLANES))
        h = keras.layers.Conv2D(4, 3, padding="same")(inp)
        h = keras.layers.Flatten()(keras.layers.ReLU()(FusedBatchNormalization()(h)))
        return keras.Model(inp, {
            "policy": keras.layers.Dense(SIZE * SIZE + 1, name="policy")(h),
            "value": keras.layers.Dense(1, activation="tanh", name="value")(h)})

    def saved_and_recalibrated_means(run: str, batches: int):
        config = TrainConfig(model="tiny", data="memory", run=run, runs_dir=str(tmp_path),
                             epochs=1, epoch_samples=64, batch_size=16, lr=0.05,
                             tensorboard=False, recalibrate_bn=batches)
        train(TrainingPlan(config, tiny_split(), tiny_split(48, seed=1), model_with_batch_norm,
                           load_checkpoint), progress=False, log=lambda s: None)
        model = load_checkpoint(tmp_path / run / "best.keras")
        saved = np.asarray(batch_norm_layers(model)[0].moving_mean)
        recalibrate_from_source(model, tiny_split(), 3, 16)
        return saved, np.asarray(batch_norm_layers(model)[0].moving_mean)

    saved, again = saved_and_recalibrated_means("precise", 3)
    np.testing.assert_allclose(saved, again, rtol=1e-5, atol=1e-6)
    lagging, precise = saved_and_recalibrated_means("plain", 0)
    assert not np.allclose(lagging, precise, rtol=1e-2)
