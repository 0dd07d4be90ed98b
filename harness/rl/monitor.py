"""Held-out measurements of every generation: how far self-play moves a network.

Self-play losses are measured on the run's own, moving window, so they cannot
show a network forgetting what it knew. A fixed set of held-out positions (a
dataset's validation split) can: per generation, the KL divergence of the
network's policy from the starting network's, its top-1 agreement with the
moves played, its value MSE against the games' outcomes, and the value head's
calibration (mean outcome per bin of predicted value).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.rl.anchor import policy_kl

CALIBRATION_BINS = 10  # bins of predicted value over [-1, 1]


@dataclass(frozen=True)
class HeldOut:
    """Encoded positions with the move played and the game's outcome (side to move)."""

    x: np.ndarray
    move: np.ndarray
    outcome: np.ndarray
    known: np.ndarray  # 1 where the game's result is known


def held_out_positions(path: str | Path, positions: int, *, encoder: str,
                       board_size: int) -> HeldOut:
    """``positions`` of the validation split, evenly spaced over it: one or
    two from each of many games. (The first positions in file order come
    from a handful of games, whose few outcomes make a value MSE noise.)"""
    from harness.config_io import ConfigError
    from harness.data.pipeline import PipelineConfig, open_stream

    config = PipelineConfig(batch_size=256, encoder=encoder, targets=("policy", "value"),
                            threads=1).validation()
    xs, moves, outcomes, known = [], [], [], []
    with open_stream(path, "val", config, spread=positions, drop_remainder=False) as stream:
        if stream.size != board_size:
            raise ConfigError(f"[monitor] dataset {path}: {stream.size}x{stream.size} "
                              f"positions, the run plays {board_size}x{board_size}")
        seen = 0
        for x, targets, weights in stream.epoch(0):
            xs.append(x)
            moves.append(np.argmax(targets["policy"], axis=1))
            outcomes.append(np.asarray(targets["value"], np.float32).reshape(-1))
            known.append(np.asarray(weights["value"], np.float32))
            seen += len(x)
            if seen >= positions:
                break
    if not xs:
        raise ConfigError(f"[monitor] dataset {path}: no validation positions")
    cut = slice(0, positions)
    return HeldOut(np.concatenate(xs)[cut], np.concatenate(moves)[cut],
                   np.concatenate(outcomes)[cut], np.concatenate(known)[cut])


def signed_value(value: np.ndarray, value_loss: str) -> np.ndarray:
    """A value head's output as a signed value in [-1, 1]."""
    value = np.asarray(value, np.float64).reshape(-1)
    return 2.0 * value - 1.0 if value_loss == "bce" else value


def forward(model, x: np.ndarray, batch_size: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Policy logits and raw value outputs over ``x``."""
    from harness.train import predict_batch

    policies, values = [], []
    for i in range(0, len(x), batch_size):
        out = predict_batch(model, x[i:i + batch_size])
        policies.append(np.asarray(out["policy"]))
        values.append(np.asarray(out["value"]).reshape(-1))
    return np.concatenate(policies), np.concatenate(values)


def measure(held: HeldOut, logits: np.ndarray, value: np.ndarray,
            start_logits: np.ndarray) -> dict:
    """The generation's held-out figures from its outputs (``value`` signed)."""
    known = held.known > 0
    error = (value - held.outcome) ** 2
    return {
        "heldout_kl_start": float(policy_kl(start_logits, logits).mean()),
        "heldout_top1": float((np.argmax(logits, axis=1) == held.move).mean()),
        "heldout_value_mse": float(error[known].mean()) if known.any() else float("nan"),
        "heldout_calibration": calibration_bins(value[known], held.outcome[known]),
    }


def calibration_bins(value: np.ndarray, outcome: np.ndarray) -> list[list]:
    """``[bin centre, mean predicted, mean outcome, positions]`` for each bin
    of signed predicted value over [-1, 1] that holds a position: a
    calibrated value head's mean outcome equals its mean prediction."""
    edges = np.linspace(-1.0, 1.0, CALIBRATION_BINS + 1)
    which = np.clip(np.digitize(value, edges) - 1, 0, CALIBRATION_BINS - 1)
    bins = []
    for b in range(CALIBRATION_BINS):
        rows = which == b
        if rows.any():
            bins.append([round(float(edges[b] + edges[b + 1]) / 2, 3),
                         float(value[rows].mean()), float(outcome[rows].mean()),
                         int(rows.sum())])
    return bins


def interval_figures(held: HeldOut, logits: np.ndarray, value: np.ndarray) -> dict:
    """95% intervals of held-out top-1 and value MSE. The positions are
    spread over the validation games (one or two per game), so they are
    treated as independent."""
    from harness.stats.bootstrap import mean_interval

    hits = (np.argmax(logits, axis=1) == held.move).astype(np.float64)
    error = ((value - held.outcome) ** 2)[held.known > 0]
    out = {}
    for key, sample in (("heldout_top1", hits), ("heldout_value_mse", error)):
        estimate = mean_interval(sample)
        out[f"{key}_low"], out[f"{key}_high"] = estimate.low, estimate.high
    return out


def remeasure_run(run_dir: str | Path, held: HeldOut) -> list[dict]:
    """Every saved generation of a run (generation 0 first) measured now on
    ``held``: what ``[monitor]`` records, for runs without it or whose
    monitor read too few games, with intervals."""
    from harness.nets import load_model
    from harness.train import model_value_loss

    paths = sorted((Path(run_dir) / "models").glob("gen-*.keras"))
    if not paths:
        return []
    start_logits = None
    rows = []
    for path in paths:
        model = load_model(path)
        logits, raw = forward(model, held.x)
        value = signed_value(raw, model_value_loss(model))
        start_logits = logits if start_logits is None else start_logits
        rows.append({"run": Path(run_dir).name, "generation": int(path.stem.split("-")[1]),
                     **measure(held, logits, value, start_logits),
                     **interval_figures(held, logits, value)})
    return rows
