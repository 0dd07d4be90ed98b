"""How strong did a self-play run get, and how fast? (NoGoZero+ table 1 style.)

The self-play network after each selected generation plays a round robin
(``harness.arena.tournament``, resumable) with any baselines. Several runs
(for example PUCT and Gumbel self-play under one budget) play in one
tournament, so their ratings share a scale; picking each run's generations at
the same wall-clock hours makes it an equal-compute comparison. Searches are
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
from harness.metrics import JSONL_NAME, read_jsonl
from harness.rl.config import RLConfig

ANCHOR = "gen0"
ELO_COLUMNS = ("run", "player", "generation", "checkpoint", "games", "wall_time_h", "elo",
               "elo_low", "elo_high")


@dataclass
class Point:
    """The self-play network after one generation."""

    generation: int
    checkpoint: str  # relative to the run directory
    games: int  # self-play games played up to this generation
    wall_time_s: float
    run: str = ""  # the run directory's name
    player: str = ""


def generation_rows(run_dir: Path) -> list[dict]:
    """Every finished generation's figures, in order: the run's ``metrics.jsonl``
    lines, and for a generation without one (a run from before the JSON lines,
    or with them switched off) its ``stats/gen-NNNN.json``. A figure the JSON
    line holds as null (not a number) is NaN, as in the stats file."""
    run_dir = Path(run_dir)
    lines = {row["generation"]: row for row in read_jsonl(run_dir / JSONL_NAME)
             if isinstance(row.get("generation"), int)}
    rows, g = [], 1
    while True:
        row = lines.get(g)
        if row is None:
            row = read_json(run_dir / "stats" / f"gen-{g:04d}.json")
            if row is None:
                return rows
        else:
            row = {k: math.nan if v is None else v for k, v in row.items()
                   if k not in ("step", "wall_time")}
        rows.append({"generation": g, **row})
        g += 1


def generation_points(run_dir: Path) -> list[Point]:
    """Generation 0 (the initial network) and every finished generation."""
    run_dir = Path(run_dir)
    points = [Point(0, "models/gen-0000.keras", 0, 0.0, run=run_dir.name)]
    for row in generation_rows(run_dir):
        points.append(Point(int(row["generation"]), str(row["best"]), int(row["games_total"]),
                            float(row["wall_time_s"]), run=run_dir.name))
    return points


def select_at_hours(points: list[Point], hours: list[float]) -> list[Point]:
    """Generation 0 and, for each budget in ``hours``, the last generation
    finished within it: the same wall-clock points for every run compared."""
    chosen = [points[0]]
    for h in sorted(hours):
        if h < 0:
            raise ValueError(f"--at-hours: {h} is negative")
        within = [p for p in points if p.wall_time_s <= h * 3600.0]
        if within[-1] not in chosen:
            chosen.append(within[-1])
    return chosen


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


def players_for(points: list[Point], run_dir: Path, playouts: int, encoder: str,
                prefix: str = "") -> list:
    """Tournament players ``PREFIXgenN``, one per distinct checkpoint: a
    search at ``playouts``, or with 0 the raw policy sampled at temperature 1
    (a policy-gradient run's own play, and how AlphaGo matched its RL policy
    against its SL policy; greedy raw games would repeat once the opening
    coincides)."""
    from harness.arena.tournament import NamedPlayer
    from harness.players.spec import PlayerSpec

    entries, named = [], {}
    for p in points:
        if p.checkpoint in named:
            p.player = named[p.checkpoint]
            continue
        p.player = named[p.checkpoint] = f"{prefix}gen{p.generation}"
        # randomize: Cazenave's tournament choice, so that repeated games differ.
        if playouts == 0:
            spec = PlayerSpec("policy", model=run_dir / p.checkpoint, temperature=1.0,
                              encoder=encoder)
        else:
            spec = PlayerSpec("mcts", model=run_dir / p.checkpoint, playouts=playouts,
                              randomize=True, encoder=encoder)
        entries.append(NamedPlayer(p.player, spec))
    return entries


def compared_runs(run_dirs: str | Path | list[str | Path], out: str | Path | None = None
                  ) -> tuple[list[Path], list[RLConfig], Path]:
    """The runs' directories and configs, checked to play the same game with
    the same encoder, and the report's directory (``out``, else beside them)."""
    dirs = [Path(d) for d in (run_dirs if isinstance(run_dirs, (list, tuple)) else [run_dirs])]
    if len({d.name for d in dirs}) != len(dirs):
        raise ValueError(f"runs must have distinct directory names, got {[str(d) for d in dirs]}")
    configs = [read_saved_config(RLConfig, d / "config.json") for d in dirs]
    settings = [values_of(c, GameSettings) for c in configs]
    for d, c, s in zip(dirs[1:], configs[1:], settings[1:], strict=True):
        if s != settings[0] or c.encoder != configs[0].encoder:
            raise ValueError(f"{d}: plays {s} with {c.encoder}, but {dirs[0]} plays "
                             f"{settings[0]} with {configs[0].encoder}; runs compared "
                             "in one report must play the same game")
    out = Path(out) if out is not None else (
        dirs[0] / "report" if len(dirs) == 1
        else dirs[0].parent / ("report-" + "-vs-".join(d.name for d in dirs)))
    return dirs, configs, out


def rl_report(
    run_dirs: str | Path | list[str | Path],
    *,
    out: str | Path | None = None,
    generations: list[int] | None = None,
    hours: list[float] | None = None,
    count: int = 6,
    baselines: tuple[str, ...] = (),
    games_per_pair: int = 4,
    opening_moves: int = 4,
    playouts: int = 32,
    parallel: int = 1,
    seed: int = 0,
    until_separated: bool = False,
    max_games_per_pair: int = 100,
    progress: bool = True,
) -> tuple[Path, list[list]]:
    """Play the tournament, fit ratings, write ``elo.csv``/``elo.md`` and ``elo.png``.

    With several runs (same board, rules and encoder) each run's players are
    named ``RUN.genN`` and the first run's generation 0 is the anchor; the
    runs' generations 0 also play each other, a check that they start level.
    Returns the output directory and the Elo table (rows of ``ELO_COLUMNS``).
    """
    from harness.arena.games import outcomes_of
    from harness.arena.ratings import bradley_terry
    from harness.arena.tournament import TournamentConfig, run_tournament
    from harness.files import save_table

    dirs, configs, out = compared_runs(run_dirs, out)
    settings = [values_of(c, GameSettings) for c in configs]
    points, entries = [], []
    for d, run_config in zip(dirs, configs, strict=True):
        every = generation_points(d)
        picked = select_at_hours(every, hours) if hours else select(every, generations, count)
        if picked[0].generation != 0:
            picked.insert(0, every[0])  # the anchor is always there
        prefix = f"{d.name}." if len(dirs) > 1 else ""
        entries += players_for(picked, d, playouts, run_config.encoder, prefix=prefix)
        points += picked
    anchor = points[0].player
    tournament = TournamentConfig(
        players=entries + list(baselines), out=str(out / "tournament"),
        games_per_pair=games_per_pair, opening_moves=opening_moves, parallel=parallel,
        seed=seed, anchor=anchor, until_separated=until_separated,
        max_games_per_pair=max(max_games_per_pair, games_per_pair), **settings[0],
    )
    rows = run_tournament(tournament, progress=progress)
    names = [name for name, _ in tournament.named_players()]
    ratings = bradley_terry(outcomes_of(rows), names, anchor=anchor)
    interval = ratings.interval()
    elo = {name: (float(ratings.elo[i]), float(interval[i, 0]), float(interval[i, 1]))
           for i, name in enumerate(names)}
    table = [[p.run, p.player, p.generation, p.checkpoint, p.games, p.wall_time_s / 3600.0,
              *elo[p.player]] for p in points]
    table += [["", name, "", "", "", "", *elo[name]] for name in names[len(entries):]]
    save_table(ELO_COLUMNS, table, out / "elo")
    config = configs[0]
    plot_elo_progress(points, elo, names[len(entries):], out / "elo.png",
                      title=f"{', '.join(d.name for d in dirs)}: {config.board_size}x"
                            f"{config.board_size} {config.rules}, "
                            + (f"{playouts} playouts" if playouts else "raw policy, sampled"),
                      anchor=anchor)
    plot_held_out(dirs, out / "heldout.png")
    return out, table


def held_out_rows(run_dir: Path) -> list[dict]:
    """The per-generation stats rows that carry ``[monitor]`` figures."""
    return [row for row in generation_rows(run_dir) if "heldout_top1" in row]


def plot_held_out(run_dirs: list[Path], path: Path) -> Path | None:
    """KL from generation 0, held-out top-1 and value MSE per generation (one
    line per run), and each run's last value calibration, from the runs'
    ``[monitor]`` figures; None without them."""
    runs = {}
    for d in run_dirs:
        rows = held_out_rows(d)
        if rows:  # generation 0 where the run measured it (KL 0 by definition)
            first = rows[0]
            start = {"generation": 0, "heldout_kl_start": 0.0,
                     "heldout_top1": first.get("heldout_top1_start"),
                     "heldout_value_mse": first.get("heldout_value_mse_start")}
            runs[Path(d).name] = [start, *rows] if start["heldout_top1"] is not None else rows
    return draw_held_out(runs, path)


def draw_held_out(runs: dict[str, list[dict]], path: Path) -> Path | None:
    """The held-out panels of :func:`plot_held_out` from rows per run (95%
    bands where the rows carry ``_low``/``_high`` figures)."""
    if not runs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from harness.figures import save_figure

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    panels = (("heldout_kl_start", "KL(gen 0 || gen) of the policy, nats"),
              ("heldout_top1", "held-out top-1"), ("heldout_value_mse", "held-out value MSE"))
    for ax, (key, label) in zip(axes, panels, strict=False):
        for name, rows in runs.items():
            shown = [r for r in rows if r.get(key) is not None]
            generations = [r["generation"] for r in shown]
            line, = ax.plot(generations, [r[key] for r in shown], marker=".", label=name)
            if shown and f"{key}_low" in shown[0]:
                ax.fill_between(generations, [r[f"{key}_low"] for r in shown],
                                [r[f"{key}_high"] for r in shown], alpha=0.2,
                                color=line.get_color())
        ax.set_xlabel("generation")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
    draw_calibration(axes[3], {f"{name} gen {rows[-1]['generation']}":
                               rows[-1].get("heldout_calibration") or []
                               for name, rows in runs.items()},
                     "value calibration, last generation")
    axes[0].legend(fontsize="small")
    return save_figure(fig, path, dpi=110)


HELD_OUT_COLUMNS = ("run", "generation", "heldout_kl_start", "heldout_top1", "heldout_top1_low",
                    "heldout_top1_high", "heldout_value_mse", "heldout_value_mse_low",
                    "heldout_value_mse_high")


def remeasure_held_out(run_dirs: str | Path | list[str | Path], data: str | Path,
                       positions: int, out: str | Path | None = None
                       ) -> tuple[Path, list[list]]:
    """Every saved generation of every run measured on ``positions`` spread
    over ``data``'s validation games: ``OUT/heldout.csv`` and
    ``OUT/heldout.png``, with 95% intervals. Returns the directory and the
    table (rows of ``HELD_OUT_COLUMNS``)."""
    from harness.files import save_table
    from harness.rl.monitor import held_out_positions, remeasure_run

    dirs, configs, out = compared_runs(run_dirs, out)
    held = held_out_positions(data, positions, encoder=configs[0].encoder,
                              board_size=configs[0].board_size)
    runs = {d.name: remeasure_run(d, held) for d in dirs}
    table = [[row[c] for c in HELD_OUT_COLUMNS] for rows in runs.values() for row in rows]
    save_table(HELD_OUT_COLUMNS, table, out / "heldout")
    draw_held_out({name: rows for name, rows in runs.items() if rows}, out / "heldout.png")
    return out, table


def plot_elo_progress(points: list[Point], elo: dict[str, tuple[float, float, float]],
                      baselines: list[str], path: Path, title: str = "",
                      anchor: str = ANCHOR) -> Path:
    """Elo (95% interval) against self-play games and against wall time, one
    line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from harness.figures import save_figure

    runs = list(dict.fromkeys(p.run for p in points))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    x_axes = (("self-play games", lambda p: p.games),
              ("self-play + training time (hours)", lambda p: p.wall_time_s / 3600.0))
    for ax, (label, x_of) in zip(axes, x_axes, strict=True):
        for run in runs:
            mine = [p for p in points if p.run == run]
            y = np.array([elo[p.player][0] for p in mine])
            err = np.array([[elo[p.player][0] - elo[p.player][1] for p in mine],
                            [elo[p.player][2] - elo[p.player][0] for p in mine]])
            ax.errorbar([x_of(p) for p in mine], y, yerr=err, marker="o", capsize=3,
                        label=run if len(runs) > 1 else "self-play net")
        right = max(x_of(p) for p in points)
        for name in baselines:
            value = elo[name][0]
            if math.isfinite(value):
                ax.axhline(value, linestyle="--", linewidth=0.9, color="grey")
                ax.annotate(name, (right, value), fontsize=8, va="bottom", ha="right")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    if len(runs) > 1:
        axes[0].legend(fontsize="small")
    # Two lines: a run-prefixed anchor name is longer than the axis is tall.
    axes[0].set_ylabel(f"Elo (Bradley-Terry, 95% interval)\n{anchor} = 0")
    if title:
        fig.suptitle(title)
    return save_figure(fig, path, dpi=120)


def draw_calibration(ax, bins: dict[str, list[list]], title: str) -> None:
    """Mean outcome against mean prediction per bin of
    :func:`harness.rl.monitor.calibration_bins`, a line per name; the
    diagonal is a calibrated value."""
    ax.plot([-1, 1], [-1, 1], color="grey", linewidth=0.8, linestyle="--")
    for name, rows in bins.items():
        ax.plot([b[1] for b in rows], [b[2] for b in rows], marker="o", label=name)
    ax.set_xlabel("predicted value (bin mean)")
    ax.set_ylabel("mean outcome")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
