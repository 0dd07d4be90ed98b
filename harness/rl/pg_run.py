"""``harness rl`` with ``algorithm = "policy-gradient"``: AlphaGo's RL stage.

One generation is one step: ``[pg] games`` raw-policy games of the current
network against opponents drawn from its pool of past selves
(:mod:`harness.rl.pg_games`, :mod:`harness.rl.pg_pool`), then REINFORCE on
their outcomes (:mod:`harness.rl.pg_learner`). The run directory is the
AlphaZero loop's (:mod:`harness.rl.run`): ``config.json``, ``state.json``,
``models/gen-NNNN.keras`` (the network after step N, optimizer included),
``stats/gen-NNNN.json``, ``stats.csv`` and the live ``metrics.jsonl`` and
TensorBoard events (:mod:`harness.metrics`) with the run's cumulative compute,
so ``harness rl-report`` and ``mcts:``/``policy:`` players read it as they
read any run; instead of a replay buffer, ``games/gen-NNNN.npz`` keeps each
step's moves and results.

A step commits once, at its end (checkpoint, stats, then ``state.json``).
Its games and its update follow from the run's seed, the step number and
the networks on disk, so a run killed in the middle of a step plays the
same games again and makes the same update when it resumes.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from harness.config_io import save_config
from harness.files import atomic_path
from harness.rl.pg_games import StepGames, play_step_games
from harness.rl.pg_learner import PolicyGradientLearner, masked_entropy_kl
from harness.rl.pg_pool import draw_opponents, grown_pool
from harness.rl.run import MAIN, GenerationState, NetState, RLRun
from harness.stats.proportions import wilson_interval
from harness.train import derive_seed

PG_STREAM = 4099  # salt of a step's random stream
OPPONENT_CACHE = 8  # opponent networks kept loaded
PG_STATS_COLUMNS = (
    "generation", "games", "games_total", "positions", "positions_total", "mean_length",
    "win_rate", "win_rate_low", "win_rate_high", "draws", "learner_black_win_rate",
    "opponents", "pool_size", "entropy", "kl_start", "entropy_weight", "baseline",
    "advantage_mean", "loss", "policy_loss", "value_loss",
    "heldout_kl_start", "heldout_top1", "heldout_value_mse",
    "games_per_hour", "evals_per_s", "selfplay_s", "train_s", "wall_time_s", "cpu_time_s",
    "evaluations", "evaluations_total", "train_samples", "train_samples_total",
    "selfplay_flops", "train_flops", "device", "best",
)


class PolicyGradientRun(RLRun):
    """A policy-gradient run directory and the loop over its steps."""

    stats_columns = PG_STATS_COLUMNS

    def __init__(self, config, log=print):
        super().__init__(config, log)
        self._opponents: OrderedDict[str, object] = OrderedDict()
        self._learner_evaluator = None

    # --- start ----------------------------------------------------------------
    def create(self, until_flops: float | None = None) -> GenerationState:
        """Step 0: the start network on disk, alone in the pool (``until_flops``:
        what ends the run, when compute does rather than the step count)."""
        config = self.config
        self.path.mkdir(parents=True, exist_ok=True)
        save_config(config, self.path / "config.json")
        state = GenerationState(window=0, entropy_weight=config.pg.entropy_bonus)
        learner = PolicyGradientLearner.fresh(MAIN, config)
        name = learner.model.name if config.init else config.model
        state.nets[MAIN] = NetState(name, "")
        self._save_learner(learner, state.nets[MAIN], 0, self.compute(state))
        self.learners = {MAIN: learner}
        state.best = state.nets[MAIN].checkpoint
        state.pool = [state.best]
        self.write_state(state)
        pg = config.pg
        length = (f"steps until {until_flops:.3g} training and self-play FLOPs"
                  if until_flops is not None else f"{config.generations} steps")
        self.log(f"run {self.path}: policy gradient, {length} of {pg.games} "
                 f"games, {config.board_size}x{config.board_size} {config.rules}, "
                 f"{state.nets[MAIN].model}")
        return state

    def _learner(self, state: GenerationState, name: str) -> PolicyGradientLearner:
        learner = self.learners.get(name)
        expected = self.path / state.nets[name].checkpoint
        if learner is None or learner.checkpoint != expected:
            learner = PolicyGradientLearner.load(name, self.config, expected)
            self.learners[name] = learner
            self._learner_evaluator = None
        return learner

    # --- networks behind the evaluator interface --------------------------------
    def _network_evaluator(self, model):
        """A forward pass per batch of games in flight, softmax at temperature
        1 over the candidates (the sampling temperature is the games')."""
        from harness.search import EvaluatorConfig, NetworkEvaluator

        pg = self.config.pg
        batch = max(8, pg.parallel or pg.games)
        return NetworkEvaluator(model, self.config.encoder, self.config.board_size,
                                EvaluatorConfig(batch_size=batch), inference="keras")

    def _learner_network(self, state: GenerationState):
        learner = self._learner(state, MAIN)
        if self._learner_evaluator is None or self._learner_evaluator.model is not learner.model:
            self._learner_evaluator = self._network_evaluator(learner.model)
        return self._learner_evaluator

    def _opponent(self, checkpoint: str):
        """The frozen network of a pool member (the last few kept loaded)."""
        from harness.nets import load_model

        evaluator = self._opponents.pop(checkpoint, None)
        if evaluator is None:
            evaluator = self._network_evaluator(load_model(self.path / checkpoint))
        self._opponents[checkpoint] = evaluator
        while len(self._opponents) > OPPONENT_CACHE:
            self._opponents.popitem(last=False)
        return evaluator

    # --- a step -------------------------------------------------------------------
    def generation(self, state: GenerationState) -> None:
        g = state.generation
        config, pg = self.config, self.config.pg
        t0, cpu0 = time.perf_counter(), time.process_time()
        rng = np.random.default_rng(derive_seed(config.seed, g, PG_STREAM))
        opponents = draw_opponents(state.pool, pg, rng)
        learner_net = self._learner_network(state)
        from harness.features import get_encoder

        games = play_step_games(
            learner_net, [self._opponent(c) for c in opponents], pg.games,
            size=config.board_size, komi=config.komi, rules=config.rules,
            history=get_encoder(config.encoder).history, rng=rng,
            temperature=pg.sample_temperature, opening_moves=pg.opening_moves,
            max_moves=pg.max_moves, parallel=pg.parallel)
        start = self._opponent(state.pool[0])  # the start network is always the pool's first
        start_policy = (start.evaluate(games.history, games.to_play, games.candidates)[0]
                        if len(games.move) else None)
        evaluations = games.evaluations + len(games.move)
        selfplay_s, selfplay_cpu = time.perf_counter() - t0, time.process_time() - cpu0
        entropy, kl = masked_entropy_kl(games.policy, start_policy)
        baseline = self._baseline(state, games)
        advantage = (games.outcome - baseline).astype(np.float32)

        t1 = time.perf_counter()
        learner = self._learner(state, MAIN)
        logs = learner.train(games, advantage, start_policy, pg.kl_start, state.entropy_weight,
                             rng)
        train_s = time.perf_counter() - t1

        from harness.nets.compute import selfplay_flops, train_flops

        flops = self.forward_flops(state, MAIN)
        state.evaluations_total += evaluations
        state.selfplay_flops += selfplay_flops(flops, evaluations)
        state.train_samples_total += learner.samples
        state.train_flops += train_flops(flops, learner.samples)
        state.games_total += pg.games
        state.positions_total += int(games.length.sum())
        wall = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
        self._save_learner(learner, state.nets[MAIN], g, self.compute(state, wall, cpu))
        state.wall_time_s += wall
        state.cpu_time_s += cpu
        state.best = state.nets[MAIN].checkpoint
        self._save_games(g, games, opponents)

        outcome = games.learner_outcome
        wins = float((outcome > 0).sum() + 0.5 * (outcome == 0).sum())
        low, high = wilson_interval(wins, len(outcome))
        learner_black = games.learner_color == 1
        played = {
            "games": pg.games, "positions": int(games.length.sum()),
            "mean_length": float(games.length.mean()),
            "win_rate": wins / len(outcome), "win_rate_low": low, "win_rate_high": high,
            "draws": int((outcome == 0).sum()),
            "learner_black_win_rate": float((outcome[learner_black] > 0).mean())
            if learner_black.any() else float("nan"),
            "opponents": " ".join(Path(c).stem for c in opponents),
            "entropy": entropy, "kl_start": kl, "entropy_weight": state.entropy_weight,
            "baseline": pg.baseline, "advantage_mean": float(advantage.mean()),
            "selfplay_s": selfplay_s, "selfplay_cpu_s": selfplay_cpu, "train_s": train_s,
            "evaluations": evaluations, "train_samples": learner.samples,
            "games_per_hour": 3600.0 * pg.games / selfplay_s if selfplay_s > 0 else float("nan"),
            "evals_per_s": evaluations / selfplay_s if selfplay_s > 0 else float("nan"),
        }
        state.baseline_mean = (pg.baseline_decay * state.baseline_mean
                               + (1 - pg.baseline_decay) * float(outcome.mean()))
        state.entropy_weight = next_entropy_weight(state.entropy_weight, entropy, pg)
        state.pool = grown_pool(state.pool, g, state.best, pg)
        state.last_selfplay = played
        state.last_train = {MAIN: logs}
        row = {**self._stats_row(state, g, {}, True), "pool_size": len(state.pool),
               **self._monitor(state)}
        self._record(g, row)
        state.generation = g + 1
        state.phase = "selfplay"
        self.write_state(state)
        self.log(f"step {g}: won {wins:g}/{pg.games} ({100 * wins / pg.games:.0f}% "
                 f"[{100 * low:.0f}, {100 * high:.0f}]) against "
                 f"{played['opponents']}, mean length {played['mean_length']:.0f}, entropy "
                 f"{entropy:.2f}, KL from start {kl:.3f}, loss {logs.get('loss', float('nan')):.3f}"
                 f" ({selfplay_s:.1f} s games, {train_s:.1f} s training)")

    def _baseline(self, state: GenerationState, games: StepGames) -> np.ndarray | float:
        """What is subtracted from each learner move's outcome (``[pg] baseline``)."""
        mode = self.config.pg.baseline
        if mode == "value":
            return games.value
        if mode == "mean":
            return state.baseline_mean
        return 0.0

    def _save_games(self, g: int, games: StepGames, opponents: list[str]) -> None:
        """The step's games: moves (-1 after the end), who played what, and the count."""
        with atomic_path(self.path / "games" / f"gen-{g:04d}.npz") as tmp, open(tmp, "wb") as f:
            np.savez_compressed(f, moves=games.moves, length=games.length,
                                learner_color=games.learner_color,
                                opponent=np.array([opponents[i] for i in games.opponent]),
                                margin=games.margin)


def next_entropy_weight(weight: float, entropy: float, pg) -> float:
    """The entropy bonus for the next step: ``entropy_boost`` more while the
    policy's entropy is under ``entropy_floor``, else halfway back to
    ``entropy_bonus``."""
    if pg.entropy_floor > 0 and entropy < pg.entropy_floor:
        return weight + pg.entropy_boost
    return max(pg.entropy_bonus, pg.entropy_bonus + (weight - pg.entropy_bonus) / 2)
