"""Tournament tables from a small, hand-counted set of results."""

import numpy as np
import pytest

from harness.arena.plots import plot_elo, plot_win_matrix
from harness.arena.ratings import Outcome
from harness.arena.tables import (
    clock_table,
    colour_table,
    games_matrix,
    ranking_table,
    win_matrix,
    write_table,
)

PLAYERS = ["gnugo", "net", "random"]
# net beats random 2-0, gnugo beats net 1.5-0.5 (one draw), gnugo beats random as Black.
GAMES = [
    Outcome("net", "random", 1.0),
    Outcome("random", "net", 0.0),
    Outcome("gnugo", "net", 1.0),
    Outcome("net", "gnugo", 0.5),
    Outcome("gnugo", "random", 1.0),
]


def test_win_matrix_counts_points_from_both_colours():
    m = win_matrix(GAMES, PLAYERS)
    assert m.loc["net", "random"] == 1.0
    assert m.loc["random", "net"] == 0.0
    assert m.loc["gnugo", "net"] == pytest.approx(0.75)
    assert np.isnan(m.loc["net", "net"])
    assert games_matrix(GAMES, PLAYERS).loc["gnugo", "net"] == 2


def test_colour_table_splits_black_and_white():
    t = colour_table(GAMES, PLAYERS).set_index("player")
    assert t.loc["net", "games_black"] == 2 and t.loc["net", "win_rate_black"] == 0.75
    assert t.loc["net", "games_white"] == 2 and t.loc["net", "win_rate_white"] == 0.5


def test_clock_table_adds_each_player_s_thinking_over_its_games():
    sides = [("net", 3.0, 30), ("gnugo", 1.0, 29), ("net", 1.5, 20), ("gnugo", 0.5, 21),
             ("idle", 0.0, 0)]
    t = clock_table(sides, ["net", "gnugo", "idle"]).set_index("player")
    assert t["moves"].tolist() == [50, 50, 0]
    assert t.loc["net", "seconds_per_move"] == pytest.approx(4.5 / 50)
    assert t.loc["gnugo", "seconds_per_move"] == pytest.approx(1.5 / 50)
    assert np.isnan(t.loc["idle", "seconds_per_move"])  # no move chosen: no pace


def test_ranking_orders_players_and_reports_win_rates():
    r = ranking_table(GAMES, PLAYERS, anchor="random")
    assert list(r["player"]) == ["gnugo", "net", "random"]
    net = r.set_index("player").loc["net"]
    assert net["games"] == 4 and net["win_rate"] == pytest.approx(2.5 / 4)
    assert (r["elo_low"] <= r["elo"]).all() and (r["elo"] <= r["elo_high"]).all()


def test_tables_and_plots_are_written(tmp_path):
    r = ranking_table(GAMES, PLAYERS)
    write_table(r, tmp_path / "ranking")
    for suffix in (".csv", ".md", ".html"):
        assert (tmp_path / f"ranking{suffix}").stat().st_size > 0
    assert "| rank" in (tmp_path / "ranking.md").read_text()
    assert plot_elo(r, tmp_path / "elo.png").stat().st_size > 1000
    assert plot_win_matrix(win_matrix(GAMES, PLAYERS), tmp_path / "wins.png").stat().st_size > 1000


def test_saved_tables_keep_a_dotted_stem_whole(tmp_path):
    """A bench saved as ``--save bench-a0.6.64`` must not land in ``bench-a0.6.csv``."""
    from harness.files import save_table

    save_table(["model", "moves/s"], [["a0.6.64", 246]], tmp_path / "bench-a0.6.64")
    write_table(ranking_table(GAMES, PLAYERS), tmp_path / "ranking-v0.2")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bench-a0.6.64.csv", "bench-a0.6.64.md",
        "ranking-v0.2.csv", "ranking-v0.2.html", "ranking-v0.2.md"]
    saved = (tmp_path / "bench-a0.6.64.csv").read_text().splitlines()
    assert saved == ["model,moves/s", "a0.6.64,246"]
