"""``harness.api``: the examples of ``docs/api.md`` run exactly as written,
and the functions give the answers the command line gives."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from harness import api
from harness.arena.ratings import Outcome

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def doc_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def run_example(code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code)
    runpy.run_path(str(script), run_name="__main__")


def test_the_docs_have_both_examples_and_every_api_function_is_documented():
    examples = doc_examples()
    assert len(examples) == 2
    text = DOC.read_text()
    for name in api.__all__:
        if name[0].islower():
            assert f"`{name}(" in text, name


def test_games_matches_and_ratings_example_runs(tmp_path, capsys):
    run_example(doc_examples()[0], tmp_path)
    out = capsys.readouterr().out
    assert "6 games" in out
    assert re.search(r"^uct40\s+[+-]\d", out, flags=re.M)


@pytest.mark.slow
def test_datasets_models_and_evaluation_example_runs(tmp_path, capsys):
    run_example(doc_examples()[1], tmp_path)
    out = capsys.readouterr().out
    assert "8 games," in out and "policy accuracy" in out


def test_play_game_writes_the_sgf_the_referee_played(tmp_path):
    from harness.sgf.record import parse_sgf_bytes

    game = api.play_game("random", "random", size=9, seed=5, sgf_path=tmp_path / "g.sgf")
    record = parse_sgf_bytes((tmp_path / "g.sgf").read_bytes())[0]
    assert record.moves == game.moves and record.size == 9
    assert record.result == game.result


def test_rate_reads_outcomes_rows_and_played_games_alike():
    # Three wins of A over B and one loss: A ahead, by the same fit the CLI uses.
    outcomes = [Outcome("A", "B", 1.0), Outcome("B", "A", 0.0), Outcome("A", "B", 1.0),
                Outcome("B", "A", 1.0)]
    ratings = api.rate(outcomes, anchor="B")
    elo = dict(zip(ratings.players, ratings.elo, strict=True))
    assert elo["B"] == 0.0 and elo["A"] > 50
    rows = [api.GameRow("g1", "A", "B", "A", 1.0, "B+R", "resign", 10, 0.1),
            api.GameRow("g2", "A", "B", None, None, "?", "error", 0, 0.0, error="crash")]
    assert api.rate(rows).players == ["A", "B"]


def test_players_from_specs_are_made_and_closed_but_objects_are_left_open():
    player = api.make_player("random", seed=1)
    game = api.play_game(player, "random", size=9, seed=2)
    assert game.black == player.name and game.result.known
    assert api.play_game(player, "random", size=9, seed=3).result.known  # still usable
