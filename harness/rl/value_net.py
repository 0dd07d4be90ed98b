"""A value network trained on one position per game, and measured on held-out games.

The network starts from a policy-value network's weights (the RL policy's by
default) and only its value loss trains (the policy head's weight is 0), so
the trunk's features from supervised and RL training are reused; every
batch is shown under a random board symmetry of eight. Held-out games are
whole games (one position each, so positions are independent): the MSE on
them is a plain mean with a Student-t interval, against the value heads of
the networks it started from on the same positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.config_io import setting
from harness.rl.value_games import ValuePositions
from harness.stats.bootstrap import mean_interval
from harness.train import OptimizerSettings, with_family_defaults

START_FROM = ("rl", "sl")


@dataclass(frozen=True)
class ValueNetSettings(OptimizerSettings):
    """``harness rl-value``: AlphaGo's value-network data from a policy-gradient
    run, and the value network trained on it (``[train]``'s optimizer keys)."""

    sample_games: int = setting(2000, "games played, one position kept from each")
    u_max: int = setting(0, "the random move's number is drawn from 1..u_max "
                         "(0: the board's points)")
    held_out_share: float = setting(0.1, "share of the games held out to measure on")
    value_epochs: int = setting(4, "passes over the training positions")
    games_in_flight: int = setting(256, "games played at once (one forward pass)")
    play_hours: float = setting(0.0, "no new wave of games starts after this many hours of "
                                "play (0: all sample_games)")
    sl_network: str = setting("", "the supervised policy that opens every game "
                              "(default: the run's generation 0)")
    rl_network: str = setting("", "the RL policy that finishes every game "
                              "(default: the run's last step)")
    start_from: str = setting("rl", "the network whose weights the value network starts "
                              "from: rl or sl", choices=START_FROM)
    seed: int = setting(0, "random seed")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sample_games < 2 or self.value_epochs < 1 or self.games_in_flight < 1:
            raise ValueError("rl-value needs sample_games >= 2, value_epochs and "
                             "games_in_flight >= 1")
        if not 0.0 < self.held_out_share < 1.0:
            raise ValueError(f"held_out_share must be in (0, 1), got {self.held_out_share}")
        if self.u_max < 0 or self.play_hours < 0:
            raise ValueError("u_max and play_hours must be >= 0")


def split_games(positions: ValuePositions, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the training and held-out positions: the last ``share``
    of the games, by game number, are held out."""
    games = positions.game
    cut = np.quantile(games, 1.0 - share) if len(games) else 0
    held = games >= cut
    return np.flatnonzero(~held), np.flatnonzero(held)


def symmetric(history: np.ndarray, k: int, size: int) -> np.ndarray:
    """``history`` (N, T, P) under board symmetry ``k``."""
    from harness.features.symmetry import transform_points

    if k == 0:
        return history
    points = np.arange(size * size)
    source = np.argsort(transform_points(points, k, size))
    return history[:, :, source]


def value_of(model, encoder, positions: ValuePositions, rows: np.ndarray, size: int,
             batch: int = 512) -> np.ndarray:
    """The value head's prediction in [-1, 1] for the side to move at ``rows``."""
    from harness.train import model_value_loss, predict_batch

    sigmoid = model_value_loss(model) == "bce"
    out = np.empty(len(rows), np.float64)
    for start in range(0, len(rows), batch):
        part = rows[start:start + batch]
        x = encoder.encode(positions.history[part], positions.to_play[part], size)
        v = np.asarray(predict_batch(model, x)["value"], np.float64).reshape(-1)
        out[start:start + len(part)] = 2.0 * v - 1.0 if sigmoid else v
    return out


def mse_row(name: str, predicted: np.ndarray, outcome: np.ndarray) -> dict:
    """Mean squared error against the outcomes with its 95% Student-t interval."""
    estimate = mean_interval((predicted - outcome) ** 2)
    return {"network": name, "positions": len(outcome), "mse": estimate.value,
            "mse_low": estimate.low, "mse_high": estimate.high}


def paired_row(name: str, predicted: np.ndarray, other: np.ndarray,
               outcome: np.ndarray) -> dict:
    """The difference of two networks' MSE on the same positions, with the
    Student-t interval of the per-position differences (paired, so much
    narrower than the two intervals side by side)."""
    estimate = mean_interval((predicted - outcome) ** 2 - (other - outcome) ** 2)
    return {"network": name, "positions": len(outcome), "mse": estimate.value,
            "mse_low": estimate.low, "mse_high": estimate.high}


def train_value_network(model, settings: ValueNetSettings, encoder, positions: ValuePositions,
                        train_rows: np.ndarray, size: int, rng: np.random.Generator,
                        log=print) -> list[float]:
    """Train ``model``'s value head (and trunk) on ``train_rows``; the policy
    head's loss weight is 0. Returns the mean loss of each epoch."""
    from harness.train import compile_model, model_value_loss

    settings = with_family_defaults(settings, model.name)
    compile_model(model, settings, settings.lr, model_value_loss(model), soft_policy=True,
                  weights={"policy": 0.0, "value": 1.0})
    sigmoid = model_value_loss(model) == "bce"
    moves = size * size + 1
    losses = []
    for epoch in range(settings.value_epochs):
        order = rng.permutation(train_rows)
        total, count = 0.0, 0
        for start in range(0, len(order), settings.batch_size):
            rows = np.sort(order[start:start + settings.batch_size])
            k = int(rng.integers(8))
            x = encoder.encode(symmetric(positions.history[rows], k, size),
                               positions.to_play[rows], size)
            z = positions.outcome[rows].reshape(-1, 1).astype(np.float32)
            targets = {"policy": np.full((len(rows), moves), 1.0 / moves, np.float32),
                       "value": (z + 1) / 2 if sigmoid else z}
            for head in model.output_names:
                if head not in targets:
                    shape = tuple(model.get_layer(head).output.shape[1:])
                    targets[head] = np.zeros((len(rows), *shape), np.float32)
            weights = {head: np.zeros(len(rows), np.float32) for head in targets}
            weights["value"] = np.ones(len(rows), np.float32)
            logs = model.train_on_batch(x, targets, sample_weight=weights, return_dict=True)
            total += float(logs["value_loss"]) * len(rows)
            count += len(rows)
        losses.append(total / max(1, count))
        log(f"value network epoch {epoch + 1}: value loss {losses[-1]:.4f}")
    return losses
