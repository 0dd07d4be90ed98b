"""Regularised continuation: the KL anchor, the supervised mix and the value warm-up,
each checked on what it does to the loss or the weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.config_io import ConfigError, from_mapping
from harness.files import read_json
from harness.rl.anchor import anchor_beta, anchored_policy, policy_kl, softmax
from harness.rl.config import RLConfig
from harness.rl.mixing import concat_batches, mixed_rows


def compile_for_rl(model, lr: float) -> None:
    import keras

    model.compile(optimizer=keras.optimizers.Adam(lr),
                  loss={"policy": keras.losses.CategoricalCrossentropy(from_logits=True),
                        "value": keras.losses.MeanSquaredError()})


def tiny_run(tmp_path, name: str, generations: int, **tables) -> RLConfig:
    """A 5x5 run of a few 3-game generations, with ``tables`` over the defaults."""
    values = {
        "run": name, "runs_dir": str(tmp_path), "board_size": 5, "komi": 2.5,
        "encoder": "agz17", "model": "a0.tiny", "generations": generations, "seed": 1,
        "mcts": {"playouts": 4, "temperature_moves": 4},
        "evaluator": {"batch_size": 8}, "selfplay": {"games": 3, "parallel": 3},
        "train": {"steps": 2, "batch_size": 8},
    }
    for table, settings in tables.items():
        values[table] = {**values.get(table, {}), **settings}
    return from_mapping(RLConfig, values, "test")


def cross_entropy(target, logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -(target * log_p).sum(axis=-1)


def test_the_anchored_target_adds_beta_times_the_cross_entropy_to_the_anchor():
    rng = np.random.default_rng(0)
    target = softmax(rng.normal(size=(5, 10)))
    anchor_logits = rng.normal(size=(5, 10))
    logits = rng.normal(size=(5, 10))
    mixed, weight = anchored_policy(target, np.ones(5, np.float32), anchor_logits, 0.5)
    penalised = cross_entropy(target, logits) + 0.5 * cross_entropy(softmax(anchor_logits),
                                                                     logits)
    assert np.allclose(weight * cross_entropy(mixed, logits), penalised, rtol=1e-5)
    assert np.allclose(mixed.sum(axis=1), 1.0)
    same, ones = anchored_policy(target, np.ones(5, np.float32), anchor_logits, 0.0)
    assert same is target and np.all(ones == 1)


def test_the_penalty_is_the_kl_divergence_up_to_the_anchors_entropy():
    q = np.log(np.array([[0.5, 0.5]]))
    p = np.log(np.array([[0.9, 0.1]]))
    expected = 0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(0.5 / 0.1)
    assert policy_kl(q, p)[0] == pytest.approx(expected)
    assert policy_kl(p, p)[0] == pytest.approx(0.0, abs=1e-12)
    entropy = math.log(2)
    assert cross_entropy(softmax(q), p)[0] == pytest.approx(expected + entropy)


def test_the_coefficient_decays_once_a_generation():
    assert anchor_beta(1.0, 0.5, 1) == 1.0
    assert anchor_beta(1.0, 0.5, 3) == 0.25
    assert anchor_beta(0.0, 0.5, 1) == 0.0


def test_the_options_refuse_half_settings():
    base = {"run": "x"}
    for train, word in (({"anchor_kl": 1.0}, "anchor"), ({"mix_share": 0.25}, "mix_dataset"),
                        ({"mix_share": 1.0, "mix_dataset": "d.h5"}, "mix_share"),
                        ({"anchor_kl_decay": 0.0, "anchor": "start"}, "decay")):
        with pytest.raises(ConfigError, match=word):
            from_mapping(RLConfig, {**base, "train": train}, "t.toml")
    assert mixed_rows(64, 0.25) == 16 and mixed_rows(64, 0.0) == 0


def test_a_head_the_dataset_lacks_gets_zero_weight_in_the_mixed_rows():
    selfplay = (np.ones((2, 3, 3, 1)), {"policy": np.full((2, 10), 0.1),
                                        "value": np.array([1.0, -1.0]),
                                        "ownership": np.ones((2, 9))},
                {"policy": np.ones(2), "value": np.ones(2), "ownership": np.ones(2)})
    supervised = (np.zeros((1, 3, 3, 1)), {"policy": np.eye(10)[[4]],
                                           "value": np.array([[-1.0]])},
                  {"policy": np.ones(1), "value": np.zeros(1)})
    x, targets, weights = concat_batches(selfplay, supervised)
    assert x.shape == (3, 3, 3, 1)
    assert targets["value"].tolist() == [1.0, -1.0, -1.0]
    assert weights["value"].tolist() == [1.0, 1.0, 0.0]  # the game's result was unknown
    assert targets["ownership"].shape == (3, 9) and weights["ownership"].tolist() == [1, 1, 0]
    assert int(np.argmax(targets["policy"][2])) == 4


def test_the_anchor_holds_a_network_near_its_start_while_it_learns():
    """The same 60 steps toward a fixed move, with and without the penalty: the
    anchored network ends closer to its start in KL."""
    import keras

    from harness.nets import build_model

    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, size=(32, 5, 5, 17)).astype(np.float32)
    target = np.zeros((32, 26), np.float32)
    target[:, 12] = 1.0
    kl = {}
    for beta in (0.0, 4.0):
        keras.utils.set_random_seed(3)
        model = build_model("a0.tiny", 5, 17, seed=3)
        compile_for_rl(model, lr=0.01)
        start = np.asarray(model.predict_on_batch(x)["policy"])
        for _ in range(60):
            policy, weight = anchored_policy(target, np.ones(32, np.float32), start, beta)
            model.train_on_batch(x, {"policy": policy, "value": np.zeros((32, 1))},
                                 sample_weight={"policy": weight, "value": np.zeros(32)})
        kl[beta] = float(policy_kl(start, np.asarray(model.predict_on_batch(x)["policy"]))
                         .mean())
    assert kl[4.0] < 0.5 * kl[0.0]


def test_value_warmup_trains_the_value_head_alone_and_restores_the_flags():
    from harness.nets import build_model
    from harness.rl.warmup import value_head_only, value_only_layers

    model = build_model("a0.tiny", 5, 17, seed=0)
    compile_for_rl(model, lr=0.01)
    own = {id(layer) for layer in value_only_layers(model)}
    assert "value" in {layer.name for layer in value_only_layers(model)}
    assert model.get_layer("policy").name not in {layer.name for layer in
                                                  value_only_layers(model)}
    before = {layer.name: [np.array(w) for w in layer.get_weights()] for layer in model.layers}
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(16, 5, 5, 17)).astype(np.float32)
    targets = {"policy": np.eye(26, dtype=np.float32)[rng.integers(0, 26, 16)],
               "value": rng.choice([-1.0, 1.0], size=(16, 1)).astype(np.float32)}
    with value_head_only(model):
        for _ in range(5):
            model.train_on_batch(x, targets)
    for layer in model.layers:
        if not layer.get_weights():
            continue
        changed = any(not np.array_equal(a, b)
                      for a, b in zip(before[layer.name], layer.get_weights(), strict=True))
        trainable_changed = any(
            not np.array_equal(w.numpy(), before[layer.name][i])
            for i, w in enumerate(layer.weights) if w.trainable)
        if id(layer) in own:
            assert changed, layer.name
        else:
            assert not trainable_changed, layer.name
    assert all(layer.trainable for layer in model.layers)
    model.train_on_batch(x, targets)  # after the block the trunk trains again
    trunk = [layer for layer in model.layers if layer.get_weights() and id(layer) not in own]
    assert any(not np.array_equal(before[layer.name][0], layer.get_weights()[0])
               for layer in trunk)


def test_a_run_with_every_regulariser_warms_the_value_head_then_anchors_and_mixes(
        tmp_path, dataset_5x5):
    from harness.nets import load_model
    from harness.rl.run import MAIN, RLRun
    from harness.rl.warmup import value_only_layers

    config = tiny_run(
        tmp_path, "reg", 2,
        train={"steps": 3, "anchor": "start", "anchor_kl": 1.0, "anchor_kl_decay": 0.5,
               "mix_dataset": str(dataset_5x5), "mix_share": 0.5, "value_warmup_games": 4},
        window={"initial": 3, "maximum": 10},
        monitor={"dataset": str(dataset_5x5), "positions": 64})
    rl = RLRun(config, log=lambda line: None)
    state = rl.run()
    models = tmp_path / "reg" / "models"
    start, first = load_model(models / "gen-0000.keras"), load_model(models / "gen-0001.keras")
    value_layers = {layer.name for layer in value_only_layers(first)}
    for layer in first.layers:
        old = start.get_layer(layer.name)
        same = all(np.array_equal(a, b) for a, b in
                   zip(old.get_weights(), layer.get_weights(), strict=True))
        if layer.name in value_layers and layer.get_weights():
            assert not same, layer.name  # the value head learnt in generation 1 ...
        elif layer.get_weights():
            assert same, layer.name  # ... and nothing else did
    history = [state.last_train[MAIN]]
    assert history[0]["anchor_beta"] == 0.5 and "value_warmup" not in history[0]
    assert all(layer.trainable for layer in load_model(models / "gen-0002.keras").layers)
    # Held out: the policy did not move in the warm-up generation, then it did.
    first_row = read_json(tmp_path / "reg" / "stats" / "gen-0001.json")
    second_row = read_json(tmp_path / "reg" / "stats" / "gen-0002.json")
    assert first_row["heldout_kl_start"] == pytest.approx(0.0, abs=1e-6)
    assert first_row["heldout_top1"] == first_row["heldout_top1_start"]  # generation 0's
    assert second_row["heldout_kl_start"] > 1e-4
    for row in (first_row, second_row):
        assert 0.0 <= row["heldout_top1"] <= 1.0 and 0.0 <= row["heldout_value_mse"] <= 4.0
        assert sum(count for *_, count in row["heldout_calibration"]) <= 64


def test_a_mix_dataset_of_another_board_is_refused_with_one_line(tmp_path, dataset_5x5):
    from harness.rl.mixing import SupervisedMix

    with pytest.raises(ConfigError, match="5x5 positions, the run plays 9x9"):
        SupervisedMix(dataset_5x5, 4, encoder="agz17", board_size=9, seed=0)
    with pytest.raises(ConfigError, match="mix_dataset"):
        SupervisedMix(tmp_path / "missing.h5", 4, encoder="agz17", board_size=5, seed=0)


def test_gating_against_the_start_plays_generation_0_and_publishes_only_a_promoted_net(
        tmp_path):
    from harness.rl.loop import final_network
    from harness.rl.run import RLRun

    config = tiny_run(tmp_path, "gate", 2, gating={
        "enabled": True, "games": 2, "gate_playouts": 2, "parallel": 2, "threshold": 1.0,
        "against": "start"})
    lines: list[str] = []
    state = RLRun(config, log=lines.append).run()
    gates = [line for line in lines if "scored" in line]
    assert len(gates) == 2 and all("against gen-0000:" in line for line in gates)
    promoted = state.nets["main"].promotions
    run = tmp_path / "gate"
    expected = ("models/gen-0002.keras" if promoted[1] else
                "models/gen-0001.keras" if promoted[0] else "models/gen-0000.keras")
    assert state.best == expected and final_network(run) == run / expected
    with pytest.raises(ConfigError, match="against"):
        from_mapping(RLConfig, {"run": "x", "gating": {"against": "last"}}, "t.toml")


def test_gating_every_second_generation_gates_only_the_even_ones(tmp_path):
    from harness.rl.run import RLRun

    config = tiny_run(tmp_path, "every", 3, gating={
        "enabled": True, "games": 2, "gate_playouts": 2, "parallel": 2, "threshold": 0.0,
        "against": "start", "every": 2})
    lines: list[str] = []
    state = RLRun(config, log=lines.append).run()
    assert [line.split(":")[0] for line in lines if "scored" in line] == ["generation 2"]
    # Threshold 0 promotes whatever is gated; the odd generations were not gated.
    assert state.nets["main"].promotions == [False, True, False]
    assert state.best == "models/gen-0002.keras"
    with pytest.raises(ConfigError, match="every"):
        from_mapping(RLConfig, {"run": "x", "gating": {"every": 0}}, "t.toml")


def test_the_report_plots_held_out_figures_only_where_a_run_has_them(tmp_path):
    from harness.files import atomic_json
    from harness.rl.strength import plot_held_out

    run = tmp_path / "run"
    for g in (1, 2):
        atomic_json(run / "stats" / f"gen-{g:04d}.json", {
            "generation": g, "heldout_kl_start": 0.1 * g, "heldout_top1": 0.4,
            "heldout_value_mse": 0.8, "heldout_calibration": [[0.05, 0.02, 0.1, 30]]})
    bare = tmp_path / "bare"
    atomic_json(bare / "stats" / "gen-0001.json", {"generation": 1})
    assert plot_held_out([bare], tmp_path / "none.png") is None
    assert plot_held_out([run, bare], tmp_path / "heldout.png").stat().st_size > 10_000


def test_openings_are_the_first_moves_of_the_datasets_games(dataset_5x5):
    from harness.data.dataset import open_dataset
    from harness.rl.openings import DatasetOpenings

    openings = DatasetOpenings(dataset_5x5, 1.0, 3, 3, 5)
    with open_dataset(dataset_5x5) as data:
        train = data.split_games("train")
        firsts = data.games["first"][train]
        starts = {tuple(data.file["positions/move"][f:f + 3].tolist()) for f in firsts}
    rng = np.random.default_rng(0)
    drawn = [tuple(openings(rng)) for _ in range(20)]
    assert all(len(moves) == 3 and moves in starts for moves in drawn)
    assert len(set(drawn)) > 1
    never = DatasetOpenings(dataset_5x5, 0.0, 3, 3, 5)
    assert never(rng) == []
    with pytest.raises(ConfigError, match="the run plays 9x9"):
        DatasetOpenings(dataset_5x5, 1.0, 3, 3, 9)


def test_games_started_from_the_dataset_keep_the_opening_as_untrained_history(
        tmp_path, dataset_5x5):
    from harness.rl.run import RLRun

    config = tiny_run(tmp_path, "open", 1, train={"steps": 1}, selfplay={
        "start_dataset": str(dataset_5x5), "start_probability": 1.0, "start_min_moves": 4,
        "start_max_moves": 4})
    rl = RLRun(config, log=lambda line: None)
    rl.run()
    positions, games = rl.buffer.read_generation(1, ("target", "move_number"))
    for first in games["first"]:
        assert positions["target"][first:first + 4].tolist() == [0, 0, 0, 0]
        assert positions["target"][first + 4] == 1  # the first searched move is a target


def test_the_value_weight_rises_from_its_initial_scale_over_the_ramp():
    from harness.rl.learner import value_weight_scale

    assert [value_weight_scale(0.1, 3, g) for g in (1, 2, 3, 4, 9)] == pytest.approx(
        [0.1, 0.4, 0.7, 1.0, 1.0])
    assert value_weight_scale(0.1, 0, 1) == 1.0


def test_the_suite_fills_in_its_own_dataset_where_an_rl_config_says_suite(tmp_path):
    from harness.rl.loop import with_suite_dataset

    values = {"train": {"mix_dataset": "suite", "mix_share": 0.25},
              "selfplay": {"start_dataset": "other.h5"}, "monitor": {"dataset": "suite"}}
    out = with_suite_dataset(values, tmp_path / "quick.h5")
    assert out["train"] == {"mix_dataset": str(tmp_path / "quick.h5"), "mix_share": 0.25}
    assert out["selfplay"]["start_dataset"] == "other.h5"
    assert out["monitor"]["dataset"] == str(tmp_path / "quick.h5")
    assert values["train"]["mix_dataset"] == "suite"  # the caller's mapping is left alone


def test_the_moving_average_plays_while_training_continues_on_the_raw_weights(tmp_path):
    from harness.nets import load_model
    from harness.rl.run import RLRun

    config = tiny_run(tmp_path, "ema", 2, train={"ema_decay": 0.5})
    rl = RLRun(config, log=lambda _: None)
    state = rl.run(generations=1)
    run = tmp_path / "ema"
    net = state.nets["main"]
    assert (net.checkpoint, net.trainer) == ("models/gen-0001.keras", "models/raw/gen-0001.keras")
    raw = load_model(run / net.trainer).get_weights()
    played = load_model(run / net.checkpoint).get_weights()
    learner = rl.learners["main"]
    # The file that plays holds exactly the learner's average (the steps'
    # arithmetic: the next test), not the raw weights training goes on from.
    assert all(np.array_equal(p, a) for p, a in zip(played, learner.average.values(), strict=True))
    assert all(np.array_equal(r, w) for r, w in zip(raw, learner.model.get_weights(),
                                                     strict=True))
    assert any(not np.allclose(p, r) for p, r in zip(played, raw, strict=True))
    assert state.best == net.checkpoint  # self-play and gating read the average

    # A resumed run reads the raw weights to train on and the average back.
    resumed = RLRun(config, log=lambda _: None)
    learner = resumed._learner(resumed.read_state(), "main")
    assert learner.checkpoint == run / net.trainer
    assert all(np.array_equal(a, p) for a, p in zip(learner.average.values(), played, strict=True))
    state = resumed.run(resume=True)
    assert state.generation == 3 and (run / "models" / "raw" / "gen-0002.keras").exists()


def test_the_moving_average_is_the_decayed_sum_of_the_steps():
    from harness.rl.learner import Learner
    from harness.rl.run import MAIN

    config = from_mapping(RLConfig, {"run": "x", "board_size": 5, "encoder": "agz17",
                                     "model": "a0.tiny", "train": {"ema_decay": 0.75}}, "t")
    learner = Learner.fresh(MAIN, config, "a0.tiny")
    w0 = learner.model.get_weights()
    w1 = [w + 1.0 for w in w0]
    learner.model.set_weights(w1)
    learner._average_step()
    w2 = [w + 3.0 for w in w0]
    learner.model.set_weights(w2)
    learner._average_step()
    expected = [0.75 * (0.75 * a + 0.25 * b) + 0.25 * c for a, b, c in zip(w0, w1, w2, strict=True)]
    assert all(np.allclose(a, e) for a, e in zip(learner.average.values(), expected, strict=True))
    with learner.averaged() as model:
        assert all(np.allclose(w, e) for w, e in zip(model.get_weights(), expected, strict=True))
    assert all(np.array_equal(w, r) for w, r in zip(learner.model.get_weights(), w2, strict=True))
    with pytest.raises(ConfigError, match="ema_decay"):
        from_mapping(RLConfig, {"run": "x", "train": {"ema_decay": 1.0}}, "t")


def test_held_out_positions_come_from_every_validation_game_not_the_first_few(dataset_5x5):
    from harness.data.dataset import PositionDataset
    from harness.data.pipeline import PipelineConfig, open_stream
    from harness.rl.monitor import held_out_positions

    config = PipelineConfig(batch_size=4, encoder="agz17", threads=1).validation()
    with PositionDataset(dataset_5x5) as data:
        games = data.split_games("val")
        first = data.games["first"][games].astype(np.int64)
        with open_stream(dataset_5x5, "val", config, spread=8) as stream:
            rows = stream.rows
            every = data.split_rows("val")
    assert len(games) == 4 and len(rows) == 8
    assert rows[0] == every[0] and rows[-1] == every[-1]  # evenly spaced, both ends
    owner = np.searchsorted(np.sort(first), rows, side="right") - 1
    assert set(owner.tolist()) == {0, 1, 2, 3}  # the first 8 rows span one game or two
    held = held_out_positions(dataset_5x5, 8, encoder="agz17", board_size=5)
    assert held.x.shape == (8, 5, 5, 17) and len(held.move) == 8


def test_every_saved_generation_is_remeasured_with_intervals_from_generation_0(
        tmp_path, dataset_5x5):
    from harness.rl.run import RLRun
    from harness.rl.strength import HELD_OUT_COLUMNS, remeasure_held_out

    RLRun(tiny_run(tmp_path, "re", 2), log=lambda _: None).run()
    out, table = remeasure_held_out([tmp_path / "re"], dataset_5x5, 16, tmp_path / "report")
    rows = [dict(zip(HELD_OUT_COLUMNS, row, strict=True)) for row in table]
    assert [r["generation"] for r in rows] == [0, 1, 2]
    assert rows[0]["heldout_kl_start"] == 0.0  # generation 0 against itself
    assert all(r["heldout_kl_start"] > 0 for r in rows[1:])  # the learner moved it
    for r in rows:
        assert r["heldout_top1_low"] <= r["heldout_top1"] <= r["heldout_top1_high"]
        assert r["heldout_value_mse_low"] <= r["heldout_value_mse"] <= r["heldout_value_mse_high"]
    assert (out / "heldout.csv").is_file() and (out / "heldout.png").is_file()
