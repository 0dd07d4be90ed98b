"""SGF out: round trips through our reader, sgfmill and GNU Go."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sgfmill import sgf as sgfmill_sgf

from harness.bench.sgf import generated_sgf
from harness.game.geometry import BLACK, WHITE, point_to_gtp
from harness.game.position import Game
from harness.game.result import GameResult
from harness.sgf import SetupEvent, parse_sgf_bytes, replay, to_sgf, write_sgf
from harness.sgf.record import GameRecord

GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if Path("/usr/games/gnugo").exists() else None)


def sample_record() -> GameRecord:
    record = GameRecord("<test>", 0, size=9, komi=6.5, handicap=2, rules="Chinese")
    record.black, record.white = "柯洁 ]", "AlphaGo \\ Master"
    record.black_rank, record.white_rank, record.date = "9d", "9d", "2017-05-23"
    record.setup_black = [20, 60]
    record.moves = [(WHITE, 40), (BLACK, 81), (WHITE, 30), (BLACK, 50)]
    record.setup_events = [SetupEvent(3, black=[], white=[70], empty=[30])]
    record.comments = {0: "tengen ] (first)", 3: "多行\ncomment"}
    record.result = GameResult(WHITE, "score", 0.5)
    record.properties = {"GN": "Future of Go", "AP": "dropped: the writer names itself"}
    return record


def test_record_round_trip():
    record = sample_record()
    text = to_sgf(record)
    assert text.startswith("(;FF[4]GM[1]CA[UTF-8]AP[go-harness:")
    (back,) = parse_sgf_bytes(text.encode("utf-8"), keep_comments=True)
    assert back.reject is None
    for attr in ("size", "komi", "handicap", "rules", "result", "black", "white", "date"):
        assert getattr(back, attr) == getattr(record, attr), attr
    assert (back.black_rank, back.white_rank) == ("9d", "9d")
    assert sorted(back.setup_black) == sorted(record.setup_black)
    assert back.moves == record.moves
    assert back.setup_events == record.setup_events
    assert back.comments == record.comments
    assert back.properties["GN"] == "Future of Go"
    assert back.properties["AP"].startswith("go-harness:")


def test_game_round_trip_reads_back_to_the_same_game(tmp_path):
    (record,) = parse_sgf_bytes(generated_sgf(1, size=9, seed=3))
    game = replay(record)
    assert sum(game.captures) > 0  # a game with captures, not just stones placed
    path = write_sgf(game, tmp_path / "games" / "g1.sgf", black="random", white="random")
    assert [p.name for p in path.parent.iterdir()] == ["g1.sgf"]  # no temporary left behind
    (back,) = parse_sgf_bytes(path.read_bytes())
    again = replay(back)
    assert again.moves == game.moves
    assert np.array_equal(np.array(again.history), np.array(game.history))
    assert back.result == game.result()
    assert back.black == "random" and back.rules == "koPOSITIONALscoreAREAsui0"


def test_handicap_game_from_a_game_object_keeps_its_setup():
    game = Game(9, 0.5)
    game.setup(black=[20, 60])
    game.play(40, WHITE)
    (back,) = parse_sgf_bytes(to_sgf(game).encode())
    assert sorted(back.setup_black) == [20, 60] and back.moves == [(WHITE, 40)]


def test_sgfmill_reads_what_we_write():
    record = sample_record()
    record.setup_events = []
    game = sgfmill_sgf.Sgf_game.from_bytes(to_sgf(record).encode())
    assert game.get_size() == 9 and game.get_komi() == 6.5
    assert game.get_player_name("b") == "柯洁 ]"
    assert game.get_player_name("w") == "AlphaGo \\ Master"
    root = game.get_root()
    assert root.get("RE") == "W+0.5" and root.get("HA") == 2
    moves = [node.get_move() for node in game.get_main_sequence()[1:]]
    expected = [
        ("w" if c == WHITE else "b", None if p == 81 else (8 - p // 9, p % 9))
        for c, p in record.moves
    ]
    assert moves == expected


def test_write_is_atomic_and_replaces(tmp_path):
    path = tmp_path / "x.sgf"
    path.write_text("old")
    write_sgf(sample_record(), path)
    assert path.read_text(encoding="utf-8").startswith("(;FF[4]")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.sgf"]


@pytest.mark.gnugo
@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed")
def test_gnu_go_loads_our_sgf_to_the_same_position(tmp_path):
    (record,) = parse_sgf_bytes(generated_sgf(1, size=9, seed=11))
    game = replay(record)
    path = write_sgf(game, tmp_path / "game.sgf")
    commands = f"loadsgf {path}\nlist_stones black\nlist_stones white\nquit\n"
    out = subprocess.run(
        [GNUGO, "--mode", "gtp"], input=commands, capture_output=True, text=True, timeout=60
    ).stdout
    replies = [r.strip() for r in out.split("\n\n") if r.strip()]
    assert replies[0].startswith("=")
    black = set(replies[1].lstrip("= ").split())
    white = set(replies[2].lstrip("= ").split())
    ours = game.stones
    assert black == {point_to_gtp(p, 9) for p in np.flatnonzero(ours == BLACK)}
    assert white == {point_to_gtp(p, 9) for p in np.flatnonzero(ours == WHITE)}
