"""Pure pieces of supervised training: schedules, value targets, metrics, config."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from harness.config_io import load_config, read_saved_config, save_config
from harness.game.geometry import BLACK, WHITE
from harness.train.config import ConfigError, TrainConfig
from harness.train.metrics import MetricAccumulator
from harness.train.schedules import ScheduleSpec, learning_rate, learning_rate_at
from harness.train.sources import ArraySource, derive_seed, epoch_batches
from harness.train.value_targets import from_head, signed_outcome, to_head

# --- learning-rate schedules ------------------------------------------------------------


def test_constant_and_step_schedules():
    const = ScheduleSpec("constant", initial=0.1, total_steps=100)
    assert [learning_rate(const, i) for i in (0, 50, 100)] == [0.1, 0.1, 0.1]
    step = ScheduleSpec("step", initial=0.1, total_steps=100, step_every=30, step_factor=0.5)
    assert [learning_rate(step, i) for i in (0, 29, 30, 59, 60, 99)] == pytest.approx(
        [0.1, 0.1, 0.05, 0.05, 0.025, 0.0125])


def test_cosine_schedule_runs_from_initial_to_final():
    spec = ScheduleSpec("cosine", initial=1e-2, final=2e-4, total_steps=1000)
    assert learning_rate(spec, 0) == pytest.approx(1e-2)
    assert learning_rate(spec, 500) == pytest.approx((1e-2 + 2e-4) / 2)
    assert learning_rate(spec, 1000) == pytest.approx(2e-4)
    rates = [learning_rate(spec, i) for i in range(0, 1001, 10)]
    assert all(a >= b for a, b in itertools.pairwise(rates))


def test_cyclical_schedule_matches_mattisson_formula():
    """gamma(i) = r(i) + r(i) (1 - i/T) sin^2(pi i / f), r the cosine envelope (Table 1 rates)."""
    g0, gt, t, f = 1e-2, 2e-4, 1200, 100
    spec = ScheduleSpec("cyclical", initial=g0, final=gt, total_steps=t, period=f)
    envelope = ScheduleSpec("cosine", initial=g0, final=gt, total_steps=t)
    # Troughs at multiples of f touch the envelope; crests half-way are 1 + (1 - i/T) above it.
    for i in (0, 100, 600, 1200):
        assert learning_rate(spec, i) == pytest.approx(learning_rate(envelope, i))
    for i in (50, 650):
        assert learning_rate(spec, i) == pytest.approx(learning_rate(envelope, i) * (2 - i / t))
    assert learning_rate(spec, 0) == pytest.approx(g0)
    assert learning_rate(spec, t) == pytest.approx(gt)
    # Direct formula at an arbitrary step.
    i = 437
    r = gt + (g0 - gt) / 2 * (1 + math.cos(math.pi * i / t))
    want = r + r * (1 - i / t) * math.sin(math.pi * i / f) ** 2
    assert learning_rate(spec, i) == pytest.approx(want)


def test_warmup_ramps_linearly_then_follows_the_schedule():
    spec = ScheduleSpec("cosine", initial=0.01, final=0.0, total_steps=1000, warmup=100)
    assert learning_rate(spec, 0) == pytest.approx(0.01 * 1 / 100 * 1.0, rel=1e-3)
    assert learning_rate(spec, 49) == pytest.approx(0.5 * 0.005 * (1 + math.cos(math.pi * 0.049)))
    plain = ScheduleSpec("cosine", initial=0.01, final=0.0, total_steps=1000)
    assert learning_rate(spec, 400) == learning_rate(plain, 400)


def test_a_budgets_warmup_is_its_stated_fraction_whatever_the_epoch_size():
    # The claim suites' setting: 6 slices of a wall budget, nominal epochs of
    # 8,192 samples. The warm-up must end at 2% of the budget, not a third.
    config = TrainConfig(model="a0.small", data="d.h5", lr=0.002, lr_final=0.0001,
                         lr_schedule="cosine", lr_warmup=0.02, epochs=6, epoch_samples=8192,
                         batch_size=128, budget=1200)
    spec = config.pace.schedule
    assert learning_rate_at(spec, 0.01) == pytest.approx(0.001, rel=0.02)
    cosine = 0.0001 + 0.5 * 0.0019 * (1 + math.cos(math.pi / 6))
    assert learning_rate_at(spec, 1 / 6) == pytest.approx(cosine)
    assert learning_rate_at(spec, 1.0) == pytest.approx(0.0001)


@pytest.mark.parametrize("warmup", [0, 90])
@pytest.mark.parametrize("kind", ["constant", "step", "cosine", "cyclical"])
def test_keras_schedule_agrees_with_python(kind, warmup):
    from harness.train.schedules import keras_schedule

    spec = ScheduleSpec(kind, initial=0.02, final=1e-3, total_steps=500, step_every=120,
                        step_factor=0.3, period=70, warmup=warmup)
    sched = keras_schedule(spec)
    for i in (0, 1, 35, 119, 120, 250, 499, 500, 800):
        assert float(sched(i)) == pytest.approx(learning_rate(spec, i), rel=1e-5)
    again = type(sched).from_config(sched.get_config())
    assert float(again(250)) == pytest.approx(float(sched(250)))


# --- value target conventions -----------------------------------------------------------


def test_signed_outcome_from_the_side_to_move():
    to_play = np.array([BLACK, WHITE, BLACK, WHITE])
    assert signed_outcome(BLACK, to_play).tolist() == [1, -1, 1, -1]
    assert signed_outcome(WHITE, to_play).tolist() == [-1, 1, -1, 1]
    assert signed_outcome(0, to_play).tolist() == [0, 0, 0, 0]


def test_head_conventions_round_trip():
    signed = np.array([1.0, -1.0, 0.0])
    assert to_head(signed, "mse").tolist() == [1.0, -1.0, 0.0]
    assert to_head(signed, "bce").tolist() == [1.0, 0.0, 0.5]
    for loss in ("mse", "bce"):
        assert from_head(to_head(signed, loss), loss).tolist() == signed.tolist()


# --- metrics ----------------------------------------------------------------------------


def test_policy_metrics_on_known_logits():
    logits = np.array([
        [5.0, 4, 3, 2, 1, 0, -1],  # target 0: top-1 and top-5
        [5.0, 4, 3, 2, 1, 0, -1],  # target 4: top-5 only
        [5.0, 4, 3, 2, 1, 0, -1],  # target 6: neither
        [0.0, 0, 0, 0, 0, 0, 0],  # uniform, target 3: a tie counts as a hit; CE log 7
    ])
    targets = np.array([0, 4, 6, 3])
    acc = MetricAccumulator("mse", {"policy": 1.0, "value": 1.0})
    acc.add({"policy": logits, "value": np.zeros((4, 1))},
            {"policy": targets, "value": np.zeros((4, 1))})
    m = acc.result()
    assert m["policy_top1"] == pytest.approx(2 / 4)
    assert m["policy_top5"] == pytest.approx(3 / 4)
    lse = math.log(sum(math.exp(v) for v in [5, 4, 3, 2, 1, 0, -1]))
    expected = [lse - 5, lse - 1, lse + 1, math.log(7)]
    assert m["policy_loss"] == pytest.approx(sum(expected) / 4)


def test_value_mse_is_reported_in_signed_convention_for_both_heads():
    signed_target = np.array([1.0, -1.0, 1.0, -1.0])
    signed_pred = np.array([0.5, -0.5, -1.0, 0.0])
    want = float(np.mean((signed_pred - signed_target) ** 2))
    for loss in ("mse", "bce"):
        acc = MetricAccumulator(loss, {"policy": 1.0, "value": 1.0})
        acc.add({"policy": np.zeros((4, 3)), "value": to_head(signed_pred, loss)[:, None]},
                {"policy": np.zeros(4, int), "value": to_head(signed_target, loss)[:, None]})
        assert acc.result()["value_mse"] == pytest.approx(want)
    acc = MetricAccumulator("bce", {"policy": 0.0, "value": 1.0})
    p = to_head(signed_pred, "bce")
    t = to_head(signed_target, "bce")
    acc.add({"policy": np.zeros((4, 3)), "value": p[:, None]},
            {"policy": np.zeros(4, int), "value": t[:, None]})
    bce = -np.mean(t * np.log(np.clip(p, 1e-7, 1)) + (1 - t) * np.log(np.clip(1 - p, 1e-7, 1)))
    assert acc.result()["value_loss"] == pytest.approx(bce, rel=1e-5)
    assert acc.result()["loss"] == pytest.approx(bce, rel=1e-5)  # policy weight 0


def test_value_weights_mask_unknown_results():
    acc = MetricAccumulator("mse", {"policy": 1.0, "value": 1.0})
    acc.add({"policy": np.zeros((2, 3)), "value": np.array([[1.0], [1.0]])},
            {"policy": np.zeros(2, int), "value": np.array([[1.0], [-1.0]])},
            {"policy": np.ones(2), "value": np.array([1.0, 0.0])})
    assert acc.result()["value_mse"] == 0.0


# --- data stream ------------------------------------------------------------------------


def test_epoch_stream_is_a_function_of_seed_and_epoch():
    src = ArraySource(np.arange(10)[:, None], {"policy": np.arange(10)})
    first = [b[0].ravel().tolist() for b in epoch_batches(src, 4, 5, seed=3, epoch=2)]
    again = [b[0].ravel().tolist() for b in epoch_batches(src, 4, 5, seed=3, epoch=2)]
    other = [b[0].ravel().tolist() for b in epoch_batches(src, 4, 5, seed=3, epoch=3)]
    assert first == again and first != other
    assert len(first) == 5  # epochs are sample counts: passes chain past the end of the data
    tail = [b[0].ravel().tolist() for b in epoch_batches(src, 4, 5, seed=3, epoch=2, start=2)]
    assert tail == first[2:]
    assert derive_seed(1, 2) != derive_seed(2, 1)


# --- config -----------------------------------------------------------------------------


def test_config_reads_toml_with_flag_overrides(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('[train]\nmodel = "a0.tiny"\ndata = "x.h5"\nepochs = 3\n'
                    'lr_schedule = "cyclical"\n[train.loss_weights]\nvalue = 0.25\n')
    config = load_config(TrainConfig, path, {"epochs": 5, "batch_size": None}, table="train")
    assert (config.model, config.epochs, config.batch_size) == ("a0.tiny", 5, 128)
    assert config.loss_weights == {"value": 0.25}
    assert config.steps_per_epoch == math.ceil(1_000_000 / 128)


@pytest.mark.parametrize(("text", "needle"), [
    ('model = "a0.tiny"\ndata = "x"\nlearning_rate = 0.1\n', "unknown key 'learning_rate'"),
    ('model = "a0.tiny"\ndata = "x"\noptimizer = "rmsprop"\n', "unknown optimizer 'rmsprop'"),
    ('model = "a0.tiny"\ndata = "x"\nepochs = "two"\n', "epochs must be int, got 'two'"),
    ('model = "a0.tiny"\ndata = "x"\nlr_schedule = "linear"\n', "unknown lr_schedule"),
    ('model = "a0.tiny"\ndata = "x"\n[loss_weights]\npolcy = 1\n', "unknown head 'polcy'"),
    ('data = "x"\n', "no model given"),
    ('model = "a0.tiny"\ndata = "x"\nbatch_size = 0\n', "batch_size must be at least 1"),
])
def test_bad_config_values_are_one_line_errors(tmp_path, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(TrainConfig, path, table="train")
    message = str(err.value)
    assert needle in message and "\n" not in message


def test_config_round_trips_through_json(tmp_path):
    config = TrainConfig(model="a0.tiny", data="x.h5", heads=("ownership",),
                         loss_weights={"value": 0.5})
    save_config(config, tmp_path / "config.json")
    assert read_saved_config(TrainConfig, tmp_path / "config.json") == config
