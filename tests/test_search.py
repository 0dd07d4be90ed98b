"""Batched PUCT search: known answers on small boards with rules-based oracles."""

from __future__ import annotations

import numpy as np
import pytest

from harness.game import board as K
from harness.game.geometry import BLACK, WHITE, geometry, gtp_to_point
from harness.game.position import Game
from harness.search import (
    BatchedSearch,
    MCTSConfig,
    SearchResult,
    choose_full_search,
    resign_enabled,
    select_move,
    should_resign,
    temperature_for,
)
from harness.search import tree as T
from harness.search.leaves import PASS_RULES, root_moves
from harness.search.moves import best_move
from harness.search.oracle import OracleEvaluator

# White's stone at D5 (row 2, col 3) has one liberty left, D6 above it.
CAPTURE = """
. . . . . . .
. . . . . . .
. . X O X . .
. . . X . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""

# Black's stone in the centre has one liberty (above it); extending there
# gives the group three liberties, anything else loses it.
SAVE = """
. . . . .
. . . . .
. O X O .
. . O . .
. . . . .
"""

# Black walls off most of the board; with White having just passed, Black
# wins at once by passing too.
WON = """
. . X O .
. . X O O
. . X O .
X X X O O
. . X O .
"""

# No symmetry of its own, so its mirror images are all different positions.
LOPSIDED = """
. . . . . . .
. . X . . . .
. . . O . X .
. X . . O . .
. . . . . . .
. . O . . . .
. . . . . . .
"""


def point(row: int, col: int, size: int) -> int:
    return row * size + col


def searcher(game: Game, games: int = 1, **overrides) -> tuple[BatchedSearch, OracleEvaluator]:
    # The mechanics tests search the rules' own move set (pass always legal);
    # tests/test_search_pass_rule.py covers the "finished" pass rule.
    overrides.setdefault("pass_rule", "free")
    evaluator = OracleEvaluator(
        game.size,
        value=overrides.pop("value", "material"),
        priors=overrides.pop("priors", "uniform"),
        scale=overrides.pop("scale", 2.0),
    )
    return BatchedSearch(evaluator, MCTSConfig(**overrides), games=games, seed=7), evaluator


def random_game(size: int, moves: int, seed: int) -> Game:
    rng = np.random.default_rng(seed)
    game = Game(size, komi=0.5)
    for _ in range(moves):
        legal = np.flatnonzero(game.legal_moves()[:-1])
        game.play(int(rng.choice(legal)))
    return game


# --- known answers -----------------------------------------------------------
@pytest.mark.parametrize("per_game", [1, 8])
def test_finds_the_capture(per_game):
    game = Game.from_ascii(CAPTURE, to_play=BLACK, komi=0)
    search, _ = searcher(game, playouts=200, leaves_per_game=per_game)
    result = search.search([game])[0]
    assert result.best_move == point(1, 3, 7)
    assert result.q[point(1, 3, 7)] > 0.5


@pytest.mark.parametrize("per_game", [1, 8])
def test_saves_the_group_in_atari(per_game):
    game = Game.from_ascii(SAVE, to_play=BLACK, komi=0)
    search, _ = searcher(game, playouts=1000, leaves_per_game=per_game)
    result = search.search([game])[0]
    assert result.best_move == point(1, 2, 5)
    assert result.visits[point(1, 2, 5)] > 0.4 * result.visits.sum()


def test_passing_to_win_is_scored_exactly():
    game = Game.from_ascii(WON, to_play=WHITE, komi=0.5)
    game.play(game.pass_move)  # White passes; Black to move
    search, _ = searcher(game, value="area", scale=25.0, playouts=300)
    result = search.search([game])[0]
    assert result.best_move == game.pass_move
    assert result.q[game.pass_move] == pytest.approx(1.0)


def test_finished_game_gets_an_empty_result():
    game = Game(5)
    game.play(game.pass_move)
    game.play(game.pass_move)
    search, evaluator = searcher(game, playouts=10)
    result = search.search([game])[0]
    assert result.playouts == 0 and result.best_move == game.pass_move
    assert evaluator.calls == 0


# --- bookkeeping ---------------------------------------------------------------
@pytest.mark.parametrize("playouts", [1, 7, 64])
@pytest.mark.parametrize("per_game", [1, 4])
def test_visit_counts_sum_to_the_playouts(playouts, per_game):
    game = random_game(7, 6, seed=playouts)
    search, _ = searcher(game, playouts=playouts, leaves_per_game=per_game)
    result = search.search([game])[0]
    assert result.visits.sum() == playouts == result.new_playouts
    assert (result.visits[~game.legal_moves()] == 0).all()


@pytest.mark.parametrize("virtual_loss", [0.0, 3.0])
def test_virtual_loss_is_released_after_every_step(virtual_loss):
    # Without virtual loss every extra descent collides with the first one's
    # pending leaf and must be taken back; with it, descents spread out.
    games = [random_game(7, n, seed=n) for n in (0, 5, 9)]
    search, _ = searcher(games[0], games=3, playouts=60, leaves_per_game=8,
                         virtual_loss=virtual_loss)
    for i, game in enumerate(games):
        search.start(i, game)
    results, steps = {}, 0
    while len(results) < len(games):
        results.update(search.step())
        steps += 1
        assert not search.tree.inflight.any()
    assert all(r.visits.sum() == 60 for r in results.values())
    if virtual_loss:
        assert steps < 30  # several leaves per step really were gathered
    else:
        assert steps > 40  # mostly one leaf per game: the rest collided


def _expanded_nodes(tree, g: int = 0):
    used = tree.used[g]
    return [n for n in range(used) if tree.first[g, n] >= 0]


def test_noise_touches_only_the_root_priors():
    game = random_game(7, 4, seed=3)
    legal = game.legal_moves()
    search, _ = searcher(game, playouts=100, add_noise=True)
    result = search.search([game])[0]
    uniform = 1.0 / legal.sum()
    assert result.prior.sum() == pytest.approx(1.0, abs=1e-5)
    assert (result.prior[~legal] == 0).all()
    assert np.abs(result.prior[legal] - uniform).max() > 0.01  # noise reached the root
    tree = search.tree
    for node in _expanded_nodes(tree):
        f, count = tree.first[0, node], tree.count[0, node]
        np.testing.assert_array_equal(tree.prior[0, f : f + count], np.float32(1.0 / count))
    # Noise is per search: the root's clean priors are back afterwards too.
    assert tree.count[0, T.ROOT] == legal.sum()


def test_no_noise_without_asking():
    game = random_game(7, 4, seed=3)
    search, _ = searcher(game, playouts=30)
    result = search.search([game])[0]
    legal = game.legal_moves()
    np.testing.assert_allclose(result.prior[legal], 1.0 / legal.sum(), rtol=1e-6)


def _transform(board: np.ndarray, k: int) -> np.ndarray:
    return np.rot90(board.T if k >= 4 else board, k % 4)


@pytest.mark.parametrize("k", [1, 4, 6])
def test_mirror_image_gets_mirrored_visits(k):
    game = Game.from_ascii(LOPSIDED, to_play=BLACK, komi=0.5)
    chars = {0: ".", 1: "X", 2: "O"}
    image = _transform(game.board, k)
    twin = Game.from_ascii("\n".join(" ".join(chars[int(v)] for v in row) for row in image),
                           to_play=BLACK, komi=0.5)
    results = []
    for g in (game, twin):
        search, _ = searcher(g, value="area", priors="pattern", scale=10.0, playouts=300)
        results.append(search.search([g])[0])
    size = game.size
    expected = _transform(results[0].visits[:-1].reshape(size, size), k)
    np.testing.assert_array_equal(results[1].visits[:-1].reshape(size, size), expected)
    assert results[1].visits[-1] == results[0].visits[-1]
    assert len(np.unique(results[0].visits)) > 5  # a real, uneven search


# --- tree reuse ------------------------------------------------------------------
def _child_visits(search: BatchedSearch, move: int) -> tuple[int, np.ndarray]:
    tree, size = search.tree, search.size
    child = T.find_child(tree, 0, T.ROOT, move)
    visits = np.zeros(size * size + 1, np.int32)
    f, count = tree.first[0, child], tree.count[0, child]
    visits[tree.move[0, f : f + count]] = tree.visits[0, f : f + count]
    return int(tree.visits[0, child]), visits


@pytest.mark.parametrize("explicit", [True, False])
def test_tree_reuse_keeps_the_childs_statistics(explicit):
    game = Game.from_ascii(CAPTURE, to_play=BLACK, komi=0)
    search, evaluator = searcher(game, playouts=300)
    move = search.search([game])[0].best_move
    child_visits, grandchildren = _child_visits(search, move)
    assert child_visits > 10
    game.play(move)
    if explicit:
        search.advance(0, move)
    calls = evaluator.calls
    result = search.search([game], playouts=child_visits - 1)[0]
    assert evaluator.calls == calls  # nothing new had to be evaluated
    assert result.new_playouts == 0
    np.testing.assert_array_equal(result.visits, grandchildren)
    # A bigger budget only adds the difference.
    result = search.search([game], playouts=child_visits + 20)[0]
    assert result.visits.sum() == child_visits + 20 and result.new_playouts == 21


def test_tree_follows_the_opponents_reply():
    game = Game.from_ascii(CAPTURE, to_play=BLACK, komi=0)
    search, _ = searcher(game, playouts=400)
    move = search.search([game])[0].best_move
    game.play(move)
    reply = search.search([game], playouts=1)[0].best_move  # reuses, adds nothing
    reply_visits, expected = _child_visits(search, reply)
    assert reply_visits > 2
    game.play(reply)
    result = search.search([game], playouts=1)[0]
    assert result.new_playouts == 0
    np.testing.assert_array_equal(result.visits, expected)


def test_a_different_game_clears_the_tree():
    game = Game.from_ascii(CAPTURE, to_play=BLACK, komi=0)
    search, _ = searcher(game, playouts=50)
    search.search([game])
    other = random_game(7, 3, seed=1)
    result = search.search([other])[0]
    assert result.new_playouts == 50 and result.visits.sum() == 50


# --- many games at once ------------------------------------------------------------
@pytest.mark.parametrize("per_game", [1, 4])
def test_batched_equals_one_at_a_time(per_game):
    games = [random_game(7, n, seed=10 + n) for n in (0, 3, 8, 13, 20)]
    options = dict(value="area", priors="pattern", scale=10.0, playouts=80,
                   leaves_per_game=per_game)
    together, _ = searcher(games[0], games=len(games), **options)
    batched = together.search(games)
    for game, result in zip(games, batched, strict=True):
        alone, _ = searcher(game, **options)
        single = alone.search([game])[0]
        np.testing.assert_array_equal(result.visits, single.visits)
        assert result.root_value == single.root_value


@pytest.mark.parametrize("per_game", [1, 3])
def test_overlapped_groups_search_exactly_as_without_overlap(per_game):
    # Each tree depends only on its own evaluations, so evaluating the two
    # slot groups on worker threads beside the tree work changes nothing.
    games = [random_game(7, n, seed=20 + n) for n in (0, 2, 5, 9, 14, 21)]
    options = dict(value="material", priors="pattern", scale=10.0, playouts=60,
                   leaves_per_game=per_game)
    plain, _ = searcher(games[0], games=len(games), **options)
    overlapped, _ = searcher(games[0], games=len(games), overlap=True, **options)
    for a, b in zip(plain.search(games), overlapped.search(games), strict=True):
        np.testing.assert_array_equal(a.visits, b.visits)
        assert a.root_value == b.root_value
    assert overlapped.evaluations == plain.evaluations
    overlapped.close()


def test_stopping_an_overlapped_search_reports_each_result_once():
    games = [random_game(7, n, seed=n) for n in (1, 3, 6, 8)]
    search, _ = searcher(games[0], games=4, overlap=True, playouts=30)
    for i, game in enumerate(games):
        search.start(i, game, playouts=30 if i else 3)
    results = dict(search.step())  # both groups are in flight now
    stopped = search.stop(0)  # the evaluation carrying slot 0 lands first
    assert stopped.visits.sum() <= 3
    while search.searching:
        for slot, result in search.step():
            assert slot not in results and slot != 0
            results[slot] = result
    assert sorted(results) == [1, 2, 3]
    assert all(r.visits.sum() == 30 for r in results.values())


def test_start_and_step_keep_slots_independent():
    games = [random_game(7, n, seed=n) for n in (2, 4)]
    search, _ = searcher(games[0], games=2, playouts=40)
    search.start(0, games[0])
    search.start(1, games[1], playouts=5)
    done = {}
    while len(done) < 2:
        done.update(search.step())
    assert done[0].visits.sum() == 40 and done[1].visits.sum() == 5
    with pytest.raises(RuntimeError):
        search.start(0, games[0])
        search.start(0, games[0])


# --- decisions -----------------------------------------------------------------------
def _result(visits) -> SearchResult:
    visits = np.asarray(visits, np.int32)
    q = np.where(visits > 0, 0.1, np.nan).astype(np.float32)
    prior = np.full(visits.size, 1 / visits.size, np.float32)
    return SearchResult(visits, q, prior, 0.0, int(np.argmax(visits)))


def test_temperature_zero_picks_the_most_visited_move():
    result = _result([0, 3, 9, 2, 0, 8])
    assert select_move(result, 0.0) == 2
    rng = np.random.default_rng(0)
    picks = np.bincount([select_move(result, 1.0, rng) for _ in range(4000)], minlength=6)
    np.testing.assert_allclose(picks / 4000, result.visits / 22, atol=0.03)
    assert picks[0] == picks[4] == 0


def test_temperature_schedule():
    config = MCTSConfig(temperature_moves=10)
    assert temperature_for(9, config) == 1.0 and temperature_for(10, config) == 0.0


def test_cazenave_second_best_choice_follows_the_paper():
    """Runner-up played with probability n2/(n1+n2) when n2 > 0.8 n1, never otherwise."""
    from harness.players.choice import tournament_choice

    rng = np.random.default_rng(1)
    close = [tournament_choice(np.array([0, 50, 45]), rng) for _ in range(2000)]
    assert abs(close.count(2) / 2000 - 45 / 95) < 0.04
    assert {tournament_choice(np.array([0, 50, 40]), rng) for _ in range(50)} == {1}


def test_resignation_rule():
    config = MCTSConfig(resign_threshold=-0.9, resign_disabled_fraction=0.2)
    losing = _result([0, 10, 5])
    losing.root_value = -0.95
    losing.q[1] = -0.97
    assert should_resign(losing, config)
    assert not should_resign(losing, config, enabled=False)
    losing.q[1] = -0.5  # the best move still has hope
    assert not should_resign(losing, config)
    rng = np.random.default_rng(2)
    enabled = np.mean([resign_enabled(rng, config) for _ in range(5000)])
    assert enabled == pytest.approx(0.8, abs=0.02)
    assert not resign_enabled(rng, MCTSConfig())


def test_playout_cap_randomisation_flags_the_right_fraction():
    config = MCTSConfig(playouts=12, fast_playouts=3, full_search_prob=0.25, add_noise=True,
                        pass_rule="free")
    rng = np.random.default_rng(3)
    assert np.mean([choose_full_search(rng, config) for _ in range(20000)]) == pytest.approx(
        0.25, abs=0.01
    )
    games = [random_game(5, n % 7, seed=n) for n in range(48)]
    search = BatchedSearch(OracleEvaluator(5), config, games=len(games), seed=4)
    results = search.search(games)
    search.reset()  # else the second pass would reuse the first pass's trees
    results += search.search(games)
    full = [r for r in results if r.full]
    assert 10 <= len(full) <= 38  # 24 expected of 96, binomial sd 4.2
    assert all(r.visits.sum() == 12 for r in full)
    assert all(r.visits.sum() == 3 for r in results if not r.full)
    for game, r in zip(games + games, results, strict=True):
        legal = game.legal_moves()
        noisy = np.abs(r.prior[legal] - 1.0 / legal.sum()).max() > 1e-6
        assert noisy == r.full  # noise on full searches only


# --- an independent reference -------------------------------------------------------
class _Node:
    def __init__(self, prior: float):
        self.prior = prior
        self.visits = 0
        self.value = 0.0  # for the player who moved into this node
        self.children: dict[int, _Node] = {}
        self.terminal: float | None = None


def _reference_search(game: Game, evaluator, playouts: int, config: MCTSConfig) -> np.ndarray:
    """PUCT written plainly over Game objects and dicts, from the formulas
    (AlphaZero c(s), FPU from the visited prior mass, ties to the larger prior)."""
    import math

    from harness.search.leaves import history_rows

    def evaluate(g: Game) -> float:
        legal = g.legal_moves()
        rows = history_rows(g, evaluator.history)[None]
        policy, value = evaluator.evaluate(rows, np.array([g.to_play], np.int8), legal[None])
        return policy[0], legal, float(np.float32(value[0]))

    def child_for(node: _Node, fpu_reduction: float) -> tuple[int, _Node]:
        parent_q = -node.value / node.visits
        mass = 0.0
        for child in node.children.values():
            if child.visits > 0:
                mass += child.prior
        fpu = parent_q - fpu_reduction * math.sqrt(mass)
        cs = config.c_puct + math.log((1.0 + node.visits + config.c_base) / config.c_base)
        scale = cs * math.sqrt(max(node.visits, 1.0))
        best, best_score, best_prior = None, -math.inf, -1.0
        for move, child in node.children.items():
            q = child.value / child.visits if child.visits > 0 else fpu
            score = q + scale * child.prior / (1.0 + child.visits)
            if score > best_score or (score == best_score and child.prior > best_prior):
                best, best_score, best_prior = (move, child), score, child.prior
        return best

    root = _Node(1.0)
    for playout in range(playouts + 1):
        g, node, path = game.copy(), root, [root]
        while node.children:
            move, node = child_for(node, config.root_fpu_reduction if node is root
                                   else config.fpu_reduction)
            g.play(move)
            path.append(node)
        if node.terminal is None and g.passes >= 2:
            score = g.score() * (1 if g.to_play == BLACK else -1)
            node.terminal = float(np.sign(score))
        if node.terminal is not None:
            value = node.terminal
        else:
            policy, legal, value = evaluate(g)
            for move in np.flatnonzero(legal):
                node.children[int(move)] = _Node(float(np.float32(policy[move])))
        for n in reversed(path):
            value = -value
            n.visits += 1
            n.value += value
        assert playout > 0 or root.visits == 1
    visits = np.zeros(game.size * game.size + 1, np.int32)
    for move, child in root.children.items():
        visits[move] = child.visits
    return visits


@pytest.mark.parametrize("text", [CAPTURE, LOPSIDED])
def test_agrees_with_a_plain_reference_implementation(text):
    game = Game.from_ascii(text, to_play=BLACK, komi=0.5)
    config = MCTSConfig(playouts=150)
    evaluator = OracleEvaluator(game.size, value="area", priors="pattern", scale=10.0)
    expected = _reference_search(game, evaluator, 150, config)
    result = BatchedSearch(evaluator, config).search([game])[0]
    np.testing.assert_array_equal(result.visits, expected)


def test_agrees_with_the_reference_through_passes_and_scoring():
    game = Game.from_ascii(WON, to_play=WHITE, komi=0.5)
    game.play(game.pass_move)
    config = MCTSConfig(playouts=200, fill_eyes=True)  # the reference may fill eyes
    evaluator = OracleEvaluator(game.size, value="area", priors="pattern", scale=25.0)
    expected = _reference_search(game, evaluator, 200, config)
    result = BatchedSearch(evaluator, config).search([game])[0]
    np.testing.assert_array_equal(result.visits, expected)


def test_visit_counts_add_up_in_every_node():
    games = [random_game(7, n, seed=n) for n in (1, 6)]
    search, _ = searcher(games[0], games=2, playouts=120, leaves_per_game=6)
    search.search(games)
    tree = search.tree
    for g in range(2):
        for node in _expanded_nodes(tree, g):
            f, count = tree.first[g, node], tree.count[g, node]
            assert tree.visits[g, node] == 1 + tree.visits[g, f : f + count].sum()


def test_stop_returns_the_search_so_far():
    game = Game.from_ascii(CAPTURE, to_play=BLACK, komi=0)
    search, _ = searcher(game, playouts=1000)
    search.start(0, game)
    for _ in range(41):  # the root's evaluation, then one playout per step
        assert search.step() == []
    result = search.stop(0)
    assert result.visits.sum() == 40 and search.searching == 0
    with pytest.raises(RuntimeError):
        search.stop(0)


# --- exact endgames ---------------------------------------------------------------
def _nogo_endgame(seed: int, legal_left: int = 7) -> Game:
    """A 5x5 NoGo position from random play with only a few legal moves left."""
    rng = np.random.default_rng(seed)
    game = Game(5, 0, "nogo")
    while (legal := np.flatnonzero(game.legal_moves())).size > legal_left:
        game.play(int(rng.choice(legal)))
    return game


def _solve(game: Game, memo: dict) -> int:
    """+1 if the side to move wins with perfect play, -1 if it loses (NoGo:
    whoever cannot move loses), by plain exhaustive search."""
    key = (game.stones.tobytes(), game.to_play)
    if key not in memo:
        memo[key] = -1
        for move in np.flatnonzero(game.legal_moves()):
            after = game.copy()
            after.play(int(move))
            if _solve(after, memo) == -1:
                memo[key] = 1
                break
    return memo[key]


@pytest.mark.parametrize("seed", [1, 4, 6, 7, 8, 9, 11, 12])
def test_finds_the_winning_move_of_nogo_endgames(seed):
    # With values that say nothing (always 0) only the exact results of
    # finished games guide the search: it must agree with exhaustive search.
    game = _nogo_endgame(seed)
    memo: dict = {}
    outcome = {}
    for move in np.flatnonzero(game.legal_moves()):
        after = game.copy()
        after.play(int(move))
        outcome[int(move)] = -_solve(after, memo)
    assert 1 in outcome.values() and -1 in outcome.values()  # a real choice
    search = BatchedSearch(OracleEvaluator(5, value="zero"), MCTSConfig(playouts=3000))
    result = search.search([game])[0]
    assert outcome[result.best_move] == 1


def lexsort_best_move(visits, q, prior):
    """The rule as numpy states it: most visits, then value (NaN lowest),
    then prior, then the lowest index; with no visits, the highest prior."""
    index = -np.arange(visits.size)
    if visits.max(initial=0) <= 0:
        return int(np.lexsort((index, prior))[-1])
    q_sorted = np.where(np.isnan(q), -np.inf, q)
    return int(np.lexsort((index, prior, q_sorted, visits))[-1])


def test_the_compiled_best_move_follows_the_tie_break_rule():
    rng = np.random.default_rng(0)
    for trial in range(500):
        moves = int(rng.integers(1, 30))
        visits = rng.integers(0, 4, moves).astype(np.int32) * int(trial % 5 != 0)
        q = np.where(visits > 0, rng.integers(-2, 3, moves) / 2, np.nan)
        prior = (rng.integers(1, 4, moves) / 4).astype(np.float32)
        assert best_move(visits, q, prior) == lexsort_best_move(visits, q, prior)


def test_root_moves_are_the_legal_moves_less_own_eyes_and_an_early_pass():
    # Black to play; a1 is Black's own eye, so it leaves the list; pass is
    # out while playable points remain.
    game = Game(5, 0.5)
    for vertex in ("b1", "e5", "a2", "e4", "b2", "d5"):
        game.play(gtp_to_point(vertex, 5))
    legal = np.zeros(26, np.bool_)
    roots = K.new_boards(1, 5)
    geo = geometry(5)
    count = root_moves(game.boards, roots, 0, game.komi, geo.neighbours, geo.diagonals,
                       geo.zobrist, legal, K.new_work(25), PASS_RULES["finished"], False)
    expected = game.legal_moves()
    eye = gtp_to_point("a1", 5)
    assert expected[eye] and expected[25]
    expected[eye] = expected[25] = False
    assert np.array_equal(legal, expected) and count == expected.sum()
    assert np.array_equal(roots.stones[0], game.stones)
