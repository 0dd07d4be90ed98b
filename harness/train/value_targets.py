"""Value-target conventions.

Datasets store the game outcome from the side to move in the signed
convention: +1 the player to move went on to win, -1 they lost, 0 draw or
unknown. A tanh head trained with MSE uses that number directly; a sigmoid
head trained with binary cross-entropy needs a probability, ``(z + 1) / 2``.
Metrics always report value MSE in the signed convention so that runs with
different heads are comparable.
"""

from __future__ import annotations

import numpy as np

from harness.game.geometry import BLACK, WHITE

CONVENTIONS = {"mse": "tanh", "bce": "sigmoid"}


def check_convention(value_loss: str) -> str:
    if value_loss not in CONVENTIONS:
        raise ValueError(f"unknown value loss {value_loss!r} (choose mse or bce)")
    return value_loss


def signed_outcome(winner: int, to_play: np.ndarray | int) -> np.ndarray:
    """Outcome in [-1, 1] from the side to move: +1 if ``to_play`` is ``winner``.

    ``winner`` is BLACK, WHITE or anything else for no winner (0 target).
    """
    to_play = np.asarray(to_play)
    if winner not in (BLACK, WHITE):
        return np.zeros(to_play.shape, np.float32)
    return np.where(to_play == winner, 1.0, -1.0).astype(np.float32)


def to_head(signed: np.ndarray, value_loss: str) -> np.ndarray:
    """Signed outcome -> the target the value head is trained on."""
    signed = np.asarray(signed, np.float32)
    if check_convention(value_loss) == "bce":
        return (signed + 1.0) * 0.5
    return signed


def from_head(value: np.ndarray, value_loss: str) -> np.ndarray:
    """Value-head output (or target) -> signed convention in [-1, 1]."""
    value = np.asarray(value, np.float32)
    if check_convention(value_loss) == "bce":
        return value * 2.0 - 1.0
    return value
