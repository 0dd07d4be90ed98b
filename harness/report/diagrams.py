"""Board diagrams with each model's policy as a heat map, side by side.

Seeing where two networks put their probability on the same position says
more about what they learned than one more accuracy number.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from harness.figures import save_figure
from harness.game.geometry import BLACK, COLUMNS, WHITE


def draw_board(
    ax,
    stones: np.ndarray,
    size: int,
    heat: np.ndarray | None = None,
    played: int | None = None,
    title: str = "",
) -> None:
    """One board: grid, stones, optional policy heat (P values) and the move played."""
    ax.set_xlim(-0.7, size - 0.3)
    ax.set_ylim(size - 0.3, -0.7)
    ax.set_aspect("equal")
    ax.set_facecolor("#dcb35c")
    if heat is not None:
        ax.imshow(
            heat.reshape(size, size),
            cmap="Reds",
            alpha=0.75,
            vmin=0,
            vmax=max(float(heat.max()), 1e-9),
            extent=(-0.5, size - 0.5, size - 0.5, -0.5),
        )
    for i in range(size):
        ax.plot([0, size - 1], [i, i], color="black", linewidth=0.5)
        ax.plot([i, i], [0, size - 1], color="black", linewidth=0.5)
    board = stones.reshape(size, size)
    for (r, c), color in np.ndenumerate(board):
        if color in (BLACK, WHITE):
            face = "black" if color == BLACK else "white"
            ax.add_patch(Circle((c, r), 0.46, facecolor=face, edgecolor="black", linewidth=0.6,
                                zorder=3))
    if played is not None and played < size * size:
        r, c = divmod(played, size)
        ax.add_patch(Circle((c, r), 0.5, facecolor="none", edgecolor="#1f77b4", linewidth=2.0,
                            zorder=4))
    ax.set_xticks(range(size), list(COLUMNS[:size]), fontsize=6)
    ax.set_yticks(range(size), [str(size - r) for r in range(size)], fontsize=6)
    ax.set_title(title, fontsize=8)


def policy_figure(
    stones: np.ndarray, size: int, policies: dict[str, np.ndarray], played: int, path: str | Path
) -> Path:
    """The position, then one panel per model with its move probabilities."""
    names: Sequence[str] = list(policies)
    fig, axes = plt.subplots(1, len(names) + 1, figsize=(2.6 * (len(names) + 1), 2.9))
    draw_board(axes[0], stones, size, played=played, title="position (blue: move played)")
    for ax, name in zip(axes[1:], names, strict=True):
        probs = policies[name]
        top = int(np.argmax(probs))
        label = "pass" if top == size * size else f"{COLUMNS[top % size]}{size - top // size}"
        draw_board(
            ax,
            stones,
            size,
            heat=probs[: size * size],
            played=played,
            title=f"{name}\ntop {label} ({probs[top]:.0%})",
        )
    return save_figure(fig, path, dpi=100)
