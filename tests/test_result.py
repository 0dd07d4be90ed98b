"""Game results: every RE form real records use, and back to SGF."""

from __future__ import annotations

import pytest

from harness.game.geometry import BLACK, WHITE
from harness.game.result import GameResult, parse_result, result_from_score


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B+R", GameResult(BLACK, "resign")),
        ("W+Resign", GameResult(WHITE, "resign")),
        ("b+resignation", GameResult(BLACK, "resign")),
        ("W+T", GameResult(WHITE, "time")),
        ("B+Time", GameResult(BLACK, "time")),
        ("W+F", GameResult(WHITE, "forfeit")),
        ("B+12.5", GameResult(BLACK, "score", 12.5)),
        (" W + 0.5 ", GameResult(WHITE, "score", 0.5)),
        ("W+-3", GameResult(WHITE, "score", 3.0)),
        ("B+", GameResult(BLACK, "score", None)),
        ("B+lots", GameResult(BLACK, "score", None)),
        ("0", GameResult(0, "draw")),
        ("Draw", GameResult(0, "draw")),
        ("Jigo", GameResult(0, "draw")),
        ("B+0", GameResult(0, "draw")),
        ("Void", GameResult(0, "void")),
        ("void (disconnected)", GameResult(0, "void")),
        ("?", GameResult(0, "unknown")),
        ("", GameResult(0, "unknown")),
        (None, GameResult(0, "unknown")),
        ("black won", GameResult(0, "unknown")),
    ],
)
def test_parse_result(text, expected):
    assert parse_result(text) == expected


@pytest.mark.parametrize(
    ("result", "sgf"),
    [
        (GameResult(BLACK, "score", 3.5), "B+3.5"),
        (GameResult(WHITE, "score", 12.0), "W+12"),
        (GameResult(WHITE, "resign"), "W+R"),
        (GameResult(BLACK, "time"), "B+T"),
        (GameResult(WHITE, "forfeit"), "W+F"),
        (GameResult(0, "draw"), "0"),
        (GameResult(0, "void"), "Void"),
        (GameResult(0, "unknown"), "?"),
        (GameResult(WHITE, "score", None), "W+"),
    ],
)
def test_to_sgf_round_trips(result, sgf):
    assert result.to_sgf() == sgf
    assert parse_result(sgf) == result


def test_a_win_without_margin_is_not_written_as_a_draw():
    """NoGo wins have no margin; "W+0" would read back as a draw (a bug before)."""
    result = GameResult(WHITE, "score", None)
    assert parse_result(result.to_sgf()).winner == WHITE


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (6.5, GameResult(BLACK, "score", 6.5)),
        (-0.5, GameResult(WHITE, "score", 0.5)),
        (0.0, GameResult(0, "draw")),
    ],
)
def test_result_from_score(score, expected):
    assert result_from_score(score) == expected


def test_value_for_each_colour():
    win = GameResult(BLACK, "score", 1.5)
    assert (win.value_for(BLACK), win.value_for(WHITE)) == (1.0, -1.0)
    assert GameResult(0, "draw").value_for(BLACK) == 0.0
    assert GameResult(0, "unknown").value_for(WHITE) == 0.0
    assert GameResult(0, "draw").known and not GameResult(0, "void").known
