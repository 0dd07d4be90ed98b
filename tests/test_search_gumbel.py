"""Gumbel AlphaZero search: the paper's properties on small cases, and an
independent slow reference implementation on toy trees and real positions.

The reference functions below are written from the paper (Danihelka et al.,
ICLR 2022, "Policy improvement by planning with Gumbel": sequential halving
with Gumbel, completed Q by the mixed value of appendix D, sigma =
(c_visit + max N) c_scale q-hat, the deterministic non-root rule of
section 5) in plain Python over lists and dictionaries; they share no code
with ``harness.search.gumbel``.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from harness.game.geometry import BLACK
from harness.game.position import Game
from harness.search import BatchedSearch, MCTSConfig, temperature_for
from harness.search import gumbel as G
from harness.search import tree as T
from harness.search.oracle import OracleEvaluator

FLOOR = 1e-30  # priors are floored before the log (the module's stated rule)

# --- the slow reference ---------------------------------------------------------


def ref_schedule(m: int, n: int) -> list[int]:
    """Visits of the considered moves before each of the n simulations: the
    paper's sequential halving, played out move by move."""
    if m <= 1:
        return list(range(n))
    phases = math.ceil(math.log2(m))
    counts = [0] * m
    sequence: list[int] = []
    remaining = m
    while len(sequence) < n:
        per_move = max(1, math.floor(n / (phases * remaining)))
        for _ in range(per_move):
            for i in range(remaining):
                sequence.append(counts[i])
                counts[i] += 1
        remaining = max(2, remaining // 2)
    return sequence[:n]


def ref_sigma(prior, visits, qsum, raw, c_visit=50.0, c_scale=1.0, minmax=False):
    """(sigma(completed Q), completed Q) per child, as lists: completed Q
    mapped to [0, 1] (by the value range [-1, 1], or by the children's min
    and max), times (c_visit + max N) c_scale."""
    k = len(prior)
    p = [max(float(x), FLOOR) for x in prior]
    total = sum(visits)
    seen = [i for i in range(k) if visits[i] > 0]
    if seen:
        weighted = sum(p[i] * qsum[i] / visits[i] for i in seen) / sum(p[i] for i in seen)
        mixed = (raw + total * weighted) / (total + 1)
    else:
        mixed = raw
    completed = [qsum[i] / visits[i] if visits[i] > 0 else mixed for i in range(k)]
    low, high = (min(completed), max(completed)) if minmax else (-1.0, 1.0)
    factor = (c_visit + max(visits)) * c_scale
    return [factor * (q - low) / max(high - low, 1e-8) for q in completed], completed


def ref_improved(prior, sigma) -> list[float]:
    logits = [math.log(max(float(p), FLOOR)) + s for p, s in zip(prior, sigma, strict=True)]
    top = max(logits)
    weights = [math.exp(x - top) for x in logits]
    return [w / sum(weights) for w in weights]


def argmax(scores, allowed) -> int:
    best, best_score = -1, -math.inf
    for i, (score, ok) in enumerate(zip(scores, allowed, strict=True)):
        if ok and score > best_score:
            best, best_score = i, score
    return best


def ref_root_choice(noise, prior, sigma, visits, considered) -> int:
    scores = [g + math.log(max(float(p), FLOOR)) + s
              for g, p, s in zip(noise, prior, sigma, strict=True)]
    return argmax(scores, [v == considered for v in visits])


def ref_interior_choice(prior, sigma, visits) -> int:
    policy = ref_improved(prior, sigma)
    total = sum(visits)
    return argmax([p - v / (1 + total) for p, v in zip(policy, visits, strict=True)],
                  [True] * len(prior))


class RefNode:
    """A node of the reference search: a real Go position and its statistics."""

    def __init__(self, game: Game, evaluator):
        self.game = game
        self.terminal = game.is_over
        if self.terminal:
            score = game.score() if game.to_play == BLACK else -game.score()
            self.value = float(np.sign(score))
            return
        legal = game.legal_moves()
        rows = np.asarray(game.history[-1], np.int8)[None, None, :]
        policy, value = evaluator.evaluate(rows, np.array([game.to_play], np.int8), legal[None])
        self.moves = [int(m) for m in np.flatnonzero(legal)]
        self.prior = [float(policy[0, m]) for m in self.moves]
        self.value = float(value[0])
        self.visits = [0] * len(self.moves)
        self.qsum = [0.0] * len(self.moves)
        self.children: dict[int, RefNode] = {}


def ref_search(game: Game, evaluator, noise_by_move, n: int, k: int, minmax: bool = False):
    """Gumbel AlphaZero's search of ``game`` with ``n`` simulations, one at a
    time: returns (visits by move, move played, improved policy by move)."""
    root = RefNode(game, evaluator)
    noise = [float(noise_by_move[m]) for m in root.moves]
    schedule = ref_schedule(min(k, len(root.moves)), n)

    def simulate(node: RefNode, at_root: bool) -> float:
        """One simulation below ``node``; its value for ``node``'s side to move."""
        if node.terminal:
            return node.value
        sigma, _ = ref_sigma(node.prior, node.visits, node.qsum, node.value, minmax=minmax)
        if at_root:
            i = ref_root_choice(noise, node.prior, sigma, node.visits, schedule[sum(node.visits)])
        else:
            i = ref_interior_choice(node.prior, sigma, node.visits)
        child = node.children.get(i)
        if child is None:
            after = node.game.copy()
            after.play(node.moves[i])
            child = node.children[i] = RefNode(after, evaluator)
            value = -child.value
        else:
            value = -simulate(child, False)
        node.visits[i] += 1
        node.qsum[i] += value
        return value

    for _ in range(n):
        simulate(root, True)
    sigma, _ = ref_sigma(root.prior, root.visits, root.qsum, root.value, minmax=minmax)
    chosen = ref_root_choice(noise, root.prior, sigma, root.visits, max(root.visits))
    points = game.size * game.size + 1
    visits, improved = np.zeros(points, np.int64), np.zeros(points)
    visits[root.moves] = root.visits
    improved[root.moves] = ref_improved(root.prior, sigma)
    return visits, root.moves[chosen], improved


class HashEvaluator:
    """Pseudo-random but fixed priors and values per position (no ties)."""

    def __init__(self, size: int):
        self.size, self.history = size, 1

    def evaluate(self, stones, to_play, legal):
        n, moves = legal.shape
        policy = np.zeros((n, moves), np.float32)
        value = np.zeros(n, np.float32)
        for i in range(n):
            key = zlib.crc32(stones[i, -1].tobytes() + bytes([int(to_play[i])]))
            rng = np.random.default_rng(key)
            logits = np.where(legal[i], rng.normal(0.0, 1.5, moves), -np.inf)
            weights = np.exp(logits - logits.max())
            policy[i] = weights / weights.sum()
            value[i] = rng.uniform(-0.9, 0.9)
        return policy, value


# --- toy trees: hand-made root statistics -----------------------------------------


def toy_tree(prior, visits, qmean, raw):
    """One game's tree: a root with one child per entry (move i)."""
    k = len(prior)
    tree = T.new_tree(1, 1 + k)
    tree.first[0, T.ROOT], tree.count[0, T.ROOT], tree.used[0] = 1, k, 1 + k
    tree.move[0, 1:] = np.arange(k)
    tree.prior[0, 1:] = prior
    tree.visits[0, 1:] = visits
    tree.value[0, 1:] = np.asarray(qmean) * np.asarray(visits)
    tree.visits[0, T.ROOT] = 1 + int(np.sum(visits))
    tree.raw[0, T.ROOT] = raw
    return tree


def random_toys(seed: int, count: int = 300, most: int = 12):
    """Random root statistics (some children unvisited) and their toy trees:
    yields (rng, prior, visits, qsum, raw, tree), qsum as the tree stores it."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        k = int(rng.integers(1, most))
        prior = rng.dirichlet(np.full(k, 0.5)).astype(np.float32)
        visits = np.where(rng.random(k) < 0.6, rng.integers(1, 9, k), 0).astype(np.int32)
        raw = float(np.float32(rng.uniform(-1, 1)))
        tree = toy_tree(prior, visits, rng.uniform(-1, 1, k), raw)
        qsum = [float(tree.value[0, 1 + i]) for i in range(k)]
        yield rng, prior, visits.tolist(), qsum, raw, tree


def params(k: int = 16, c_scale: float = 1.0, minmax: bool = False) -> np.ndarray:
    """The search's parameter vector, as ``BatchedSearch`` builds it from its config."""
    config = MCTSConfig(root="gumbel", gumbel_k=k, c_scale=c_scale,
                        q_normalisation="minmax" if minmax else "range")
    return BatchedSearch(HashEvaluator(5), config).params


# --- sequential halving ----------------------------------------------------------


def ref_allocation(m: int, n: int) -> list[int]:
    """Visits per considered move after the whole schedule, most first."""
    counts = [0] * m
    for considered in ref_schedule(m, n):
        counts[counts.index(considered)] += 1
    return sorted(counts, reverse=True)


def test_halving_schedule_of_16_moves_and_200_simulations_is_the_papers():
    # floor(200 / (4 * 16)) = 3 visits to 16 moves, then 6 more to 8, 12 more
    # to 4, and the remaining 56 simulations shared by the last 2.
    assert ref_allocation(16, 200) == [49, 49, 21, 21, 9, 9, 9, 9] + [3] * 8


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 16, 17, 32])
@pytest.mark.parametrize("n", [1, 2, 8, 16, 50, 200, 801])
def test_compiled_schedule_equals_the_reference(m, n):
    assert [G.considered_visits(m, n, i) for i in range(n)] == ref_schedule(m, n)


@pytest.mark.parametrize(("k", "n", "per_game", "expected"), [
    (4, 16, 1, [6, 6, 2, 2]),
    (16, 200, 1, [49, 49, 21, 21, 9, 9, 9, 9] + [3] * 8),
    (16, 200, 4, [49, 49, 21, 21, 9, 9, 9, 9] + [3] * 8),
    (8, 64, 3, [21, 21, 7, 7, 2, 2, 2, 2]),
])
def test_the_search_spends_its_budget_as_sequential_halving_says(k, n, per_game, expected):
    config = MCTSConfig(playouts=n, root="gumbel", gumbel_k=k, add_noise=True,
                        leaves_per_game=per_game)
    search = BatchedSearch(HashEvaluator(9), config, seed=5)
    result = search.search([Game(9, 7.5)])[0]
    assert sorted(result.visits[result.visits > 0].tolist(), reverse=True) == expected
    # The move is one of the two finalists.
    assert result.visits[result.best_move] == expected[0]


def test_fewer_legal_moves_than_k_consider_every_move():
    # Black may play its six empty points or pass (White's eyes are suicide).
    game = Game.from_ascii("""
. . . X O
. . . X O
X X X X O
O O O O O
O . O . O
""", to_play=BLACK, komi=0.5)
    config = MCTSConfig(playouts=20, root="gumbel", gumbel_k=16, add_noise=True, pass_rule="free")
    result = BatchedSearch(HashEvaluator(5), config, seed=1).search([game])[0]
    legal = np.flatnonzero(game.legal_moves())
    assert legal.size == 7
    assert sorted(result.visits[legal].tolist(), reverse=True) == ref_allocation(7, 20)


# --- toy trees against the reference ------------------------------------------------


@pytest.mark.parametrize("minmax", [False, True])
def test_root_decision_on_random_toy_trees_equals_the_reference(minmax):
    for rng, prior, visits, qsum, raw, tree in random_toys(0):
        noise = rng.gumbel(size=(1, len(prior))).astype(np.float32)
        improved = np.zeros(len(prior))
        move = G.root_decision(tree, 0, noise, params(minmax=minmax), improved)
        sigma, _ = ref_sigma(prior, visits, qsum, raw, minmax=minmax)
        assert move == ref_root_choice(noise[0], prior, sigma, visits, max(visits))
        np.testing.assert_allclose(improved, ref_improved(prior, sigma), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("minmax", [False, True])
def test_interior_choice_on_random_toy_trees_equals_the_reference(minmax):
    for rng, prior, visits, qsum, raw, tree in random_toys(1):
        c_scale = float(rng.choice([0.1, 1.0, 3.0]))
        child = G.interior_child(tree, 0, T.ROOT, params(c_scale=c_scale, minmax=minmax))
        sigma, _ = ref_sigma(prior, visits, qsum, raw, c_scale=c_scale, minmax=minmax)
        assert child - 1 == ref_interior_choice(prior, sigma, visits)


def test_root_choice_follows_the_schedule_on_a_known_toy_tree():
    # Four moves, budget 16: after the first round (one visit each) the
    # schedule keeps visiting moves with 1 visit, best score first.
    prior = np.array([0.4, 0.3, 0.2, 0.1], np.float32)
    visits = np.array([2, 1, 1, 2], np.int32)
    qmean = np.array([0.5, -0.5, 0.9, 0.0])
    noise = np.array([[0.0, 3.0, 0.0, 0.0]], np.float32)
    tree = toy_tree(prior, visits, qmean, raw=0.1)
    # 6 simulations done of 16: the schedule says "moves with 1 visit".
    assert G.considered_visits(4, 16, 6) == 1
    child = G.select_child(tree, 0, T.ROOT, params(k=4), noise, 16)
    qsum = (qmean * visits).tolist()
    sigma, _ = ref_sigma(prior, visits.tolist(), qsum, 0.1)
    expected = ref_root_choice(noise[0], prior, sigma, visits.tolist(), 1)
    assert expected in (1, 2) and child - 1 == expected


@pytest.mark.parametrize("minmax", [False, True])
def test_the_improved_policy_is_worth_at_least_the_prior_on_random_trees(minmax):
    # Paper, section 4: softmax(logits + sigma(completed Q)) never has a lower
    # completed-Q value than the prior, since sigma is increasing in Q.
    gains = []
    for _, prior, visits, qsum, raw, tree in random_toys(2, count=500, most=20):
        improved = np.zeros(len(prior))
        noise = np.zeros((1, len(prior)), np.float32)
        G.root_decision(tree, 0, noise, params(minmax=minmax), improved)
        _, completed = ref_sigma(prior, visits, qsum, raw)
        policy = prior / prior.sum(dtype=np.float64)  # float32 sums miss 1 by ~1e-8
        gain = float(np.dot(improved, completed) - np.dot(policy, completed))
        assert gain >= -1e-12
        gains.append(gain)
    assert np.mean(gains) > 0.05  # and it does improve, not merely tie


# --- real searches -----------------------------------------------------------------


def test_with_a_budget_covering_every_move_the_move_maximises_g_plus_logits_plus_sigma():
    # 5x5, pass kept out: 25 moves, k = 32 and n = 25 visit each exactly once.
    config = MCTSConfig(playouts=25, root="gumbel", gumbel_k=32, add_noise=True)
    for seed in range(6):
        search = BatchedSearch(HashEvaluator(5), config, seed=seed)
        result = search.search([Game(5, 0.5)])[0]
        legal = np.flatnonzero(result.visits)
        assert legal.size == 25 and (result.visits[legal] == 1).all()
        noise = search.slots.noise[0, legal]  # the Gumbel sample this search drew
        q, prior = result.q[legal].astype(np.float64), result.prior[legal]
        sigma = (50.0 + 1) * (q + 1) / 2  # completed Q = Q: every move was visited
        score = noise + np.log(prior) + sigma
        assert result.best_move == legal[np.argmax(score)]
        improved = np.exp(np.log(prior) + sigma - (np.log(prior) + sigma).max())
        np.testing.assert_allclose(result.improved_policy[legal], improved / improved.sum(),
                                   rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("seed", "n", "k", "moves", "minmax"), [
    (0, 8, 4, 0, False), (1, 16, 16, 3, False), (2, 50, 8, 6, False), (3, 30, 2, 9, False),
    (4, 64, 16, 12, False), (5, 16, 16, 0, True), (6, 50, 8, 6, True), (7, 64, 16, 12, True),
])
def test_the_search_equals_the_slow_reference_on_real_positions(seed, n, k, moves, minmax):
    rng = np.random.default_rng(seed)
    game = Game(5, 0.5)
    for _ in range(moves):
        game.play(int(rng.choice(np.flatnonzero(game.legal_moves()[:-1]))))
    evaluator = HashEvaluator(5)
    # The reference searches every legal move: no pass rule, eye fills allowed.
    config = MCTSConfig(playouts=n, root="gumbel", gumbel_k=k, add_noise=True, pass_rule="free",
                        fill_eyes=True, q_normalisation="minmax" if minmax else "range")
    search = BatchedSearch(evaluator, config, seed=seed)
    result = search.search([game])[0]
    visits, move, improved = ref_search(game, evaluator, search.slots.noise[0], n, k, minmax)
    np.testing.assert_array_equal(result.visits, visits)
    assert result.best_move == move
    np.testing.assert_allclose(result.improved_policy, improved, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(result.target(), improved, rtol=1e-5, atol=1e-7)


def test_without_noise_the_search_is_deterministic_and_noise_varies_it():
    config = MCTSConfig(playouts=16, root="gumbel", gumbel_k=8)
    evaluator = HashEvaluator(5)
    quiet = {BatchedSearch(evaluator, config, seed=s).search([Game(5, 0.5)])[0].best_move
             for s in range(8)}
    noisy = {BatchedSearch(evaluator, config, seed=s).search(
        [Game(5, 0.5)], add_noise=True)[0].best_move for s in range(8)}
    assert len(quiet) == 1 and len(noisy) > 1


def test_gumbel_finds_the_capture_that_a_material_oracle_rewards():
    game = Game.from_ascii("""
. . . . .
. X X X .
X O O O .
. X X X .
. . . . .
""", to_play=BLACK, komi=0.5)
    capture = 2 * 5 + 4  # E3
    config = MCTSConfig(playouts=32, root="gumbel", gumbel_k=16)
    search = BatchedSearch(OracleEvaluator(5, value="material", scale=2.0), config, seed=0)
    result = search.search([game])[0]
    assert result.best_move == capture
    assert result.improved_policy.argmax() == capture


def test_temperature_is_never_applied_under_the_gumbel_root():
    config = MCTSConfig(root="gumbel", temperature_moves=30)
    assert temperature_for(0, config) == 0.0
    assert temperature_for(0, MCTSConfig(temperature_moves=30)) == 1.0


def test_bad_gumbel_settings_are_refused():
    with pytest.raises(ValueError, match="root"):
        MCTSConfig(root="gumble")
    with pytest.raises(ValueError, match="gumbel_k"):
        MCTSConfig(root="gumbel", gumbel_k=0)
