"""Pinned gating matches give the same games, move for move.

``fixtures/gating/games.json`` was written by the gating loop as it stood
before gating moved onto the self-play driver (``search.game_driver``), so
this test holds the driver to the games the old loop played: the order the
slots are refilled in, who moves with which search, the opening moves drawn
at temperature, the move cap and the SPRT's early stop. The evaluators are
the rules-based oracles (no network, no floating-point drift between
machines). ``python tests/test_gating_games.py`` rewrites the fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "gating" / "games.json"
SIZE = 5


def strong():
    from harness.search.oracle import OracleEvaluator

    return OracleEvaluator(SIZE, value="area", priors="pattern", komi=0.5)


def weak():
    from harness.search.oracle import OracleEvaluator

    return OracleEvaluator(SIZE, value="material")


def blind():
    from harness.search.oracle import OracleEvaluator

    return OracleEvaluator(SIZE, value="zero")


def matches():
    """Name -> (candidate, best, games, keywords) of each pinned match."""
    from harness.arena.sprt import SPRT

    common = {"size": SIZE, "komi": 0.5, "rules": "superko"}
    return {
        "threshold": (strong, weak, 6, {**common, "playouts": 12, "parallel": 3, "seed": 7}),
        "reversed": (weak, strong, 5, {**common, "playouts": 16, "parallel": 2, "seed": 3}),
        "move-cap": (strong, strong, 4, {**common, "playouts": 8, "parallel": 2, "seed": 5,
                                         "max_moves": 9}),
        "sprt": (strong, blind, 40, {**common, "playouts": 24, "parallel": 4, "seed": 1,
                                    "sprt": SPRT(0.0, 35.0, 0.05, 0.05)}),
    }


def play(name: str) -> dict:
    from harness.rl.gating import play_match

    candidate, best, games, kw = matches()[name]
    played = {}

    def on_game(number, game, colour):
        played[number] = [colour, [int(m) for _, m in game.moves], _result(game)]

    result = play_match(candidate(), best(), games, on_game=on_game, **kw)
    return {"result": [result.games, result.wins, result.moves, result.draws],
            "games": [[n, *played[n]] for n in sorted(played)]}


def _result(game) -> list:
    result = game.result()
    return [result.winner, result.kind, result.margin]


@pytest.fixture(scope="module")
def expected():
    return json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("name", sorted(matches()))
def test_a_pinned_gating_match_plays_the_recorded_games(name, expected):
    got = play(name)
    want = expected[name]
    assert got["result"] == want["result"]
    assert got["games"] == want["games"]


def test_the_recorded_matches_cover_what_the_loop_does(expected):
    games = {name: m["games"] for name, m in expected.items()}
    assert {colour for _, colour, _, _ in games["threshold"]} == {1, 2}  # both colours
    assert all(len(moves) == 9 for _, _, moves, _ in games["move-cap"])  # the cap stops them
    assert expected["sprt"]["result"][0] < 40  # the SPRT stopped the match early
    # More games than slots: finished slots were refilled.
    assert len(games["threshold"]) == 6 and len(games["reversed"]) == 5


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps({name: play(name) for name in sorted(matches())}) + "\n")
    print(f"wrote {FIXTURE}")
