"""SGF written by the harness, read by ``@sabaki/sgf``: the parser of the
Sabaki editor, run under Node (``make test`` installs it into
``tests/js/node_modules`` from ``tests/js/package.json``).

Every writer is covered: a refereed game, a tournament's games, the arena's
self-play data generation and RL self-play. Sabaki must see the same board
size, komi, result, players, setup stones and main-line moves that the
harness played.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import api
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.sgf.record import parse_sgf_bytes
from harness.sgf.writer import write_sgf

JS = Path(__file__).resolve().parent / "js"
SABAKI = JS / "node_modules" / "@sabaki" / "sgf"


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.skip("Node.js not installed (needed to run @sabaki/sgf)")
    if not SABAKI.is_dir():
        pytest.skip("@sabaki/sgf not installed ('make test' runs npm ci in tests/js)")
    return path


def sabaki_read(node: str, *paths: Path) -> dict[Path, list[dict]]:
    done = subprocess.run(
        [node, str(JS / "main_lines.js"), *map(str, paths)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    return {Path(k): v for k, v in json.loads(done.stdout).items()}


def as_sabaki(moves, size: int) -> list[list]:
    """Harness moves (colour, point) in Sabaki's terms: ["B", [x, y]], pass null."""
    out = []
    for color, point in moves:
        vertex = None if point == size * size else [point % size, point // size]
        out.append(["B" if color == BLACK else "W", vertex])
    return out


def test_a_refereed_game_reads_the_same_in_sabaki(node, tmp_path):
    played = api.play_game("random", "uct:8", size=9, komi=6.5, seed=4,
                           sgf_path=tmp_path / "game.sgf")
    (game,) = sabaki_read(node, tmp_path / "game.sgf")[tmp_path / "game.sgf"]
    assert game["size"] == 9 and game["komi"] == 6.5
    assert game["result"] == played.result.to_sgf()
    assert (game["black"], game["white"]) == ("random", "uct:8")
    assert game["moves"] == as_sabaki(played.moves, 9)
    assert len(game["moves"]) > 20


def test_setup_stones_escapes_and_non_ascii_names_survive(node, tmp_path):
    game = Game(13, 0.5)
    game.setup(black=[3 * 13 + 3, 9 * 13 + 9], white=[6 * 13 + 6])
    game.play(0, WHITE)
    game.play(13 * 13, BLACK)  # a pass
    name = "Honinbō Dōsaku ]\\ [x]"
    path = write_sgf(game, tmp_path / "setup.sgf", black=name, white="白")
    (read,) = sabaki_read(node, path)[path]
    assert read["black"] == name and read["white"] == "白"
    assert sorted(read["setup"]["black"]) == [[3, 3], [9, 9]]
    assert read["setup"]["white"] == [[6, 6]]
    assert read["moves"] == [["W", [0, 0]], ["B", None]]


def test_tournament_games_read_the_same_in_sabaki(node, tmp_path):
    result = api.tournament(["a=random", "b=uct:4"], out=tmp_path / "t", board_size=9,
                            games_per_pair=2, seed=7)
    paths = [Path(row.sgf) if Path(row.sgf).is_absolute() else tmp_path / "t" / row.sgf
             for row in result.rows]
    read = sabaki_read(node, *paths)
    for row, path in zip(result.rows, paths, strict=True):
        (game,) = read[path]
        ours = parse_sgf_bytes(path.read_bytes())[0]
        assert game["moves"] == as_sabaki(ours.moves, 9)
        assert len(game["moves"]) == row.moves
        assert game["result"] == row.result
        assert {game["black"], game["white"]} == {"a", "b"}


def test_datagen_self_play_games_read_the_same_in_sabaki(node, tmp_path):
    from harness.arena.datagen import DatagenConfig, generate

    rows = generate(DatagenConfig(player="random", games=2, out=str(tmp_path / "gen"),
                                  board_size=9, seed=2), progress=False)
    paths = sorted((tmp_path / "gen").rglob("*.sgf"))
    assert len(paths) == 2
    read = sabaki_read(node, *paths)
    for path in paths:
        (game,) = read[path]
        assert game["moves"] == as_sabaki(parse_sgf_bytes(path.read_bytes())[0].moves, 9)
    assert sorted(len(read[p][0]["moves"]) for p in paths) == sorted(r.moves for r in rows)


def test_rl_self_play_games_read_the_same_in_sabaki(node, tmp_path):
    from harness.rl.selfplay import _write_sgf  # the writer RL generations use
    from harness.search import BatchedSearch, MCTSConfig
    from harness.search.game_driver import play_games
    from harness.search.oracle import OracleEvaluator

    search = BatchedSearch(OracleEvaluator(9, value="area", komi=7.0),
                           MCTSConfig(playouts=8, leaves_per_game=4), games=2, seed=3)
    records = play_games(search, 2, komi=7.0, seed=3, max_moves=60)
    paths = []
    for i, record in enumerate(records):
        paths.append(tmp_path / f"game-{i}.sgf")
        _write_sgf(record, paths[-1], generation=0, player="oracle")
    read = sabaki_read(node, *paths)
    for record, path in zip(records, paths, strict=True):
        (game,) = read[path]
        assert game["moves"] == as_sabaki(record.game.moves, 9)
        assert game["result"] == record.result.to_sgf()
