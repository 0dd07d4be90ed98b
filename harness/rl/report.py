"""How strong did a self-play run get, and how fast? (NoGoZero+ table 1 style.)

The self-play network after each selected generation plays a round robin
(``harness.arena.tournament``, resumable) with any baselines. Searches are
deterministic, so games start from a few random moves (the same for both
colour assignments) and moves are chosen with Cazenave's randomised rule;
otherwise every pair would replay one game per colour. Bradley-Terry
ratings anchored on the initial network (Elo 0) are then set against the
self-play games played so far and the run's wall time. Generations whose best
network did not change (gating kept the old one) share one player.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.config_io import read_saved_config, values_of
from harness.files import read_json
from harness.game.settings import GameSettings
from harness.rl.config import RLConfig

ANCHOR = "gen0"
ELO_COLUMNS = ("player", "generation", "checkpoint", "games", "wall_time_h", "elo", "elo_low",
               "elo_high")


@dataclass
class Point:
    """The self-play network after one generation."""

    generation: int
    checkpoint: str  # relative to the run directory
    games: int  # self-play games played up to this generation
    wall_time_s: float
    player: str = ""


def generation_points(run_dir: Path) -> list[Point]:
    """Generation 0 (the initial network) and every finished generation."""
    points = [Point(0, "models/gen-0000.keras", 0, 0.0)]
    g = 1
    while (row := read_json(run_dir / "stats" / f"gen-{g:04d}.json")) is not None:
        points.append(Point(g, str(row["best"]), int(row["games_total"]),
                            float(row["wall_time_s"])))
        g += 1
    return points


def select(points: list[Point], generations: list[int] | None, count: int) -> list[Point]:
    """The asked-for generations, or ``count`` spread evenly (first and last included).

    A negative generation counts from the end (-1: the last finished one),
    since a run on a time budget does not know its length in advance.
    """
    if generations:
        last = points[-1].generation
        generations = [g if g >= 0 else last + 1 + g for g in generations]
        by_gen = {p.generation: p for p in points}
        missing = [g for g in generations if g not in by_gen]
        if missing:
            raise ValueError(f"generation {missing[0]} is not finished "
                             f"(last finished: {points[-1].generation})")
        return [by_gen[g] for g in sorted(set(generations))]
    if len(points) <= count:
        return list(points)
    index = np.unique(np.round(np.linspace(0, len(points) - 1, count)).astype(int))
    return [points[i] for i in index]


def players_for(points: list[Point], run_dir: Path, playouts: int, encoder: str) -> list[str]:
    """Tournament entries ``genN=mcts:...``; one player per distinct checkpoint."""
    from harness.arena.tournament import player_entry
    from harness.players.spec import PlayerSpec

    entries, named = [], {}
    for p in points:
        if p.checkpoint in named:
            p.player = named[p.checkpoint]
            continue
        p.player = named[p.checkpoint] = f"gen{p.generation}"
        # randomize: Cazenave's tournament choice, so that repeated games differ.
        spec = PlayerSpec("mcts", model=run_dir / p.checkpoint, playouts=playouts,
                          randomize=True, encoder=encoder)
        entries.append(player_entry(p.player, spec))
    return entries


def rl_report(
    run_dir: str | Path,
    *,
    out: str | Path | None = None,
    generations: list[int] | None = None,
    count: int = 6,
    baselines: tuple[str, ...] = (),
    games_per_pair: int = 4,
    opening_moves: int = 4,
    playouts: int = 32,
    parallel: int = 1,
    seed: int = 0,
    progress: bool = True,
) -> tuple[Path, list[list]]:
    """Play the tournament, fit ratings, write ``elo.csv``/``elo.md`` and ``elo.png``.

    Returns the output directory and the Elo table (rows of ``ELO_COLUMNS``).
    """
    from harness.arena.ratings import bradley_terry
    from harness.arena.tournament import TournamentConfig, outcomes_of, run_tournament
    from harness.files import save_table

    run_dir = Path(run_dir)
    config = read_saved_config(RLConfig, run_dir / "config.json")
    out = Path(out) if out is not None else run_dir / "report"
    points = select(generation_points(run_dir), generations, count)
    if points[0].generation != 0:
        points.insert(0, generation_points(run_dir)[0])  # the anchor is always there
    entries = players_for(points, run_dir, playouts, config.encoder)
    tournament = TournamentConfig(
        players=entries + list(baselines), out=str(out / "tournament"),
        games_per_pair=games_per_pair, opening_moves=opening_moves, parallel=parallel,
        seed=seed, anchor=ANCHOR, **values_of(config, GameSettings),
    )
    rows = run_tournament(tournament, progress=progress)
    names = [name for name, _ in tournament.named_players()]
    ratings = bradley_terry(outcomes_of(rows), names, anchor=ANCHOR)
    interval = ratings.interval()
    elo = {name: (float(ratings.elo[i]), float(interval[i, 0]), float(interval[i, 1]))
           for i, name in enumerate(names)}
    table = [[p.player, p.generation, p.checkpoint, p.games, p.wall_time_s / 3600.0,
              *elo[p.player]] for p in points]
    table += [[name, "", "", "", "", *elo[name]] for name in names[len(entries):]]
    save_table(ELO_COLUMNS, table, out / "elo")
    plot_elo_progress(points, elo, names[len(entries):], out / "elo.png",
                      title=f"{run_dir.name}: {config.board_size}x{config.board_size} "
                            f"{config.rules}, {playouts} playouts")
    return out, table


def plot_elo_progress(points: list[Point], elo: dict[str, tuple[float, float, float]],
                      baselines: list[str], path: Path, title: str = "") -> Path:
    """Elo (95% interval) against self-play games and against wall time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from harness.figures import save_figure

    y = np.array([elo[p.player][0] for p in points])
    err = np.array([[elo[p.player][0] - elo[p.player][1] for p in points],
                    [elo[p.player][2] - elo[p.player][0] for p in points]])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    xs = ([p.games for p in points], [p.wall_time_s / 3600.0 for p in points])
    labels = ("self-play games", "wall time (hours)")
    for ax, x, label in zip(axes, xs, labels, strict=True):
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, color="#4c72b0", label="self-play net")
        for name in baselines:
            value = elo[name][0]
            if math.isfinite(value):
                ax.axhline(value, linestyle="--", linewidth=0.9, color="grey")
                ax.annotate(name, (x[-1], value), fontsize=8, va="bottom", ha="right")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"Elo (Bradley-Terry, {ANCHOR} = 0, 95% interval)")
    if title:
        fig.suptitle(title)
    return save_figure(fig, path, dpi=120)
