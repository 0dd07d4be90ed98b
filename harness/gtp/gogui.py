"""GoGui's analyze commands: the menu (``gogui-analyze_commands``) and the
``gfx`` answers GoGui draws on the board.

GoGui reads each menu line as ``type/label/command``; a ``gfx`` answer is
lines of ``COLOR #rrggbb v v ...`` (field colours), ``INFLUENCE v x v x ...``
(shading in [-1, 1], positive black), ``LABEL v text ...`` and ``TEXT line``
(status bar). Pure functions of arrays, so the tests read the exact text.
"""

from __future__ import annotations

import numpy as np

from harness.game.geometry import BLACK, point_to_gtp

POLICY_COMMAND = "harness-policy_heatmap"
OWNERSHIP_COMMAND = "harness-ownership_heatmap"
# Field colours from pale yellow (low prior) to deep red (the top move).
HEAT = ("#fff5cc", "#ffe08a", "#ffc04d", "#ff9933", "#ff6619", "#f03c00", "#c81e00", "#a00000")
LABEL_FLOOR = 0.01  # priors below 1% get a colour but no number


def analyze_commands(*, ownership: bool) -> str:
    """The menu GoGui shows under Tools > Analyze Commands."""
    lines = [f"gfx/Policy heat map/{POLICY_COMMAND}"]
    if ownership:
        lines.append(f"gfx/Ownership heat map/{OWNERSHIP_COMMAND}")
    return "\n".join(lines)


def policy_gfx(policy: np.ndarray, size: int) -> str:
    """Network priors (P + 1, pass last) as coloured fields, percentage labels
    on moves of at least 1%, and the pass prior in the status line."""
    points = size * size
    board = np.asarray(policy[:points], np.float64)
    top = board.max(initial=0.0)
    lines = []
    if top > 0:
        levels = np.minimum((board / top * len(HEAT)).astype(int), len(HEAT) - 1)
        for level, colour in enumerate(HEAT):
            where = np.flatnonzero((levels == level) & (board > 0))
            if where.size:
                lines.append(f"COLOR {colour} " + " ".join(point_to_gtp(p, size) for p in where))
    labelled = [p for p in np.argsort(-board, kind="stable") if board[p] >= LABEL_FLOOR]
    if labelled:
        labels = (f"{point_to_gtp(p, size)} {round(100 * board[p])}" for p in labelled)
        lines.append("LABEL " + " ".join(labels))
    lines.append(f"TEXT pass {100 * float(policy[points]):.1f}%")
    return "\n".join(lines)


def ownership_gfx(ownership: np.ndarray, to_play: int, size: int) -> str:
    """Predicted ownership (side to move's view) as GoGui influence, which is
    black's view, with black's expected area margin in the status line."""
    black = np.clip(np.asarray(ownership, np.float64), -1.0, 1.0)
    if to_play != BLACK:
        black = -black
    black = black + 0.0  # no "-0.00" for a point nobody owns
    pairs = " ".join(f"{point_to_gtp(p, size)} {black[p]:.2f}" for p in range(size * size))
    return f"INFLUENCE {pairs}\nTEXT black area margin {black.sum():+.1f} (before komi)"
