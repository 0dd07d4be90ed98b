"""Input encoders on known positions: ASCII boards in, the planes they must give out."""

from __future__ import annotations

import numpy as np
import pytest

from harness.features import encoder_names, get_encoder, history_window
from harness.features.strings import liberty_map
from harness.game.geometry import BLACK, WHITE, gtp_to_point, point_to_gtp
from harness.game.position import Game

ALL = ["agz17", "cazenave21", "qiqiao10", "mao3", "nogo"]


def plane(x: np.ndarray, name: str, encoder: str) -> np.ndarray:
    """The channel of ``x`` whose registered name is ``name``, as a 2-D 0/1 int board."""
    return x[..., get_encoder(encoder).plane_names.index(name)].astype(int)


def points_of(board: np.ndarray) -> set[str]:
    size = board.shape[0]
    return {point_to_gtp(int(p), size) for p in np.flatnonzero(board.ravel())}


def name(who: str, t: int) -> str:
    """Name of a history plane: ``who`` is "own" or "opponent", ``t`` positions back."""
    return f"{who} stones t-{t}" if t else f"{who} stones now"


def game_after(size: int, moves: str) -> Game:
    """A game after GTP moves, alternating from Black (``pass`` allowed)."""
    game = Game(size)
    for vertex in moves.split():
        game.play(gtp_to_point(vertex, size))
    return game


# --- registry and contract ---------------------------------------------------


def test_registry_lists_every_encoder_and_rejects_unknown_names():
    assert encoder_names() == ALL
    with pytest.raises(ValueError, match="agz17, cazenave21, qiqiao10, mao3, nogo"):
        get_encoder("alphago48")


@pytest.mark.parametrize(
    ("name", "planes", "history"),
    [("agz17", 17, 8), ("cazenave21", 21, 5), ("qiqiao10", 10, 4), ("mao3", 3, 1), ("nogo", 21, 8)],
)
def test_plane_counts_and_history_lengths(name, planes, history):
    encoder = get_encoder(name)
    assert (encoder.planes, encoder.history) == (planes, history)
    assert len(encoder.plane_names) == planes == len(set(encoder.plane_names))
    game = game_after(9, "E5 C3 G7")
    x = encoder.encode_game(game)
    assert x.shape == (9, 9, planes) and x.dtype == np.float32
    assert set(np.unique(x)) <= {0.0, 1.0}


@pytest.mark.parametrize("name", ALL)
def test_batch_fills_out_in_place_and_matches_one_by_one(name):
    encoder = get_encoder(name)
    game = game_after(9, "E5 C3 G7 C7 G3 pass E3 D4")
    hist = np.stack(
        [history_window(game.history[: i + 1], 8, 81) for i in range(len(game.history))]
    )
    to_play = np.array([BLACK if i % 2 == 0 else WHITE for i in range(len(hist))], np.int8)
    out = np.full((len(hist), 9, 9, encoder.planes), 7.0, np.float32)
    result = encoder.encode(hist, to_play, 9, out)
    assert result is out
    for i in range(len(hist)):
        np.testing.assert_array_equal(
            out[i], encoder.encode(hist[i : i + 1], to_play[i : i + 1], 9)[0]
        )


def test_bad_shapes_and_colours_are_refused_with_a_reason():
    encoder = get_encoder("cazenave21")
    hist = np.zeros((2, 5, 81), np.int8)
    with pytest.raises(ValueError, match="needs 5 positions"):
        encoder.encode(hist[:, :4], np.array([1, 2]), 9)
    with pytest.raises(ValueError, match="81 points"):
        encoder.encode(hist, np.array([1, 2]), 7)
    with pytest.raises(ValueError, match="BLACK"):
        encoder.encode(hist, np.array([1, 3]), 9)
    with pytest.raises(ValueError, match="out must be"):
        encoder.encode(hist, np.array([1, 2]), 9, np.zeros((2, 9, 9, 20), np.float32))


@pytest.mark.parametrize("name", ALL)
def test_corrupt_stone_values_do_not_crash(name):
    """Values other than 0/1/2, and strings with no liberty, only come from bad data."""
    rng = np.random.default_rng(3)
    hist = rng.integers(-3, 6, size=(16, 8, 81)).astype(np.int8)
    x = get_encoder(name).encode(hist, np.ones(16, np.int8), 9)
    assert np.isfinite(x).all()


def test_encode_takes_longer_histories_and_uses_the_latest_rows():
    game = game_after(9, "E5 C3 G7 C7 G3 C5")
    long = history_window(game.history, 8, 81)[None]
    short = long[:, -5:]
    cazenave = get_encoder("cazenave21")
    np.testing.assert_array_equal(
        cazenave.encode(long, [BLACK], 9), cazenave.encode(short, [BLACK], 9)
    )


# --- colour and history --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "plane_name", "black_value"),
    [
        ("agz17", "ones if Black to play", 1),
        ("cazenave21", "ones if Black to play", 1),
        ("mao3", "ones if Black to play", 1),
        ("nogo", "ones if Black to play", 1),
        ("qiqiao10", "ones if White to play", 0),
    ],
)
def test_colour_plane(name, plane_name, black_value):
    encoder = get_encoder(name)
    black_turn = encoder.encode_game(game_after(9, "E5 C3"))
    white_turn = encoder.encode_game(game_after(9, "E5 C3 G7"))
    assert (plane(black_turn, plane_name, name) == black_value).all()
    assert (plane(white_turn, plane_name, name) == 1 - black_value).all()


def test_agz17_history_planes_follow_a_capture_from_the_side_to_move():
    # Black captures the white stone on D5 with its fourth move, E5:
    #   before E5: white D5 surrounded by black C5 D6 D4;  after: D5 empty.
    game = game_after(9, "C5 D5 D6 A1 D4 A9 E5")
    assert game.board[4, 3] == 0  # D5 was taken
    x = get_encoder("agz17").encode_game(game)  # White to play: own = White
    assert points_of(plane(x, name("own", 0), "agz17")) == {"A1", "A9"}
    assert points_of(plane(x, name("opponent", 0), "agz17")) == {"C5", "D6", "D4", "E5"}
    # One position back the captured stone is still there and E5 is not.
    assert points_of(plane(x, name("own", 1), "agz17")) == {"D5", "A1", "A9"}
    assert points_of(plane(x, name("opponent", 1), "agz17")) == {"C5", "D6", "D4"}
    # Seven moves were played: t-7 is the empty board, t-6 has the first move.
    assert plane(x, name("own", 7), "agz17").sum() == 0
    assert points_of(plane(x, name("opponent", 6), "agz17")) == {"C5"}


def test_history_before_the_game_is_empty_and_own_means_the_side_to_move():
    x = get_encoder("agz17").encode_game(game_after(9, "E5"))  # White to play
    assert plane(x, "own stones now", "agz17").sum() == 0
    assert points_of(plane(x, "opponent stones now", "agz17")) == {"E5"}
    assert x[..., 2:16].sum() == 0  # t-1 is the empty board, t-2.. before the game


def test_cazenave21_current_and_previous_states():
    game = game_after(9, "E5 C3 G7 C7 G3")  # White to play
    x = get_encoder("cazenave21").encode_game(game)
    assert points_of(plane(x, "own stones now", "cazenave21")) == {"C3", "C7"}
    assert points_of(plane(x, "opponent stones now", "cazenave21")) == {"E5", "G7", "G3"}
    assert points_of(plane(x, "opponent stones t-1", "cazenave21")) == {"E5", "G7"}
    assert points_of(plane(x, "own stones t-4", "cazenave21")) == set()
    assert points_of(plane(x, "opponent stones t-4", "cazenave21")) == {"E5"}


def test_qiqiao10_keeps_colours_oldest_first():
    game = game_after(9, "E5 C3 G7 C7 G3")
    x = get_encoder("qiqiao10").encode_game(game)
    assert points_of(plane(x, "black stones now", "qiqiao10")) == {"E5", "G7", "G3"}
    assert points_of(plane(x, "black stones t-3", "qiqiao10")) == {"E5"}
    assert points_of(plane(x, "white stones t-3", "qiqiao10")) == {"C3"}
    assert points_of(plane(x, "white stones now", "qiqiao10")) == {"C3", "C7"}
    assert list(get_encoder("qiqiao10").plane_names[:4]) == [
        "black stones t-3",
        "black stones t-2",
        "black stones t-1",
        "black stones now",
    ]


def test_mao3_planes():
    x = get_encoder("mao3").encode_game(game_after(9, "E5 C3 G7"))
    assert points_of(plane(x, "own stones now", "mao3")) == {"C3"}
    assert points_of(plane(x, "opponent stones now", "mao3")) == {"E5", "G7"}


# --- last move ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moves", "expected"),
    [
        ("E5 C3 G7", {"G7"}),
        ("E5 C3 G7 pass", set()),  # a pass leaves no last move
        ("C5 D5 D6 A1 D4 A9 E5", {"E5"}),  # the capture removes D5; only E5 appeared
        ("E5", {"E5"}),
    ],
)
def test_qiqiao10_last_move_plane(moves, expected):
    x = get_encoder("qiqiao10").encode_game(game_after(9, moves))
    assert points_of(plane(x, "last move", "qiqiao10")) == expected


def test_last_move_after_handicap_setup_is_none():
    game = Game(9)
    game.setup(black=[gtp_to_point("C3", 9), gtp_to_point("G7", 9)])
    game.to_play = WHITE
    x = get_encoder("qiqiao10").encode_game(game)
    assert plane(x, "last move", "qiqiao10").sum() == 0


# --- liberties -----------------------------------------------------------------------


def test_liberty_map_against_hand_counts():
    game = Game.from_ascii(
        """
        . O . . .
        O . . . .
        . . X X .
        . . . . .
        O O X . .
        """
    )
    libs = liberty_map(game.stones, 5).reshape(5, 5)
    assert libs[0, 1] == 3  # B5: A5 C5 B4
    assert libs[1, 0] == 3  # A4: A5 A3 B4
    assert libs[2, 2] == libs[2, 3] == 6  # C3-D3: C4 D4 B3 E3 C2 D2
    assert libs[4, 0] == libs[4, 1] == 2  # A1-B1: A2 B2 (C1 is Black)
    assert libs[4, 2] == 2  # C1: C2 D1
    assert (libs[game.board == 0] == 0).all()


def test_cazenave21_liberty_planes_are_one_hot_with_six_or_more():
    game = Game.from_ascii(
        """
        . . . . X X X . .
        . O . . . . . . .
        . . . . . . . . .
        . . . O O O . . .
        X . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . X O
        """
    )
    x = get_encoder("cazenave21").encode_game(game)
    expected = {
        1: {"J1"},
        2: {"H1"},
        3: {"A5"},
        4: {"B8"},
        5: {"E9", "F9", "G9"},
        6: {"D6", "E6", "F6"},  # eight liberties
    }
    for k, stones in expected.items():
        name = {
            1: "stones of strings with 1 liberty",
            6: "stones of strings with 6 or more liberties",
        }
        name = name.get(k, f"stones of strings with {k} liberties")
        assert points_of(plane(x, name, "cazenave21")) == stones, name


def test_nogo_liberty_planes_mark_the_liberties_of_weak_strings():
    game = Game.from_ascii(
        """
        . X O . . . . . .
        . . X . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . O O .
        . . . . . X . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """,
        to_play=WHITE,
        rules="nogo",
    )
    x = get_encoder("nogo").encode_game(game)
    # C9 O: neighbours B9 X, C8 X, D9 -> one liberty D9 (own, White to play).
    assert points_of(plane(x, "liberty of an own string with 1 liberty", "nogo")) == {"D9"}
    # B9 X: A9, B8 -> two liberties (opponent).  C8 X: C7, B8, D8 -> three: not marked.
    assert points_of(plane(x, "liberties of opponent strings with 2 liberties", "nogo")) == {
        "A9",
        "B8",
    }
    assert plane(x, "liberty of an opponent string with 1 liberty", "nogo").sum() == 0
    # G5-H5 O has 6 liberties, F4 X has 4: neither is marked.
    assert plane(x, "liberties of own strings with 2 liberties", "nogo").sum() == 0


# --- bench rows -----------------------------------------------------------------------


def test_bench_rows_fall_back_to_playouts_without_real_games(monkeypatch, tmp_path):
    from harness.features import bench, samples

    monkeypatch.setattr(samples, "DEV_SGF", tmp_path / "absent")
    rows = bench.encoder_rates(9, seconds=0.01, names=["mao3", "qiqiao10"])
    assert [r[0] for r in rows] == ["mao3 encode", "qiqiao10 encode"]
    assert all(r[1] == "9x9" and r[2] > 0 and r[3] == "positions/s" for r in rows)
