"""Tournament figures: win-matrix heat map and Elo bars with 95% intervals."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from harness.figures import save_figure


def plot_win_matrix(matrix: pd.DataFrame, path: str | Path) -> Path:
    """Heat map of the row player's score against the column player."""
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * n, 1.0 + 0.8 * n))
    values = matrix.to_numpy(dtype=float)
    image = ax.imshow(values, cmap="RdYlGn", vmin=0, vmax=1)
    ax.set_xticks(range(n), matrix.columns, rotation=45, ha="right")
    ax.set_yticks(range(n), matrix.index)
    for i in range(n):
        for j in range(n):
            if not np.isnan(values[i, j]):
                ax.text(j, i, f"{100 * values[i, j]:.0f}", ha="center", va="center", fontsize=8)
    ax.set_title("Score of row player against column player (%)")
    fig.colorbar(image, ax=ax, fraction=0.046)
    return save_figure(fig, path)


def plot_elo(ranking: pd.DataFrame, path: str | Path) -> Path:
    """Elo of each player with its 95% interval, strongest on top (``ranking``: the CSV
    columns of :func:`harness.arena.tables.ranking_table`)."""
    frame = ranking.iloc[::-1]
    fig, ax = plt.subplots(figsize=(7, 1.0 + 0.45 * len(frame)))
    err = np.vstack([frame["elo"] - frame["elo_low"], frame["elo_high"] - frame["elo"]])
    ax.barh(frame["player"], frame["elo"], xerr=err, color="#4c72b0", capsize=3)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("Elo (Bradley-Terry, 95% interval)")
    return save_figure(fig, path)
