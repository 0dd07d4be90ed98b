"""Policy-gradient self-play (``algorithm = "policy-gradient"``): REINFORCE's
update, the pool of past selves, the games, and a run that resumes."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import harness
from harness.config_io import from_mapping
from harness.game.geometry import BLACK, WHITE
from harness.rl.config import PolicyGradientConfig, RLConfig
from harness.rl.pg_games import StepGames, play_step_games, sample_rows
from harness.rl.pg_pool import draw_opponents, grown_pool, pool_weights

SIZE = 5
MOVES = SIZE * SIZE + 1


# --- the pool -----------------------------------------------------------------------

def test_the_pool_grows_every_n_steps_and_keeps_the_start_when_full():
    pg = PolicyGradientConfig(pool_every=2, pool_size=3)
    pool = ["gen-0"]
    for step in range(1, 9):
        pool = grown_pool(pool, step, f"gen-{step}", pg)
    assert pool == ["gen-0", "gen-6", "gen-8"]  # 2 and 4 left as 6 and 8 came
    unlimited = PolicyGradientConfig(pool_every=3)
    pool = ["gen-0"]
    for step in range(1, 10):
        pool = grown_pool(pool, step, f"gen-{step}", unlimited)
    assert pool == ["gen-0", "gen-3", "gen-6", "gen-9"]


def test_opponents_are_drawn_with_the_configured_weights():
    pool = [f"gen-{i}" for i in range(4)]
    rng = np.random.default_rng(0)
    uniform = PolicyGradientConfig(opponents=4000)
    counts = {m: 0 for m in pool}
    for member in draw_opponents(pool, uniform, rng):
        counts[member] += 1
    assert all(abs(c / 4000 - 0.25) < 0.03 for c in counts.values())
    latest = PolicyGradientConfig(opponents=50, pool_sampling="latest")
    assert set(draw_opponents(pool, latest, rng)) == {"gen-3"}
    recent = PolicyGradientConfig(pool_sampling="recent", pool_decay=0.5)
    np.testing.assert_allclose(pool_weights(4, recent), np.array([1, 2, 4, 8]) / 15)
    drawn = draw_opponents(pool, dataclasses.replace(recent, opponents=6000), rng)
    assert abs(drawn.count("gen-3") / 6000 - 8 / 15) < 0.03


def test_the_entropy_bonus_rises_under_the_floor_and_halves_back_above_it():
    from harness.rl.pg_run import next_entropy_weight

    pg = PolicyGradientConfig(entropy_bonus=0.01, entropy_floor=1.5, entropy_boost=0.02)
    weight = 0.01
    for _ in range(3):  # collapsing: 1.2 nats, under the floor
        weight = next_entropy_weight(weight, 1.2, pg)
    assert weight == pytest.approx(0.07)
    weight = next_entropy_weight(weight, 2.0, pg)  # recovered
    assert weight == pytest.approx(0.04)
    assert next_entropy_weight(0.0, 0.1, PolicyGradientConfig()) == 0.0  # no floor: no bonus


def test_a_step_with_more_positions_than_one_pass_holds_makes_more_updates():
    from harness.rl.pg_learner import update_count

    assert update_count(5000, PolicyGradientConfig(updates=2)) == 2
    assert update_count(5000, PolicyGradientConfig(updates=2, max_positions=1000)) == 5
    assert update_count(5001, PolicyGradientConfig(updates=2, max_positions=1000)) == 6
    assert update_count(500, PolicyGradientConfig(updates=2, max_positions=1000)) == 2


# --- the games -----------------------------------------------------------------------

class UniformPolicy:
    """A legitimate evaluator without a network: every candidate alike, value 0."""

    def __init__(self):
        self.positions = 0

    def evaluate(self, stones, to_play, candidates):
        self.positions += len(stones)
        policy = candidates.astype(np.float32)
        return policy / policy.sum(axis=1, keepdims=True), np.zeros(len(policy), np.float32)


def test_every_game_ends_and_only_the_learners_moves_are_recorded():
    learner, first, second = UniformPolicy(), UniformPolicy(), UniformPolicy()
    games = play_step_games(learner, [first, second], 12, size=SIZE, komi=0.5, rules="superko",
                            history=2, rng=np.random.default_rng(1), opening_moves=2,
                            parallel=5)
    assert len(games.margin) == 12
    np.testing.assert_array_equal(games.learner_color[:4], [BLACK, WHITE, BLACK, WHITE])
    np.testing.assert_array_equal(games.opponent[:6], [0, 0, 1, 1, 0, 0])
    for g in range(12):
        played = games.moves[g][games.moves[g] >= 0]
        assert len(played) == games.length[g] < 2 * SIZE * SIZE
        assert list(played[-2:]) == [MOVES - 1, MOVES - 1]  # two passes end it
    # Learner moves: its own colour to move, the move one of its candidates,
    # never before the random opening is over.
    assert np.all(games.to_play == games.learner_color[games.game])
    assert np.all(games.candidates[np.arange(len(games.move)), games.move])
    assert learner.positions == len(games.move)
    assert games.evaluations == learner.positions + first.positions + second.positions
    # Outcomes for the side that moved: +1 where the learner's colour won.
    won = (games.winner == games.learner_color)[games.game]
    np.testing.assert_array_equal(games.outcome, np.where(won, 1.0, -1.0))


def test_a_step_replays_the_same_games_from_the_same_seed():
    def play(seed):
        return play_step_games(UniformPolicy(), [UniformPolicy()], 6, size=SIZE, komi=0.5,
                               rules="superko", history=1, rng=np.random.default_rng(seed))

    np.testing.assert_array_equal(play(4).moves, play(4).moves)
    assert not np.array_equal(play(4).moves, play(5).moves)


def test_sampling_follows_the_tempered_policy():
    policy = np.tile(np.array([[0.0, 0.2, 0.8, 0.0]]), (20000, 1))
    rng = np.random.default_rng(0)
    drawn = sample_rows(policy, 1.0, rng)
    assert set(drawn) == {1, 2} and abs((drawn == 2).mean() - 0.8) < 0.01
    sharp = sample_rows(policy, 0.5, rng)  # 0.8^2 / (0.8^2 + 0.2^2) = 0.941
    assert abs((sharp == 2).mean() - 0.941) < 0.01


# --- REINFORCE ----------------------------------------------------------------------

keras = pytest.importorskip("keras")
from harness.rl.pg_learner import (  # noqa: E402  (needs keras)
    PolicyGradientLearner,
    PolicyGradientLoss,
    compile_learner,
    pack_targets,
)


def pg_config(tmp_path, **pg) -> RLConfig:
    return from_mapping(RLConfig, {
        "run": "pg", "runs_dir": str(tmp_path), "board_size": SIZE, "komi": 0.5,
        "encoder": "mao3", "algorithm": "policy-gradient",
        "train": {"optimizer": "sgd", "momentum": 0.0, "lr": 0.5, "weight_decay": 0.0},
        "pg": pg}, "test")


def small_learner(config: RLConfig) -> PolicyGradientLearner:
    """A real network: one dense layer per head over the mao3 planes."""
    keras.utils.set_random_seed(0)
    inputs = keras.Input((SIZE, SIZE, 3))
    flat = keras.layers.Flatten()(inputs)
    policy = keras.layers.Dense(MOVES, name="policy")(flat)
    value = keras.layers.Dense(1, activation="tanh", name="value")(flat)
    model = keras.Model(inputs, {"policy": policy, "value": value})
    compile_learner(model, config)
    return PolicyGradientLearner("main", model, config)


def one_move_game(move: int, won: bool) -> StepGames:
    """Black (the learner) played ``move`` on an empty board and won or lost."""
    stones = np.zeros((1, 1, SIZE * SIZE), np.int8)
    stones[0, 0, 0] = WHITE  # something on the board, so the planes are not all zero
    return StepGames(
        history=stones, to_play=np.array([BLACK], np.int8),
        candidates=np.ones((1, MOVES), np.bool_), move=np.array([move], np.int32),
        policy=np.full((1, MOVES), 1 / MOVES, np.float32), value=np.zeros(1, np.float32),
        game=np.zeros(1, np.int32), learner_color=np.array([BLACK], np.int8),
        opponent=np.zeros(1, np.int64), margin=np.array([3.5 if won else -3.5]),
        length=np.array([1], np.int32), moves=np.array([[move]], np.int16))


def log_prob(learner: PolicyGradientLearner, games: StepGames, move: int) -> float:
    from harness.features import get_encoder

    x = get_encoder("mao3").encode(games.history, games.to_play, SIZE)
    logits = np.asarray(learner.model.predict_on_batch(x)["policy"], np.float64)[0]
    return float(logits[move] - np.log(np.exp(logits).sum()))


@pytest.mark.parametrize("won", [True, False])
def test_reinforce_moves_the_played_moves_probability_with_the_outcome(tmp_path, won):
    config = pg_config(tmp_path)
    learner = small_learner(config)
    games = one_move_game(7, won)
    before = log_prob(learner, games, 7)
    learner.train(games, games.outcome.astype(np.float32), None, 0.0, 0.0,
                  np.random.default_rng(0))
    after = log_prob(learner, games, 7)
    assert (after > before + 0.01) if won else (after < before - 0.01)


def test_a_baseline_equal_to_the_outcome_leaves_the_policy_alone(tmp_path):
    config = pg_config(tmp_path)
    learner = small_learner(config)
    games = one_move_game(7, won=True)
    before = learner.model.get_layer("policy").get_weights()[0].copy()
    advantage = games.outcome - np.ones(1)  # the value head already expected the win
    learner.train(games, advantage.astype(np.float32), None, 0.0, 0.0, np.random.default_rng(0))
    np.testing.assert_array_equal(learner.model.get_layer("policy").get_weights()[0], before)
    # Half the outcome as the baseline: half the step (plain SGD, first order).
    stepped = []
    for baseline in (0.0, 0.5):
        fresh = small_learner(config)
        start = fresh.model.get_layer("policy").get_weights()[0].copy()
        fresh.train(games, (games.outcome - baseline).astype(np.float32), None, 0.0, 0.0,
                    np.random.default_rng(0))
        stepped.append(fresh.model.get_layer("policy").get_weights()[0] - start)
    np.testing.assert_allclose(stepped[1], 0.5 * stepped[0], atol=1e-6)


def test_the_loss_is_reinforce_plus_kl_to_the_start_minus_entropy():
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(3, MOVES)).astype(np.float32)
    candidates = rng.random((3, MOVES)) < 0.6
    candidates[:, 4] = True
    move = np.array([4, 4, 4])
    advantage = np.array([1.0, -0.5, 0.25], np.float32)
    start = np.where(candidates, rng.random((3, MOVES)), 0.0)
    start /= start.sum(axis=1, keepdims=True)
    beta, eta = 0.3, 0.05
    packed = pack_targets(move, advantage, candidates, start, beta, eta)
    loss = float(PolicyGradientLoss()(packed, logits))
    masked = np.where(candidates, logits.astype(np.float64), -np.inf)
    logp = masked - np.log(np.exp(masked).sum(axis=1, keepdims=True))
    p = np.exp(logp)
    safe = np.where(candidates, logp, 0.0)
    expected = (-advantage * safe[:, 4] - beta * (start * safe).sum(1)
                + eta * (p * safe).sum(1)).mean()
    assert loss == pytest.approx(expected, rel=1e-5)


# --- runs ---------------------------------------------------------------------------

def run_config(tmp_path, name: str, steps: int, model: str = "a0.tiny", size: int = SIZE,
               **pg) -> RLConfig:
    values = {"run": name, "runs_dir": str(tmp_path), "board_size": size, "komi": 0.5,
              "encoder": "agz17", "model": model, "algorithm": "policy-gradient",
              "generations": steps, "seed": 5, "train": {"lr": 0.01},
              "pg": {"games": 6, "pool_every": 1, "kl_start": 0.1, "opening_moves": 1,
                     "baseline": "mean", **pg}}
    return from_mapping(RLConfig, values, "test")


KILLED = """
run = "killed"
board_size = 5
komi = 0.5
encoder = "agz17"
model = "a0.tiny"
algorithm = "policy-gradient"
generations = 3
seed = 5
[train]
lr = 0.01
[pg]
games = 6
pool_every = 1
kl_start = 0.1
opening_moves = 1
baseline = "mean"
"""


def _harness(args: list[str], cwd) -> subprocess.Popen:
    root = str(Path(harness.__file__).resolve().parents[1])  # the checkout under test
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": path}
    return subprocess.Popen([sys.executable, "-m", "harness", "rl", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow  # 28 s alone, 65 s on the shared CPU: two harness processes and a run here
def test_a_run_killed_mid_step_resumes_to_the_uninterrupted_runs_state(tmp_path):
    from harness.files import read_json
    from harness.nets import load_model
    from harness.rl.runs import make_run

    make_run(run_config(tmp_path, "straight", 3), log=lambda _: None).run()
    (tmp_path / "killed.toml").write_text(KILLED)
    args = ["--config", "killed.toml", "--runs-dir", str(tmp_path)]
    b = tmp_path / "killed"
    proc = _harness(args, tmp_path)
    deadline = time.monotonic() + 180
    try:  # SIGKILL as soon as step 1 is committed: during step 2, or just after it
        while time.monotonic() < deadline and proc.poll() is None:
            state = read_json(b / "state.json") if (b / "state.json").exists() else None
            if state is not None and state["generation"] >= 2:
                break
            time.sleep(0.01)
        assert proc.poll() is None, f"the run ended before it was killed:\n{proc.stdout.read()}"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert read_json(b / "state.json")["generation"] in (2, 3)
    resumed = _harness([*args, "--resume"], tmp_path)
    output, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, output
    assert "resuming" in output and "done: 3 generations, 18 games" in output
    a = tmp_path / "straight"
    # The same games, move for move, and the same network up to rounding: the
    # reloaded model's training step is traced anew and oneDNN may sum in
    # another order, which Adam amplifies for parameters with tiny gradients.
    # Against the last step's own change, the difference is small.
    def weights(run, g):
        return np.concatenate([w.ravel() for w in
                               load_model(run / f"models/gen-{g:04d}.keras").get_weights()])

    step = np.linalg.norm(weights(a, 3) - weights(a, 2))
    assert np.linalg.norm(weights(a, 3) - weights(b, 3)) < 0.05 * step
    timing = {"wall_time_s", "cpu_time_s", "last_selfplay", "last_train"}
    sa, sb = read_json(a / "state.json"), read_json(b / "state.json")
    assert {k: v for k, v in sa.items() if k not in timing} == \
        {k: v for k, v in sb.items() if k not in timing}
    assert sa["pool"] == [f"models/gen-{g:04d}.keras" for g in range(4)]
    for g in (1, 2, 3):
        ga, gb = np.load(a / f"games/gen-{g:04d}.npz"), np.load(b / f"games/gen-{g:04d}.npz")
        np.testing.assert_array_equal(ga["moves"], gb["moves"])
    header = (a / "stats.csv").read_text().splitlines()[0].split(",")
    for column in ("win_rate", "win_rate_low", "kl_start", "entropy", "loss", "games_total",
                   "evaluations_total", "selfplay_flops", "train_flops", "wall_time_s"):
        assert column in header
    row = read_json(a / "stats" / "gen-0003.json")
    assert row["games_total"] == 18 and row["kl_start"] > 0 and row["best"].endswith("3.keras")


def test_a_stopped_run_resumes_with_its_pool_baseline_and_optimizer(tmp_path):
    from harness.files import read_json
    from harness.rl.runs import make_run

    quiet = dict(log=lambda _: None)
    make_run(run_config(tmp_path, "straight", 2), **quiet).run()
    make_run(run_config(tmp_path, "stopped", 1), **quiet).run()
    resumed = make_run(run_config(tmp_path, "stopped", 2), **quiet)
    resumed.run(resume=True)
    a, b = tmp_path / "straight", tmp_path / "stopped"
    np.testing.assert_array_equal(np.load(a / "games/gen-0002.npz")["moves"],
                                  np.load(b / "games/gen-0002.npz")["moves"])
    sa, sb = read_json(a / "state.json"), read_json(b / "state.json")
    for key in ("generation", "pool", "baseline_mean", "games_total", "evaluations_total",
                "train_samples_total", "selfplay_flops", "train_flops", "best"):
        assert sa[key] == sb[key], key
    assert resumed.learners["main"].step == 2  # the optimizer's count went on from the file


def test_what_the_policy_gradient_loop_does_not_do_is_refused(tmp_path):
    with pytest.raises(ValueError, match="does not support \\[gating\\] enabled"):
        from_mapping(RLConfig, {"run": "x", "algorithm": "policy-gradient",
                                "gating": {"enabled": True}}, "test")
    with pytest.raises(ValueError, match="algorithm must be one of"):
        RLConfig(run="x", algorithm="ppo")
    with pytest.raises(ValueError, match="baseline must be one of"):
        PolicyGradientConfig(baseline="critic")
