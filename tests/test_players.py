"""Random and UCT players, the tournament move choice and player spec strings."""

from __future__ import annotations

import numpy as np
import pytest

from harness.arena.referee import play_game
from harness.game.geometry import BLACK, WHITE, gtp_to_point
from harness.game.position import Game
from harness.players.base import RESIGN, Player, PlayerSpecError
from harness.players.choice import tournament_choice
from harness.players.random_player import RandomPlayer
from harness.players.scripted import ScriptedPlayer
from harness.players.spec import PlayerSpec, make_player, parse_player
from harness.players.uct import UCTPlayer, uct_playout_rate

# Every empty point is a true Black eye.
ALL_BLACK_EYES = """
. X . X .
X X X X X
. X . X .
X X X X X
. X . X .
"""

# Three empty points on the bottom row are not eyes (A1, B1, C1); E1 is an eye.
THREE_OPEN_POINTS = """
. X . X .
X X X X X
. X . X .
X X X X X
. . . X .
"""


# --- random -------------------------------------------------------------------------


def test_random_player_passes_rather_than_fill_its_own_eyes():
    game = Game.from_ascii(ALL_BLACK_EYES, to_play=BLACK)
    assert RandomPlayer(seed=0).select_move(game) == game.pass_move


def test_random_player_passes_when_every_move_is_suicide():
    game = Game.from_ascii(ALL_BLACK_EYES, to_play=WHITE)
    assert RandomPlayer(seed=0).select_move(game) == game.pass_move


def test_random_player_is_uniform_over_the_legal_non_eye_points():
    game = Game.from_ascii(THREE_OPEN_POINTS, to_play=BLACK)
    player = RandomPlayer(seed=7)
    picks = [player.select_move(game) for _ in range(900)]
    counts = {p: picks.count(p) for p in set(picks)}
    a1, b1, c1 = (gtp_to_point(v, 5) for v in ("A1", "B1", "C1"))
    assert set(counts) == {a1, b1, c1}
    # Binomial(900, 1/3): sd 14; 70 is five standard deviations.
    assert all(abs(n - 300) < 70 for n in counts.values()), counts


def test_random_player_in_nogo_fills_an_eye_since_passing_is_illegal():
    game = Game.from_ascii(ALL_BLACK_EYES, to_play=BLACK, rules="nogo")
    move = RandomPlayer(seed=1).select_move(game)
    assert move != game.pass_move
    assert game.is_legal(move)


def test_seeded_random_players_play_the_same_game():
    first = play_game(RandomPlayer(seed=3), RandomPlayer(seed=4), size=9, komi=7.5)
    again = play_game(RandomPlayer(seed=3), RandomPlayer(seed=4), size=9, komi=7.5)
    other = play_game(RandomPlayer(seed=5), RandomPlayer(seed=4), size=9, komi=7.5)
    assert first.moves == again.moves
    assert first.moves != other.moves


def test_players_satisfy_the_protocol():
    for player in (RandomPlayer(), UCTPlayer(10), ScriptedPlayer([])):
        assert isinstance(player, Player)


# --- UCT ----------------------------------------------------------------------------

# White's three stones have one liberty, E3; capturing them gives Black the board.
WHITE_IN_ATARI = """
. . . . .
. X X X .
X O O O .
. X X X .
. . . . .
"""

# Black owns columns A-B (10 points), White columns C-E (15 points).
WALL = """
. X O . .
X X O . .
. X O . .
X X O . .
. X O . .
"""


@pytest.mark.parametrize("seed", range(4))
def test_uct_captures_the_group_in_atari(seed):
    game = Game.from_ascii(WHITE_IN_ATARI, to_play=BLACK, komi=10.5)
    assert UCTPlayer(1000, seed=seed).select_move(game) == gtp_to_point("E3", 5)


def _pass_edge_mean(player: UCTPlayer, game: Game) -> float:
    tree = player.search(game)
    start, count = int(tree.node_edge_start[0]), int(tree.node_edge_count[0])
    for e in range(start, start + count):
        if tree.edge_move[e] == game.pass_move:
            return float(tree.edge_wins[e] / tree.edge_visits[e])
    raise AssertionError("pass is not a root move")


def test_uct_scores_a_game_ended_by_passing_exactly_with_komi():
    # White is ahead by 5 points, so with komi 0.5 (W+5.5) a second pass wins
    # for White and loses for Black, in every simulation; with komi -5.5
    # (B+0.5) it is the other way round.
    won = Game.from_ascii(WALL, to_play=BLACK, komi=0.5)
    won.play(won.pass_move)  # Black passes; White to move
    assert _pass_edge_mean(UCTPlayer(300, seed=0), won) == 1.0

    lost = Game.from_ascii(WALL, to_play=WHITE, komi=0.5)
    lost.play(lost.pass_move)  # White passes; Black to move
    assert _pass_edge_mean(UCTPlayer(300, seed=0), lost) == 0.0
    assert UCTPlayer(300, seed=0).select_move(lost) != lost.pass_move

    reverse = Game.from_ascii(WALL, to_play=WHITE, komi=-5.5)
    reverse.play(reverse.pass_move)
    assert _pass_edge_mean(UCTPlayer(300, seed=0), reverse) == 1.0


def test_uct_runs_the_requested_number_of_simulations():
    player = UCTPlayer(150, seed=0)
    tree = player.search(Game(7, 7.5))
    start, count = int(tree.node_edge_start[0]), int(tree.node_edge_count[0])
    assert player.last_simulations == 150
    assert int(tree.node_visits[0]) == 150
    assert int(tree.edge_visits[start : start + count].sum()) == 150
    assert count == 7 * 7 + 1  # every point plus pass at the root


def test_uct_resigns_a_hopeless_position_only_when_asked():
    game = Game.from_ascii(WALL, to_play=WHITE, komi=0.5)
    game.play(game.pass_move)
    game.komi = 30.5  # Black cannot win any more
    assert UCTPlayer(200, seed=0, resign_below=0.05).select_move(game) == RESIGN
    assert UCTPlayer(200, seed=0).select_move(game) != RESIGN


def test_uct_with_a_time_budget_stops_on_time():
    player = UCTPlayer(None, move_time=0.2, seed=0)
    player.select_move(Game(9, 7.5))
    assert player.last_simulations >= 64


def _uct_against_random(
    games: int, playouts: int, size: int = 9, komi: float = 7.5, rules: str = "superko"
) -> int:
    wins = 0
    for i in range(games):
        uct, rnd = UCTPlayer(playouts, seed=100 + i), RandomPlayer(seed=200 + i)
        black, white = (uct, rnd) if i % 2 == 0 else (rnd, uct)
        played = play_game(black, white, size=size, komi=komi, rules=rules)
        uct_color = BLACK if i % 2 == 0 else WHITE
        wins += played.winner == uct_color
    return wins


def test_uct_1000_beats_random_on_9x9():
    # Seeds are fixed, so this is deterministic: ten wins out of ten.
    assert _uct_against_random(10, 1000) == 10


@pytest.mark.slow
def test_uct_1000_beats_random_in_95_of_100_games():
    # About 7 minutes on an idle core (28 minutes on a busy shared machine).
    wins = _uct_against_random(100, 1000)
    assert wins >= 95, f"UCT won only {wins} of 100"


def test_uct_plays_nogo_and_beats_random():
    # NoGo: the tree never offers a pass and a playout's loser is the side left
    # without a move.
    assert _uct_against_random(4, 300, size=7, komi=0, rules="nogo") == 4


def test_uct_playout_rate_is_measured():
    assert uct_playout_rate(9, 0.3) > 0


# --- Cazenave's randomised tournament choice -------------------------------------------


def test_tournament_choice_plays_the_runner_up_in_proportion_to_its_visits():
    rng = np.random.default_rng(0)
    visits = np.array([0, 100, 90, 5], np.float64)  # 90 > 0.8 * 100: a candidate
    picks = [tournament_choice(visits, rng) for _ in range(4000)]
    share = picks.count(2) / len(picks)
    assert set(picks) == {1, 2}
    assert abs(share - 90 / 190) < 0.03


def test_tournament_choice_keeps_the_best_move_when_the_runner_up_is_far_behind():
    rng = np.random.default_rng(0)
    visits = np.array([100, 80, 3], np.float64)  # exactly 0.8: not more than 0.8
    assert {tournament_choice(visits, rng) for _ in range(500)} == {0}


# --- spec strings ------------------------------------------------------------------


def test_specs_build_the_named_players():
    assert isinstance(make_player("random"), RandomPlayer)
    uct = make_player("uct:1000")
    assert isinstance(uct, UCTPlayer) and uct.playouts == 1000 and uct.name == "uct:1000"
    assert make_player("uct:50,resign=0.1").resign_below == 0.1
    assert make_player("random", name="dice").name == "dice"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("uct:abc", "playouts must be a positive integer"),
        ("uct:0", "playouts must be a positive integer"),
        ("random:3", "random takes no argument"),
        ("alphago", "unknown player"),
        ("policy:/no/such/model.keras", "not found"),
        ("mcts:/no/such/model.keras@200", "not found"),
        ("gnugo:11", "level must be an integer from 0 to 10"),
        ("gtp:", "gtp needs a command"),
        ('gtp:"unclosed', "cannot split"),
        ("gtp:/no/such/engine --mode gtp", "cannot start"),
        ("uct:100,color=red", "unknown option 'color'"),
    ],
)
def test_bad_specs_get_one_line_errors(spec, message):
    with pytest.raises(PlayerSpecError) as info:
        make_player(spec)
    text = str(info.value)
    assert message in text
    assert "\n" not in text


@pytest.mark.parametrize("text", [
    "random", "random,seed=3", "uct:50,resign=0.1", "gnugo:1,seed=2", 'gtp:"pachi -t =5000"',
    "gtp:/bin/cat -u 'two words'", "policy:m.keras@0.5,encoder=agz17",
    "mcts:m.keras@16,root=gumbel,gumbel_k=8,randomize=1",
    "mcts:m.keras@16,randomize=1,fill_eyes=1",
])
def test_a_spec_read_back_from_its_label_is_the_same_player(text):
    spec = parse_player(text)
    assert parse_player(spec.label) == spec


@pytest.mark.parametrize(("text", "label"), [
    ("uct", "uct:1000"),
    ("mcts:m.keras", "mcts:m.keras@200"),
    ("gnugo", "gnugo:10"),
    ("gnugo,seed=2", "gnugo:10,seed=2"),
    ("mcts:m.keras@16,root=puct,gumbel_k=16", "mcts:m.keras@16"),
    ("mcts:m.keras@16,fill_eyes=0", "mcts:m.keras@16"),
])
def test_a_label_spells_out_the_defaults_that_will_be_played(text, label):
    assert parse_player(text).label == label


def test_a_playout_budget_replaces_the_own_count_of_searching_players_only():
    assert parse_player("uct:40").with_playouts(800) == PlayerSpec("uct", playouts=800)
    assert parse_player("mcts:m.keras@200,root=gumbel").with_playouts(800).label == (
        "mcts:m.keras@800,root=gumbel")
    for text in ("random", "policy:m.keras", "gnugo:3", "gtp:/bin/cat"):
        assert parse_player(text).with_playouts(800) == parse_player(text)
    assert parse_player("uct:40").with_playouts(None).playouts == 40
    with pytest.raises(PlayerSpecError, match="playouts must be a positive integer"):
        parse_player("uct:40").with_playouts(0)


def test_parsing_opens_no_file_and_building_names_a_missing_one():
    spec = parse_player("mcts:/no/such/model.keras@8")
    assert spec.model.name == "model.keras" and spec.playouts == 8
    with pytest.raises(PlayerSpecError, match=r"model file '/no/such/model\.keras' not found"):
        spec.build()


def test_a_built_player_carries_the_label_of_what_it_plays():
    player = parse_player("uct:40").with_playouts(12).build()
    assert player.name == "uct:12" and player.playouts == 12


def test_a_gtp_spec_is_split_like_a_shell_would_without_running_one():
    quoted = make_player('gtp:"/bin/cat -u --verbose"', name="cat")
    bare = make_player("gtp:/bin/cat -u 'two words'")
    try:
        assert quoted.client.argv == ["/bin/cat", "-u", "--verbose"]
        assert bare.client.argv == ["/bin/cat", "-u", "two words"]
        assert quoted.name == "cat"
    finally:
        quoted.close()
        bare.close()


def test_uct_with_fewer_playouts_than_moves_still_beats_random():
    """With 40 playouts on 9x9 every move gets at most one visit: ties must be
    broken at random, not by point order (which plays the corner and passes)."""
    from harness.arena.referee import play_game
    from harness.players.spec import make_player

    uct, rnd = make_player("uct:40", seed=1), make_player("random", seed=2)
    wins = 0
    for i in range(8):
        black, white = (uct, rnd) if i % 2 == 0 else (rnd, uct)
        played = play_game(black, white, size=9, komi=7.5, seed=i)
        wins += (played.result.winner == 1) == (black is uct)
    assert wins >= 7
