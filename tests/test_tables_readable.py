"""Tournament tables as people read them: units in the headers, no float noise."""

import math

import pandas as pd

from harness.arena.ratings import Outcome
from harness.arena.tables import ranking_table, readable_matrix, readable_ranking, write_table


def test_readable_ranking_rounds_away_noise_and_names_units():
    machine = pd.DataFrame([
        {"rank": 1, "player": "net", "elo": 187.6449, "elo_low": 12.6, "elo_high": 362.71,
         "elo_se": 89.33, "games": 12, "win_rate": 0.41666667, "win_rate_se": 0.1423,
         "los_next": 0.97512, "sequential_elo": 44.8},
        {"rank": 2, "player": "gnugo", "elo": -5.79e-14, "elo_low": -0.4, "elo_high": 9.64e-15,
         "elo_se": 0.0, "games": 12, "win_rate": 1.0, "win_rate_se": 0.0,
         "los_next": math.nan, "sequential_elo": -44.8},
    ])
    table = readable_ranking(machine)
    assert list(table.columns) == [
        "rank", "player", "Elo", "Elo 95% low", "Elo 95% high", "Elo s.e.", "games",
        "win rate (%)", "win rate s.e. (%)", "LOS over next (%)", "sequential Elo (K=16)"]
    assert table.iloc[0].tolist() == [1, "net", "188", "13", "363", "89", 12, "41.7", "14.2",
                                      "97.5", "45"]
    # The anchor shows 0, never -5.79e-14 or -0; a missing LOS shows nothing.
    assert table.iloc[1].tolist() == [2, "gnugo", "0", "0", "0", "0", 12, "100.0", "0.0", "",
                                      "-45"]


def test_written_tables_keep_digits_in_csv_and_units_in_markdown(tmp_path):
    games = [Outcome("a", "b", 1.0), Outcome("b", "a", 0.0), Outcome("a", "b", 0.5)]
    ranking = ranking_table(games, ["a", "b"], anchor="b")
    write_table(ranking, tmp_path / "ranking", display=readable_ranking(ranking))
    csv = pd.read_csv(tmp_path / "ranking.csv")
    assert csv.loc[csv.player == "b", "elo"].item() == 0.0
    assert csv.loc[csv.player == "a", "win_rate"].item() == 2.5 / 3
    md = (tmp_path / "ranking.md").read_text()
    assert "| Elo " in md and "win rate (%)" in md and "83.3" in md and "e-1" not in md


def test_win_matrix_in_whole_percent():
    matrix = pd.DataFrame([[math.nan, 0.8333], [0.1667, math.nan]], index=["a", "b"],
                          columns=["a", "b"])
    shown = readable_matrix(matrix, "row's score (%)")
    assert shown.loc["a", "b"] == "83" and shown.loc["b", "a"] == "17" and shown.loc["a", "a"] == ""
    assert shown.index.name == "row's score (%)"
