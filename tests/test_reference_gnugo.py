"""The compiled kernel against GNU Go 3.8 over GTP, move by move.

Reference: GNU Go 3.8 (``/usr/games/gnugo --mode gtp --chinese-rules``, driven
by ``harness.players.gtp_client``). Random 9x9 games are played by the kernel and
replayed into GNU Go. Before every move, GNU Go's ``is_legal`` for every point
must equal the kernel's legal mask (GNU Go forbids suicide; it is run with its
default simple ko for simple-ko games and with ``--positional-superko`` for
superko games); after every move, its ``captures black/white`` must equal the
kernel's counts. Games are played to completion the way playouts are (no move
fills one's own true eye, so no dead stones remain in most final positions);
where GNU Go's ``final_status_list dead`` is empty, its ``final_score`` must
equal the kernel's Tromp-Taylor count with komi. Positions where GNU Go still
sees dead stones are counted and skipped (its score then differs by design).
A hand-built triple ko checks the one ko case random games rarely reach.

Default run: 8 games (a few seconds); slow run: 200 games (about a minute;
197 of them end without dead stones and have their scores compared).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from test_rules_positions import TRIPLE_KO, TRIPLE_KO_CYCLE

from harness.game import board as K
from harness.game.geometry import BLACK, WHITE, geometry, gtp_to_point, point_to_gtp
from harness.game.position import Game
from harness.game.result import parse_result, result_from_score

pytestmark = pytest.mark.gnugo

SIZE, KOMI = 9, 7.5
RULES = {"simple-ko": (K.SIMPLE_KO, False), "superko": (K.POSITIONAL_SUPERKO, True)}


@dataclass
class Tally:
    games: int = 0
    positions: int = 0
    illegal_points: int = 0
    ko_bans: int = 0
    superko_bans: int = 0
    captures: int = 0
    scores_compared: int = 0
    scores_skipped_dead_stones: int = 0


def ascii_board(stones: np.ndarray) -> str:
    return "\n".join(" ".join(".XO"[v] for v in stones.reshape(SIZE, SIZE)[r]) for r in range(SIZE))


def play_against_gnugo(gnugo, rules: str, seed: int, tally: Tally, pass_rate=0.01) -> None:
    rule, _ = RULES[rules]
    geo = geometry(SIZE)
    nbr, diag, zob = geo.neighbours, geo.diagonals, geo.zobrist
    n = SIZE * SIZE
    boards = K.new_boards(1, SIZE, rule)
    rng = np.random.default_rng(seed)
    mask = np.zeros(n + 1, np.bool_)
    vertices = [point_to_gtp(p, SIZE) for p in range(n)]
    gnugo.send_many([f"boardsize {SIZE}", "clear_board", f"komi {KOMI:g}"])
    where = f"{rules} game seed {seed}"
    pending: list[str] = []  # the last move, sent together with the next questions
    while boards.meta[0, K.PASSES] < 2 and boards.meta[0, K.MOVES] < 3 * n:
        color = int(boards.meta[0, K.TO_PLAY])
        letter = "b" if color == BLACK else "w"
        questions = [f"is_legal {letter} {v}" for v in vertices]
        answers = gnugo.send_many([*pending, "captures black", "captures white", *questions])
        answers = answers[len(pending) :]
        stones = boards.stones[0]
        moves = int(boards.meta[0, K.MOVES])
        context = f"{where}, move {moves + 1}, {letter} to play:\n{ascii_board(stones)}"
        caps = (int(boards.meta[0, K.CAPS_BLACK]), int(boards.meta[0, K.CAPS_WHITE]))
        assert (int(answers[0]), int(answers[1])) == caps, f"captures differ ({context})"
        gnugo_legal = np.array([a == "1" for a in answers[2:]])
        K.legal_mask(boards, 0, nbr, zob, mask)
        if not np.array_equal(gnugo_legal, mask[:n]):
            only_kernel = [vertices[p] for p in np.flatnonzero(mask[:n] & ~gnugo_legal)]
            only_gnugo = [vertices[p] for p in np.flatnonzero(gnugo_legal & ~mask[:n])]
            raise AssertionError(
                f"legal moves differ ({context})\nlegal for the kernel only: {only_kernel}\n"
                f"legal for GNU Go only: {only_gnugo}"
            )
        tally.positions += 1
        tally.illegal_points += int((stones == 0).sum() - gnugo_legal.sum())
        for q in np.flatnonzero(stones == 0):
            code = K.check_move(boards, 0, q, color, nbr, zob)
            tally.ko_bans += code == K.KO_BAN
            tally.superko_bans += code == K.SUPERKO
        candidates = [
            p for p in np.flatnonzero(mask[:n]) if not K.is_eye(boards, 0, p, color, nbr, diag)
        ]
        # A voluntary pass never answers a pass: games end only when neither side
        # has a move left, so the final position is finished (GNU Go does not
        # count unsettled regions as anyone's area).
        after_pass = boards.meta[0, K.PASSES] > 0
        voluntary = not after_pass and rng.random() < pass_rate
        p = n if not candidates or voluntary else int(rng.choice(candidates))
        tally.captures += K.play(boards, 0, p, nbr, zob)
        pending = [f"play {letter} {point_to_gtp(p, SIZE)}"]
    gnugo.send_many(pending)
    dead = gnugo.send("final_status_list dead").split()
    if dead:
        tally.scores_skipped_dead_stones += 1
    else:
        owner = np.zeros(n, np.int32)
        ours = result_from_score(K.area_score(boards, 0, nbr, owner) - KOMI)
        theirs = parse_result(gnugo.send("final_score"))
        assert theirs == ours, (
            f"final score differs ({where}): GNU Go {theirs.to_sgf()}, kernel {ours.to_sgf()}\n"
            f"{ascii_board(boards.stones[0])}"
        )
        tally.scores_compared += 1
    tally.games += 1


def run_games(gnugo_factory, games: int, seed0: int) -> Tally:
    tally = Tally()
    engines = {rules: gnugo_factory(positional_superko=psk) for rules, (_, psk) in RULES.items()}
    for i in range(games):
        rules = ("simple-ko", "superko")[i % 2]
        play_against_gnugo(engines[rules], rules, seed0 + i, tally)
    print(f"\nGNU Go comparison: {tally}")
    return tally


def test_kernel_agrees_with_gnugo(gnugo_factory):
    tally = run_games(gnugo_factory, 8, seed0=0)
    assert tally.positions > 500 and tally.captures > 50
    assert tally.scores_compared >= 4


@pytest.mark.slow
def test_kernel_agrees_with_gnugo_200_games(gnugo_factory):
    tally = run_games(gnugo_factory, 200, seed0=1000)
    assert tally.scores_compared >= 100



@pytest.mark.parametrize(("rules", "superko"), [("simple-ko", False), ("superko", True)])
def test_triple_ko_cycle_is_judged_like_gnugo(gnugo_factory, rules, superko):
    """Reference: GNU Go with its simple ko, or with ``--positional-superko``.

    The triple-ko position of ``test_rules_positions`` is built stone by stone
    in both; after five ko captures, the sixth (which would recreate the start)
    must be legal under simple ko and illegal under positional superko in both.
    """
    game = Game.from_ascii(TRIPLE_KO, BLACK, rules=rules)
    gnugo = gnugo_factory(positional_superko=superko)
    gnugo.send_many([f"boardsize {SIZE}", "clear_board"])
    gnugo.send_many(
        f"play {'b' if game.stones[p] == BLACK else 'w'} {point_to_gtp(p, SIZE)}"
        for p in np.flatnonzero(game.stones)
    )
    *cycle, last = TRIPLE_KO_CYCLE
    for vertex in cycle:
        letter = "b" if game.to_play == BLACK else "w"
        game.play(gtp_to_point(vertex, SIZE))
        gnugo.send(f"play {letter} {vertex}")
    assert game.to_play == WHITE
    ours = game.is_legal(gtp_to_point(last, SIZE))
    theirs = gnugo.send(f"is_legal w {last}") == "1"
    assert ours == theirs == (not superko)
