"""The search's own limits on Go moves: the "finished" pass rule (pass is a
candidate only when the game is over in substance: own eyes left to fill, or a
Tromp-Taylor win after the opponent passed) and, unless ``fill_eyes``, no move
into an own true eye."""

from __future__ import annotations

import numpy as np
import pytest

from harness.game import board as K
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.search import BatchedSearch, MCTSConfig
from harness.search.game_driver import play_games
from harness.search.leaves import PASS_FREE, restrict_moves, restrict_pass
from harness.search.oracle import OracleEvaluator

# Both sides have two one-point eyes and nothing else to play.
SETTLED = """
X X X X X
X . X . X
X X X X X
O O O O O
O . O . O
"""

# Black owns two columns (10 points), White three (15).
SPLIT = """
. X O . .
. X O . .
. X O . .
. X O . .
. X O . .
"""


# Black (to move, behind by 9 points before komi) has two true eyes, at A5 and
# C5, and nothing else to play: White's three empty points are suicide for it.
BEHIND_WITH_TWO_EYES = """
. X . X O
X X X X O
O O O O O
O O . O O
O . O O .
"""


def pass_allowed(game: Game) -> bool:
    legal = game.legal_moves()
    geo = game.geo
    restrict_pass(game.boards, 0, game.komi, geo.neighbours, geo.diagonals, legal,
                  K.new_work(game.size * game.size))
    return bool(legal[-1])


def test_no_pass_on_an_open_board():
    assert not pass_allowed(Game(9))


def test_pass_when_only_own_eyes_are_left():
    assert pass_allowed(Game.from_ascii(SETTLED, to_play=BLACK))
    assert pass_allowed(Game.from_ascii(SETTLED, to_play=WHITE))


@pytest.mark.parametrize("to_play, allowed", [(WHITE, True), (BLACK, False)])
def test_after_a_pass_only_the_player_ahead_may_end_the_game(to_play, allowed):
    game = Game.from_ascii(SPLIT, to_play=3 - to_play, komi=0.5)
    game.play(game.pass_move)
    assert game.to_play == to_play
    assert pass_allowed(game) == allowed


def test_without_a_pass_first_even_the_player_ahead_plays_on():
    assert not pass_allowed(Game.from_ascii(SPLIT, to_play=WHITE, komi=0.5))


def search_once(game: Game, rule: str, fill_eyes: bool = False):
    evaluator = OracleEvaluator(game.size, value="area", priors="uniform", scale=25.0)
    config = MCTSConfig(playouts=200, pass_rule=rule, fill_eyes=fill_eyes)
    search = BatchedSearch(evaluator, config, seed=3)
    return search.search([game])[0]


def test_the_search_never_visits_an_early_pass():
    game = Game(5, komi=0.5)
    assert search_once(game, "free").visits[game.pass_move] > 0
    finished = search_once(game, "finished")
    assert finished.visits[game.pass_move] == 0 and finished.prior[game.pass_move] == 0


def test_the_player_ahead_ends_the_game_by_passing():
    game = Game.from_ascii(SPLIT, to_play=BLACK, komi=0.5)
    game.play(game.pass_move)
    result = search_once(game, "finished")
    assert result.best_move == game.pass_move
    assert result.q[game.pass_move] == pytest.approx(1.0)


def _own_eye(board: np.ndarray, r: int, c: int, color: int) -> bool:
    """Independent eye test: orthogonal neighbours all ``color``, and at most one
    enemy diagonal in the centre (none on the edge)."""
    n = board.shape[0]
    inside = [(r + dr, c + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
              if 0 <= r + dr < n and 0 <= c + dc < n]
    if any(board[q] != color for q in inside):
        return False
    diagonals = [(r + dr, c + dc) for dr in (1, -1) for dc in (1, -1)]
    on_board = [q for q in diagonals if 0 <= q[0] < n and 0 <= q[1] < n]
    enemy = sum(board[q] == 3 - color for q in on_board)
    return enemy + (len(on_board) < 4) < 2


def test_self_play_passes_only_in_finished_positions():
    evaluator = OracleEvaluator(5, value="area", priors="uniform", scale=6.0)
    search = BatchedSearch(evaluator, MCTSConfig(playouts=24, temperature_moves=30),
                           games=4, seed=5)
    records = play_games(search, 8, komi=0.5, seed=9, max_moves=200)
    passes = 0
    for record in records:
        replay = Game(5, komi=0.5)
        for color, move in record.game.moves:
            if move == replay.pass_move:
                passes += 1
                legal = replay.legal_moves()[:-1].reshape(5, 5)
                board = replay.board
                open_points = [(r, c) for r, c in zip(*np.nonzero(legal), strict=True)
                               if not _own_eye(board, r, c, color)]
                ending_a_win = (replay.passes == 1
                                and replay.score() * (1 if color == BLACK else -1) > 0)
                assert not open_points or ending_a_win
            replay.play(move)
    assert passes > 0


def test_the_player_behind_fills_an_eye_rather_than_accept_the_count():
    """The harness's own collapse (docs/results.md, "Why the losses to GNU Go
    end with every stone dead"): after the opponent's pass, passing ends the
    game at an exact -1 while filling an eye is valued by an estimate, which
    is never quite -1, so a search allowed to fill its eyes does."""
    game = Game.from_ascii(BEHIND_WITH_TWO_EYES, to_play=WHITE, komi=0.5)
    game.play(game.pass_move)
    result = search_once(game, "finished", fill_eyes=True)
    assert result.best_move in (0, 2)


def test_kept_out_of_its_eyes_the_player_behind_accepts_the_count():
    game = Game.from_ascii(BEHIND_WITH_TWO_EYES, to_play=WHITE, komi=0.5)
    game.play(game.pass_move)
    result = search_once(game, "finished")
    assert result.best_move == game.pass_move
    assert result.visits[0] == result.visits[2] == 0


def test_eye_moves_dropped_are_exactly_the_own_true_eyes():
    """restrict_moves against the independent eye test, on positions of
    random games (a 7x7 board has false eyes, edge eyes and corner eyes)."""
    rng = np.random.default_rng(11)
    work = K.new_work(49)
    checked = eyes_seen = 0
    for _ in range(6):
        game = Game(7, komi=0.5)
        while not game.is_over and len(game.moves) < 120:
            legal = game.legal_moves()
            kept = legal.copy()
            geo = game.geo
            restrict_moves(game.boards, 0, game.komi, geo.neighbours, geo.diagonals, kept,
                           work, PASS_FREE, False)  # only the eye rule acts
            board = game.board
            for p in np.flatnonzero(legal[:-1]):
                eye = _own_eye(board, p // 7, p % 7, game.to_play)
                assert kept[p] == (not eye)
                eyes_seen += eye
            assert kept[-1] == legal[-1]
            checked += 1
            moves = np.flatnonzero(legal)
            game.play(int(rng.choice(moves)))
    assert checked > 300 and eyes_seen > 20


def test_self_play_never_fills_an_own_eye():
    evaluator = OracleEvaluator(5, value="area", priors="uniform", scale=6.0)
    config = MCTSConfig(playouts=24, temperature_moves=30)
    search = BatchedSearch(evaluator, config, games=4, seed=5)
    records = play_games(search, 8, komi=0.5, seed=9, max_moves=200)
    for record in records:
        replay = Game(5, komi=0.5)
        for color, move in record.game.moves:
            if move != replay.pass_move:
                assert not _own_eye(replay.board, move // 5, move % 5, color)
            replay.play(move)
        assert replay.is_over
