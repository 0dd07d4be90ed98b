"""The referee: rules enforced, every way a game ends, scoring, SGF output.

The SGF files are read back with sgfmill, an independent SGF implementation.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from sgfmill import sgf as sgfmill_sgf

from harness.arena.referee import play_game
from harness.game.geometry import BLACK, WHITE, gtp_to_point
from harness.game.position import Game, move_cap
from harness.players.base import RESIGN
from harness.players.random_player import RandomPlayer
from harness.players.scripted import ScriptedPlayer
from harness.sgf import parse_sgf_bytes, replay


def points(*vertices: str, size: int = 5) -> list[int]:
    return [gtp_to_point(v, size) for v in vertices]


# Black walls off column C, White column D, then both pass:
#   . . X O .
#   . . X O .      Black owns A-C (15 points), White D-E (10 points):
#   . . X O .      15 - 10 - komi 0.5 = B+4.5.
#   . . X O .
#   . . X O .
BLACK_WALL = points("C5", "C4", "C3", "C2", "C1")
WHITE_WALL = points("D5", "D4", "D3", "D2", "D1")


def test_two_passes_end_the_game_and_tromp_taylor_counts_it(tmp_path):
    sgf = tmp_path / "games" / "wall.sgf"
    played = play_game(
        ScriptedPlayer(BLACK_WALL, name="Alice"),
        ScriptedPlayer(WHITE_WALL, name="Bob"),
        size=5,
        komi=0.5,
        sgf_path=sgf,
    )
    assert played.reason == "two passes"
    assert played.result.to_sgf() == "B+4.5"
    assert played.harness_score == 4.5
    assert len(played.moves) == 12  # ten stones and two passes
    assert played.game.to_ascii() == "\n".join([". . X O ."] * 5)

    record = sgfmill_sgf.Sgf_game.from_bytes(sgf.read_bytes())
    root = record.get_root()
    assert record.get_size() == 5
    assert record.get_komi() == 0.5
    assert root.get("RE") == "B+4.5"
    assert root.get("PB") == "Alice" and root.get("PW") == "Bob"
    assert root.get("DT") == played.date
    moves = [node.get_move() for node in record.get_main_sequence()[1:]]
    assert moves[0] == ("b", (4, 2))  # sgfmill: (row from the bottom, column)
    assert moves[-2:] == [("b", None), ("w", None)]
    assert not list(tmp_path.glob("games/*.tmp"))

    # The harness's own reader gets the same game back.
    (back,) = parse_sgf_bytes(sgf.read_bytes())
    assert (back.black, back.white, back.komi, back.result) == ("Alice", "Bob", 0.5, played.result)
    assert back.moves == played.moves
    assert (replay(back).stones == played.game.stones).all()


def test_an_illegal_move_loses_by_forfeit_with_the_reason_recorded(tmp_path):
    # White answers C5 by playing on C5 again.
    played = play_game(
        ScriptedPlayer(points("C5")),
        ScriptedPlayer(points("C5"), name="clumsy"),
        size=5,
        komi=0.5,
        sgf_path=tmp_path / "forfeit.sgf",
    )
    assert played.result.winner == BLACK and played.result.kind == "forfeit"
    assert played.reason == (
        "White (clumsy) played an illegal move: illegal move 2 C5 (occupied point)"
    )
    root = sgfmill_sgf.Sgf_game.from_bytes((tmp_path / "forfeit.sgf").read_bytes()).get_root()
    assert root.get("RE") == "B+F"
    assert "occupied point" in root.get("GC")


def test_suicide_is_a_forfeit():
    # Black's A5 would have no liberty after White's B5 and A4.
    black = ScriptedPlayer(points("E1", "E2", "A5"))
    white = ScriptedPlayer(points("B5", "A4"))
    played = play_game(black, white, size=5, komi=0.5)
    assert played.result.winner == WHITE and played.result.kind == "forfeit"
    assert "suicide" in played.reason


def test_a_ko_recapture_is_a_forfeit_under_either_ko_rule():
    #   . X O . .
    #   X O . O .    Black C4 captures B4; White may not retake at B4 at once.
    #   . X O . .
    for rules in ("superko", "simple-ko"):
        black = ScriptedPlayer(points("B5", "A4", "B3", "E1", "C4"))
        white = ScriptedPlayer(points("C5", "D4", "C3", "B4", "B4"))
        played = play_game(black, white, size=5, komi=0.5, rules=rules)
        assert played.result.to_sgf() == "B+F"
        assert played.reason.endswith("illegal move 10 B4 (ko)")


def test_resignation_ends_the_game():
    played = play_game(ScriptedPlayer(points("C3")), ScriptedPlayer([RESIGN]), size=5, komi=0.5)
    assert played.result.to_sgf() == "B+R"
    assert played.reason == "White resigned"
    assert played.harness_score is None


class Crashing:
    name = "crashy"

    def reset(self, size, komi, rules):
        pass

    def select_move(self, game):
        raise RuntimeError("engine exploded\nwith a traceback")

    def close(self):
        pass


def test_a_player_that_fails_loses_by_forfeit_and_the_referee_survives():
    played = play_game(Crashing(), RandomPlayer(seed=0), size=5, komi=0.5)
    assert played.result.to_sgf() == "W+F"
    assert played.reason == "Black (crashy) failed: engine exploded with a traceback"


def test_the_move_cap_stops_the_game_and_scores_it():
    played = play_game(RandomPlayer(seed=1), RandomPlayer(seed=2), size=9, komi=7.5, max_moves=10)
    assert len(played.moves) == 10
    assert played.reason == "move cap (10 moves) reached"
    assert played.harness_score == played.game.score()
    assert played.result.kind == "score"


class EyeFiller:
    """Random legal moves including its own eyes, never a pass while a point is legal:
    groups keep dying and the board keeps refilling, so games never end by themselves."""

    name = "eye-filler"

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self, size, komi, rules):
        pass

    def select_move(self, game):
        legal = np.flatnonzero(game.legal_moves()[:-1])
        return int(self.rng.choice(legal)) if len(legal) else game.pass_move

    def close(self):
        pass


def test_the_default_move_cap_is_twice_the_points_as_in_self_play():
    played = play_game(EyeFiller(1), EyeFiller(2), size=5, komi=0.5)
    assert move_cap(5) == 50 and played.reason == "move cap (50 moves) reached"
    assert len(played.moves) == 50


def test_nogo_ends_when_the_side_to_move_has_no_legal_move():
    played = play_game(RandomPlayer(seed=4), RandomPlayer(seed=5), size=5, komi=0, rules="nogo")
    game = played.game
    assert not game.legal_moves().any()
    assert played.result.winner == 3 - game.to_play
    loser = "Black" if game.to_play == BLACK else "White"
    assert played.reason == f"{loser} has no legal move"
    assert all(move != game.pass_move for _, move in played.moves)


def test_a_pass_in_nogo_is_a_forfeit():
    played = play_game(ScriptedPlayer([]), RandomPlayer(seed=0), size=5, komi=0, rules="nogo")
    assert played.result.to_sgf() == "W+F"
    assert "pass (forbidden in NoGo)" in played.reason


class Counting(ScriptedPlayer):
    """A scripted player that also keeps its own count, like an engine."""

    def __init__(self, moves, count):
        super().__init__(moves, name="counter")
        self.count = count
        self.limits = None
        self.seed = None

    def final_score(self, game):
        return self.count

    def set_limits(self, *, move_time=None, playouts=None):
        self.limits = (move_time, playouts)

    def reseed(self, seed):
        self.seed = seed


def test_an_engine_count_that_differs_is_kept_beside_ours(tmp_path):
    engine = Counting(WHITE_WALL, "W+10.5")
    played = play_game(
        ScriptedPlayer(BLACK_WALL), engine, size=5, komi=0.5, sgf_path=tmp_path / "g.sgf"
    )
    assert played.result.to_sgf() == "B+4.5"  # our count decides
    assert played.engine_scores == {"counter": "W+10.5"}
    assert played.scores_disagree
    comment = sgfmill_sgf.Sgf_game.from_bytes((tmp_path / "g.sgf").read_bytes()).get_root()
    assert "engine counts counter: W+10.5" in comment.get("GC")


def test_an_engine_count_that_agrees_is_no_disagreement():
    played = play_game(
        ScriptedPlayer(BLACK_WALL), Counting(WHITE_WALL, "B+4.5"), size=5, komi=0.5
    )
    assert played.engine_scores == {"counter": "B+4.5"}
    assert not played.scores_disagree


def test_limits_and_seeds_are_handed_to_players_that_take_them():
    engine = Counting([], "0")
    play_game(ScriptedPlayer([]), engine, size=5, komi=0.5, seed=21, move_time=2.5, playouts=64)
    assert engine.limits == (2.5, 64)
    assert engine.seed == 2 * 21 + 1  # White's seed; Black gets 2 * 21


def test_a_seed_makes_a_game_between_random_players_reproducible():
    first = play_game(RandomPlayer(), RandomPlayer(), size=7, komi=7.5, seed=9)
    again = play_game(RandomPlayer(), RandomPlayer(), size=7, komi=7.5, seed=9)
    assert first.moves == again.moves


def test_a_custom_scorer_replaces_the_area_count():
    played = play_game(
        ScriptedPlayer(BLACK_WALL), ScriptedPlayer(WHITE_WALL), size=5, komi=0.5,
        scorer=lambda game: -2.0,
    )
    assert played.result.to_sgf() == "W+2"


@pytest.mark.parametrize("komi", [0.5, 5.5])
def test_result_matches_an_independent_count_of_the_final_board(komi):
    """The final position is counted again here by a plain flood fill."""
    played = play_game(RandomPlayer(seed=11), RandomPlayer(seed=12), size=7, komi=komi)
    board = [row.split() for row in played.game.to_ascii().splitlines()]
    size = len(board)
    black = white = 0
    seen = set()
    for r in range(size):
        for c in range(size):
            if board[r][c] == "X":
                black += 1
            elif board[r][c] == "O":
                white += 1
            elif (r, c) not in seen:
                region, touches, stack = [], set(), [(r, c)]
                seen.add((r, c))
                while stack:
                    y, x = stack.pop()
                    region.append((y, x))
                    for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                        yy, xx = y + dy, x + dx
                        if 0 <= yy < size and 0 <= xx < size:
                            if board[yy][xx] == ".":
                                if (yy, xx) not in seen:
                                    seen.add((yy, xx))
                                    stack.append((yy, xx))
                            else:
                                touches.add(board[yy][xx])
                if touches == {"X"}:
                    black += len(region)
                elif touches == {"O"}:
                    white += len(region)
    assert played.harness_score == black - white - komi
    assert played.result.winner == (BLACK if black - white - komi > 0 else WHITE)


def test_game_object_of_the_result_is_the_final_position():
    played = play_game(ScriptedPlayer(BLACK_WALL), ScriptedPlayer(WHITE_WALL), size=5, komi=0.5)
    replayed = Game(5, 0.5)
    for color, move in played.moves:
        replayed.play(move, color)
    assert (replayed.stones == played.game.stones).all()


def test_an_opening_is_played_before_the_players_take_over():
    played = play_game(
        ScriptedPlayer(points("C1", "C2", "C3")), ScriptedPlayer(WHITE_WALL), size=5, komi=0.5,
        opening=points("C5", "D5", "C4"),
    )
    # The opening gave Black C5 and C4 and White D5; then White plays its script
    # from the start (D5 is taken, so White forfeits on its first move).
    assert played.moves[:3] == [(BLACK, 2), (WHITE, 3), (BLACK, 7)]
    assert played.result.to_sgf() == "B+F"
    assert "illegal move 4 D5 (occupied point)" in played.reason


class Ponderer(ScriptedPlayer):
    """Plays its script after thinking for a fixed time per move."""

    def select_move(self, game):
        time.sleep(0.02)
        return super().select_move(game)


def test_each_side_has_its_own_clock_and_openings_are_nobody_s_moves():
    played = play_game(
        Ponderer(BLACK_WALL[2:]), ScriptedPlayer(WHITE_WALL[:4]), size=5, komi=0.5,
        opening=points("C5", "D1", "C4"),
    )
    # White chose D5, D4, D3, D2 and a pass (D1 was the opening's), Black C3, C2,
    # C1 and a pass: 5 and 4 moves chosen after 3 opening moves.
    assert played.turns == {BLACK: 4, WHITE: 5}
    assert len(played.moves) == 3 + 4 + 5
    assert played.clock[BLACK] >= 4 * 0.02  # slept through every one of its moves
    assert played.clock[WHITE] < played.clock[BLACK]
    assert played.seconds >= played.clock[BLACK] + played.clock[WHITE]


class Scribbler(ScriptedPlayer):
    """Plays its script but first plays a move of its own on the game it was shown."""

    def select_move(self, game):
        game.play(points("A1")[0])
        return super().select_move(game)


def test_a_player_that_changes_the_game_it_is_shown_cannot_change_the_record():
    played = play_game(
        Scribbler(BLACK_WALL), ScriptedPlayer(WHITE_WALL), size=5, komi=0.5
    )
    assert played.result.to_sgf() == "B+4.5"
    assert played.game.to_ascii() == "\n".join([". . X O ."] * 5)
