"""How raw players end a game (harness.game.endgame, harness.players.choice).

Known positions in, the moves a player may pick out: a settled board where
only own eyes are left (pass), one real dame left (play it), a seki (keep
out), and whole games between raw players that end by two passes with no
string handed over by its owner. The senseless-move kernel is checked against
an independent flood fill (scipy's labelling, no incremental liberties) on
random positions.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from harness.arena.referee import play_game
from harness.game import BLACK, WHITE, Game
from harness.game.endgame import sensible_moves
from harness.players.choice import no_losing_pass
from harness.players.random_player import RandomPlayer
from harness.players.spec import parse_player

FOUR = ndimage.generate_binary_structure(2, 1)


def settled(size: int, dame: tuple[int, int] | None = None) -> str:
    """Black owns the columns left of the middle, White the rest; each side's
    area is all stones but single-point eyes on every other row and column
    inside it (no false eye: their diagonals are the owner's stones)."""
    middle = size // 2
    rows = []
    for r in range(size):
        row = []
        for c in range(size):
            black = c <= middle
            inner = c - 1 if black else c - middle - 2
            width = middle - 1 if black else size - middle - 3
            eye = r % 2 == 1 and r < size - 1 and inner % 2 == 0 and 0 <= inner < width
            row.append("." if eye or (r, c) == dame else ("X" if black else "O"))
        rows.append(" ".join(row))
    return "\n".join(rows)


def only_pass(game: Game) -> bool:
    moves = sensible_moves(game)
    return bool(moves[game.pass_move]) and not moves[: game.pass_move].any()


@pytest.mark.parametrize("size", [9, 19])
@pytest.mark.parametrize("to_play", [BLACK, WHITE])
def test_on_a_settled_board_with_only_own_eyes_left_every_raw_player_passes(size, to_play):
    game = Game.from_ascii(settled(size), to_play=to_play)
    legal = game.legal_moves()
    assert legal[: game.pass_move].any()  # the own eyes are legal moves...
    assert only_pass(game)  # ...and none is sensible
    stones = game.board.copy()
    for player in (RandomPlayer(seed=1), RandomPlayer(seed=2)):
        game.play(player.select_move(game))
    assert game.is_over and (game.board == stones).all()


@pytest.mark.parametrize("to_play", [BLACK, WHITE])
def test_one_real_dame_left_is_the_one_sensible_move(to_play):
    dame = (4, 4)  # between Black's wall (column E) and White's (column F)
    game = Game.from_ascii(settled(9, dame=dame), to_play=to_play)
    assert game.ownership()[dame[0] * 9 + dame[1]] == 0  # neutral: it touches both colours
    moves = sensible_moves(game)
    assert list(np.flatnonzero(moves)) == [dame[0] * 9 + dame[1], game.pass_move]
    assert RandomPlayer(seed=0).select_move(game) == dame[0] * 9 + dame[1]


SEKI = """
. X . O X X X X X
O O O O X . X . X
X X X X X X X X X
X . X . X . X . X
X X X X X X X X X
X . X . X . X . X
X X X X X X X X X
X . X . X . X . X
X X X X X X X X X
"""


@pytest.mark.parametrize("to_play", [BLACK, WHITE])
def test_neither_side_plays_into_a_seki(to_play):
    """A1 and C1 are the shared liberties of the black stone B1 and the white
    string A2-D2+D1: whoever fills one is captured by the other's reply."""
    game = Game.from_ascii(SEKI, to_play=to_play)
    a9, c9 = 0, 2  # the top row is row 0 here
    legal = game.legal_moves()
    assert legal[a9] and legal[c9]
    assert only_pass(game)
    for filled in (a9, c9):  # the rule's reason, played out: the reply captures
        twin = game.copy()
        twin.play(filled)
        reply = c9 if filled == a9 else a9
        assert twin.play(reply) >= 2


def test_a_string_in_own_territory_is_never_put_in_atari():
    """White's wall encloses a two-point region on the edge: filling either
    point leaves the wall one liberty, and nothing there can be captured."""
    game = Game.from_ascii(
        """
        . . O X X
        O O O X .
        X X X X X
        X . X . X
        X X X X X
        """,
        to_play=WHITE,
        komi=0.5,
    )
    moves = sensible_moves(game)
    assert not moves[0] and not moves[1]  # A5, B5: self-atari in White's territory
    # Black may still play inside White's area (an invasion is not senseless).
    game.to_play = BLACK
    assert sensible_moves(game)[0]


def test_a_throw_in_of_one_stone_stays_allowed():
    """A lone stone in atari outside own territory (a throw-in) is a tactic,
    not a gift: only strings of two or more are never handed over."""
    game = Game.from_ascii(
        """
        . . O X .
        O O O X .
        X X X X .
        . . . . .
        . . . . .
        """,
        to_play=BLACK,
    )
    # A5 and B5 are White's area: a black stone on either would be alone with
    # one liberty; it is allowed (an eye-stealing throw-in).
    assert sensible_moves(game)[0] and sensible_moves(game)[1]


def test_a_losing_pass_becomes_the_best_sensible_move_and_never_an_eye_fill():
    game = Game.from_ascii(
        """
        . . . . .
        . O O O .
        . O . O .
        . O O O .
        . . . . .
        """,
        to_play=BLACK,
        komi=0.5,
    )
    preference = np.zeros(26)
    preference[25] = 9.0  # pass first
    preference[22] = 5.0  # then row 5, column C
    preference[12] = 8.0  # the white eye: suicide, never legal
    allowed = sensible_moves(game)
    assert no_losing_pass(game, 25, preference, allowed) == 22  # behind: play on
    game.to_play = WHITE
    assert no_losing_pass(game, 25, preference, sensible_moves(game)) == 25  # ahead: pass
    assert no_losing_pass(game, 3, preference, allowed) == 3  # moves stay as they are


def test_behind_on_the_count_with_only_senseless_moves_left_the_player_passes():
    """Black is behind on the count (komi 40.5) with nothing but its own eyes:
    it accepts the count rather than destroy its own groups."""
    game = Game.from_ascii(settled(9), to_play=BLACK, komi=40.5)
    assert game.score() < 0
    preference = np.ones(82)
    assert no_losing_pass(game, 81, preference, sensible_moves(game)) == 81


def test_the_endgame_rule_is_on_by_default_and_off_by_spec():
    assert parse_player("random").endgame and parse_player("policy:net.keras").endgame
    off = parse_player("policy:net.keras@0.5,endgame=0")
    assert not off.endgame and off.label == "policy:net.keras@0.5,endgame=0"
    assert parse_player(off.label) == off
    assert parse_player("random,endgame=0").label == "random,endgame=0"
    game = Game.from_ascii(settled(9), to_play=BLACK)
    # Without the rule the random player still keeps out of its own eyes, as before.
    assert parse_player("random,endgame=0").build(seed=0).select_move(game) == game.pass_move


def test_nogo_keeps_every_legal_move():
    game = Game.from_ascii(settled(9), to_play=BLACK, rules="nogo")
    assert (sensible_moves(game) == game.legal_moves()).all()


# --- against an independent implementation -----------------------------------------


def reference_senseless(board: np.ndarray, point: int, color: int) -> bool:
    """The three senseless moves computed from whole boards (scipy labels).

    Own eye: the search's definition (all four neighbours own, at most one
    bad diagonal, none on the edge). Otherwise play the stone, remove the
    opponent's strings without liberties, and count the liberties of the
    stone's string by flood fill.
    """
    size = board.shape[0]
    r, c = divmod(point, size)
    neighbours = [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                  if 0 <= r + dr < size and 0 <= c + dc < size]
    diagonals = [(r + dr, c + dc) for dr, dc in ((-1, -1), (-1, 1), (1, -1), (1, 1))]
    if all(board[q] == color for q in neighbours):
        off = sum(not (0 <= q[0] < size and 0 <= q[1] < size) for q in diagonals)
        bad = sum(board[q] == 3 - color for q in diagonals
                  if 0 <= q[0] < size and 0 <= q[1] < size)
        if bad + (1 if off else 0) < 2:
            return True
    after = board.copy()
    after[r, c] = color
    labels, _ = ndimage.label(after == 3 - color, FOUR)
    captured = False
    for label in {labels[q] for q in neighbours if labels[q]}:
        string = labels == label
        if not (ndimage.binary_dilation(string, FOUR) & (after == 0)).any():
            captured = True
    if captured:
        return False
    labels, _ = ndimage.label(after == color, FOUR)
    string = labels == labels[r, c]
    liberties = int((ndimage.binary_dilation(string, FOUR) & (after == 0)).sum())
    if liberties > 1:
        return False
    if string.sum() > 1:
        return True
    # A lone stone: senseless only inside the mover's own Tromp-Taylor area.
    empty, _ = ndimage.label(board == 0, FOUR)
    region = empty == empty[r, c]
    touching = board[ndimage.binary_dilation(region, FOUR) & ~region]
    return bool(len(touching)) and bool((touching == color).all())


def test_the_kernel_agrees_with_a_flood_fill_on_random_positions():
    rng = np.random.default_rng(0)
    checked, senseless = 0, 0
    for trial in range(90):
        size = (5, 7, 9)[trial % 3]
        game = Game(size, 7.5)
        for _ in range(int(rng.integers(size * size // 3, size * size))):
            legal = np.flatnonzero(game.legal_moves()[:-1])
            if legal.size == 0:
                break
            game.play(int(rng.choice(legal)))
        moves = sensible_moves(game)
        legal = game.legal_moves()
        for p in np.flatnonzero(legal[:-1]):
            expected = reference_senseless(game.board, int(p), game.to_play)
            assert moves[p] != expected, (game.to_ascii(), int(p))
            checked += 1
            senseless += expected
    assert checked > 1000 and senseless > 100


# --- whole games ------------------------------------------------------------------


def handed_over(game: Game) -> list[int]:
    """Move numbers at which a player left a string of two or more of its own
    stones in atari without capturing, read from the record by flood fill."""
    replay = Game(game.size, game.komi, game.rules)
    found = []
    for number, (color, move) in enumerate(game.moves):
        captured = replay.play(move, color)
        if move == replay.pass_move or captured:
            continue
        board = replay.board
        labels, _ = ndimage.label(board == color, FOUR)
        string = labels == labels[divmod(move, game.size)]
        liberties = int((ndimage.binary_dilation(string, FOUR) & (board == 0)).sum())
        if string.sum() > 1 and liberties <= 1:
            found.append(number)
    return found


@pytest.mark.parametrize("size", [9, 13])
def test_random_games_end_by_two_passes_with_no_string_handed_over(size):
    for seed in range(6):
        played = play_game(RandomPlayer(seed=seed), RandomPlayer(seed=100 + seed), size=size,
                           komi=7.5, seed=seed)
        assert played.reason == "two passes", played.reason
        assert handed_over(played.game) == []


def test_before_the_rule_random_games_hand_strings_over():
    """The same games without the rule: the check above is not vacuous."""
    total = 0
    for seed in range(6):
        played = play_game(parse_player("random,endgame=0").build(seed=seed),
                           parse_player("random,endgame=0").build(seed=100 + seed),
                           size=9, komi=7.5, seed=seed)
        total += len(handed_over(played.game))
    assert total > 0


def test_superko_and_captures_are_untouched_by_the_rule():
    """Every sensible move is legal: the rule only ever removes moves."""
    rng = np.random.default_rng(5)
    game = Game(9, 7.5)
    for _ in range(120):
        moves = sensible_moves(game)
        assert not (moves & ~game.legal_moves()).any()
        choice = np.flatnonzero(moves)
        game.play(int(rng.choice(choice)))
        if game.is_over:
            break


# --- the raw policy ---------------------------------------------------------------

PUBLISHED_9X9 = "docs/results/nets/go9-a0.4.32-gumbel-ema-run2-gen159.keras"


@pytest.fixture(scope="module")
def tiny_net(tmp_path_factory):
    from harness.features import get_encoder
    from harness.nets import build_model, save_model

    model = build_model("a0.tiny", 9, get_encoder("agz17").planes, seed=3)
    path = tmp_path_factory.mktemp("nets") / "tiny.keras"
    save_model(model, path)
    return path


@pytest.mark.parametrize("to_play", [BLACK, WHITE])
def test_the_policy_passes_on_a_settled_board_whatever_the_network_prefers(tiny_net, to_play):
    game = Game.from_ascii(settled(9), to_play=to_play)
    player = parse_player(f"policy:{tiny_net}").build(seed=0)
    assert player.select_move(game) == game.pass_move


def test_the_policy_behind_on_the_count_plays_the_last_dame(tiny_net):
    dame = 4 * 9 + 4
    for to_play, komi in ((BLACK, 40.5), (WHITE, -40.5)):  # the side to move is behind
        game = Game.from_ascii(settled(9, dame=(4, 4)), to_play=to_play, komi=komi)
        assert parse_player(f"policy:{tiny_net}").build(seed=0).select_move(game) == dame


def test_two_raw_policies_finish_their_games_by_two_passes_with_no_string_handed_over():
    from pathlib import Path

    if not Path(PUBLISHED_9X9).is_file():
        pytest.skip(f"{PUBLISHED_9X9} is not in this checkout")
    policy = parse_player(f"policy:{PUBLISHED_9X9}@1")
    black, white = policy.build(seed=1), policy.build(seed=2)
    for seed in range(3):
        played = play_game(black, white, size=9, komi=7.5, seed=seed)
        assert played.reason == "two passes", played.reason
        assert handed_over(played.game) == []
