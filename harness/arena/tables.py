"""Tournament tables: ranking with Elo intervals, pairwise win matrix, colours.

Every table is a pandas DataFrame so that one function writes it as CSV,
Markdown and HTML, and the report embeds the same numbers it prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from harness.arena.ratings import Outcome, Ratings, bradley_terry, sequential_elo, win_rate
from harness.files import atomic_write, with_extension


def ranking_table(
    outcomes: Sequence[Outcome],
    players: Sequence[str],
    ratings: Ratings | None = None,
    *,
    anchor: str | None = None,
) -> pd.DataFrame:
    """Players strongest first: Elo, 95% interval, games, win rate and its s.e.

    ``LOS next`` is the likelihood that a player is stronger than the one
    ranked just below it.
    """
    ratings = ratings or bradley_terry(outcomes, players, anchor=anchor)
    seq = sequential_elo(outcomes, players)
    bounds = ratings.interval(0.95)
    rows = []
    order = ratings.ranking()
    for rank, i in enumerate(order):
        name = ratings.players[i]
        games = [g for g in outcomes if name in (g.black, g.white)]
        points = sum(g.score if g.black == name else 1 - g.score for g in games)
        rate, se = win_rate(points, len(games))
        below = order[rank + 1] if rank + 1 < len(order) else None
        los = (
            ratings.likelihood_of_superiority(name, ratings.players[below])
            if below is not None
            else float("nan")
        )
        rows.append(
            {
                "rank": rank + 1,
                "player": name,
                "elo": ratings.elo[i],
                "elo_low": bounds[i, 0],
                "elo_high": bounds[i, 1],
                "elo_se": ratings.stderr()[i],
                "games": len(games),
                "win_rate": rate,
                "win_rate_se": se,
                "los_next": los,
                "sequential_elo": seq.get(name, 0.0),
            }
        )
    return pd.DataFrame(rows)


def win_matrix(outcomes: Sequence[Outcome], players: Sequence[str]) -> pd.DataFrame:
    """Row player's points against the column player, as a fraction of their games."""
    n = len(players)
    index = {p: i for i, p in enumerate(players)}
    points = np.zeros((n, n))
    games = np.zeros((n, n))
    for g in outcomes:
        b, w = index[g.black], index[g.white]
        points[b, w] += g.score
        points[w, b] += 1 - g.score
        games[b, w] += 1
        games[w, b] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(games > 0, points / np.maximum(games, 1), np.nan)
    return pd.DataFrame(frac, index=list(players), columns=list(players))


def games_matrix(outcomes: Sequence[Outcome], players: Sequence[str]) -> pd.DataFrame:
    index = {p: i for i, p in enumerate(players)}
    games = np.zeros((len(players), len(players)), dtype=int)
    for g in outcomes:
        games[index[g.black], index[g.white]] += 1
        games[index[g.white], index[g.black]] += 1
    return pd.DataFrame(games, index=list(players), columns=list(players))


def colour_table(outcomes: Sequence[Outcome], players: Sequence[str]) -> pd.DataFrame:
    """Each player's results as Black and as White (first-move advantage shows here)."""
    rows = []
    for name in players:
        as_black = [g.score for g in outcomes if g.black == name]
        as_white = [1 - g.score for g in outcomes if g.white == name]
        rows.append(
            {
                "player": name,
                "games_black": len(as_black),
                "win_rate_black": np.mean(as_black) if as_black else float("nan"),
                "games_white": len(as_white),
                "win_rate_white": np.mean(as_white) if as_white else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def clock_table(turns: Sequence[tuple[str, float, int]], players: Sequence[str]) -> pd.DataFrame:
    """Each player's own thinking time per move, from ``(player, seconds, moves)``
    per game side: a search's pace set against an engine's (GNU Go has no
    playout count to state its budget in)."""
    rows = []
    for name in players:
        seconds = sum(s for who, s, _ in turns if who == name)
        moves = sum(n for who, _, n in turns if who == name)
        rows.append({"player": name, "moves": moves, "seconds": seconds,
                     "seconds_per_move": seconds / moves if moves else float("nan")})
    return pd.DataFrame(rows)


# Columns of the ranking as people read them: header with its unit, digits kept.
READABLE_RANKING = {
    "rank": ("rank", None),
    "player": ("player", None),
    "elo": ("Elo", 0),
    "elo_low": ("Elo 95% low", 0),
    "elo_high": ("Elo 95% high", 0),
    "elo_se": ("Elo s.e.", 0),
    "games": ("games", None),
    "win_rate": ("win rate (%)", 1),
    "win_rate_se": ("win rate s.e. (%)", 1),
    "los_next": ("LOS over next (%)", 1),
    "sequential_elo": ("sequential Elo (K=16)", 0),
}
READABLE_COLOURS = {
    "player": ("player", None),
    "games_black": ("games as Black", None),
    "win_rate_black": ("win rate as Black (%)", 1),
    "games_white": ("games as White", None),
    "win_rate_white": ("win rate as White (%)", 1),
}
READABLE_CLOCK = {
    "player": ("player", None),
    "moves": ("moves chosen", None),
    "seconds": ("thinking (s)", 1),
    "seconds_per_move": ("seconds per move", 3),
}
READABLE_UNRESOLVED = {
    "higher": ("higher", None),
    "lower": ("lower", None),
    "los": ("LOS (%)", 1),
    "games": ("games between them", None),
}
PERCENT_COLUMNS = {"win_rate", "win_rate_se", "los_next", "win_rate_black", "win_rate_white",
                   "los"}


def readable(frame: pd.DataFrame, columns: dict[str, tuple[str, int | None]]) -> pd.DataFrame:
    """A table as people read it: units in the headers, fractions as percentages,
    Elo in whole points, and no float noise (an anchor at -5.8e-14 shows 0).

    ``columns`` maps a column to its header and its decimals (None: as is);
    columns it does not name are dropped. Numbers become fixed-point text, so
    every printer (Markdown, HTML, the terminal, the report) shows the same.
    """
    from harness.stats.numbers import fmt_number

    out = {}
    for key, (header, digits) in columns.items():
        if key not in frame:
            continue
        values = frame[key]
        if digits is not None:
            scale = 100.0 if key in PERCENT_COLUMNS else 1.0
            values = values.map(lambda v, d=digits, k=scale: fmt_number(float(v) * k, d))
        out[header] = values
    return pd.DataFrame(out)


def readable_ranking(frame: pd.DataFrame) -> pd.DataFrame:
    return readable(frame, READABLE_RANKING)


def readable_matrix(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """A player-by-player matrix of fractions in whole percent; ``what`` names the
    cells and their unit in the corner header."""
    from harness.stats.numbers import fmt_number

    out = frame.map(lambda v: fmt_number(100.0 * float(v), 0))
    out.index.name = what
    return out


def write_table(
    frame: pd.DataFrame,
    stem: str | Path,
    *,
    index: bool = False,
    display: pd.DataFrame | None = None,
    notes: Sequence[str] = (),
) -> None:
    """``stem.csv`` (every digit, for programs), ``stem.md`` and ``stem.html``
    (``display``, or the numbers to 3 decimals, for people, followed by the
    sentences of ``notes``), each written atomically."""
    import html

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    rounded = frame.round(3) if display is None else display
    texts = {
        ".csv": frame.to_csv(index=index),
        ".md": _markdown(rounded, index) + "".join(f"\n{note}\n" for note in notes),
        ".html": rounded.to_html(index=index, na_rep="", border=0)
        + "".join(f"\n<p>{html.escape(note)}</p>" for note in notes),
    }
    for suffix, text in texts.items():
        atomic_write(with_extension(stem, suffix), text)


def _markdown(frame: pd.DataFrame, index: bool) -> str:
    """Markdown through the harness table printer (pandas would need ``tabulate``)."""
    from harness.files import format_table

    data = frame.reset_index() if index else frame
    rows = [["" if pd.isna(v) else v for v in row] for row in data.itertuples(index=False)]
    return format_table([str(c) for c in data.columns], rows) + "\n"
