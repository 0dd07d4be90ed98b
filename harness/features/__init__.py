"""Input encoders (features) and board symmetries.

``get_encoder(name).encode(stones_history, to_play, size)`` turns stored
positions into channels-last planes; :mod:`harness.features.symmetry` maps
inputs and policy targets through the 8 symmetries of the board.
"""

from harness.features.encoders import Encoder, encoder_names, get_encoder, history_window
from harness.features.symmetry import (
    SYMMETRIES,
    compose,
    inverse,
    transform_planes,
    transform_points,
    transform_policy,
)

__all__ = [
    "SYMMETRIES",
    "Encoder",
    "compose",
    "encoder_names",
    "get_encoder",
    "history_window",
    "inverse",
    "transform_planes",
    "transform_points",
    "transform_policy",
]
