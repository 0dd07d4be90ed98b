"""Rules of Go and NoGo: compiled kernels (``board``) and a small object API."""

from harness.game.geometry import BLACK, EMPTY, WHITE, geometry, gtp_to_point, point_to_gtp
from harness.game.position import Game, IllegalMove
from harness.game.result import GameResult, parse_result

__all__ = [
    "BLACK",
    "EMPTY",
    "WHITE",
    "Game",
    "GameResult",
    "IllegalMove",
    "geometry",
    "gtp_to_point",
    "parse_result",
    "point_to_gtp",
]
