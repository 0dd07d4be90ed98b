"""A step's raw-policy games: the learner against pool opponents, all at once.

Policy-gradient self-play needs thousands of whole games and no search, so
every game of a step lives in one :class:`harness.game.board.Boards` batch:
per ply one compiled kernel fills every game's candidate moves and one
forward pass per network (the learner's, each opponent's) covers every game
in which it is to move. Python touches a ply, never a game.

A side picks among the endgame rule's sensible moves
(:func:`harness.game.endgame.drop_senseless`: no own eyes, no strings handed
over), and may pass only while the count does not lose for it or when
nothing sensible is left: the rule :func:`harness.players.choice.no_losing_pass`
applies to the raw players that are later measured, here built into the
candidates so that a sampled move is always the move played (REINFORCE needs
the probability of what was played). The learner's moves are recorded with
what the update needs (history, candidates, the policy and value at the
time); the opponents' are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from harness.game import board as K
from harness.game.endgame import drop_senseless
from harness.game.geometry import BLACK, WHITE, geometry
from harness.game.position import RULE_NAMES, move_cap


@njit(cache=True)
def candidates_into(b, games, komi, nbr, diag, zob, out, work):
    """Fill ``out[i]`` (bool, P + 1) with the moves game ``games[i]``'s side to
    move may pick: legal, not senseless, and pass only when it does not lose
    on the Tromp-Taylor count or nothing else is left."""
    pass_move = out.shape[1] - 1
    for i in range(games.shape[0]):
        g = games[i]
        row = out[i]
        K.legal_into(b, g, nbr, zob, row, work.superko)
        drop_senseless(b, g, nbr, diag, row, work)  # leaves the count in work.owner
        other = False
        for p in range(pass_move):
            if row[p]:
                other = True
                break
        if other:
            area = 0
            for p in range(pass_move):
                area += work.owner[p]
            margin = area - komi
            if b.meta[g, K.TO_PLAY] == WHITE:
                margin = -margin
            if margin <= 0:
                row[pass_move] = False


@njit(cache=True)
def play_into(b, games, moves, nbr, zob):
    """Play ``moves[i]`` in game ``games[i]`` (each a candidate, so legal)."""
    for i in range(games.shape[0]):
        K.play(b, games[i], moves[i], nbr, zob)


@njit(cache=True)
def final_margins(b, games, komi, nbr):
    """Black's area minus White's minus komi, per game."""
    owner = np.empty(b.stones.shape[1], np.int32)
    out = np.empty(games.shape[0], np.float64)
    for i in range(games.shape[0]):
        out[i] = K.area_score(b, games[i], nbr, owner) - komi
    return out


def sample_rows(policy: np.ndarray, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """One move per row of ``policy`` (probabilities, zero off the candidates),
    drawn from ``policy ** (1 / temperature)`` renormalised."""
    weights = policy.astype(np.float64)
    if temperature != 1.0:
        weights = np.where(weights > 0, np.power(np.maximum(weights, 1e-300), 1.0 / temperature),
                           0.0)
    cdf = np.cumsum(weights, axis=1)
    u = rng.random(len(weights)) * cdf[:, -1]
    moves = (cdf < u[:, None]).sum(axis=1)
    # A draw at the very top of the cdf lands past the last candidate: take it.
    last = weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
    return np.minimum(moves, last)


def uniform_rows(candidates: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random candidate per row, pass only when it is the only one."""
    weights = candidates.astype(np.float64)
    weights[candidates[:, :-1].any(axis=1), -1] = 0.0
    return sample_rows(weights, 1.0, rng)


class RawGames:
    """``n`` raw-policy games advancing together, one ply at a time: the
    boards, each game's last ``history`` positions and the games still going.
    What a loop adds (whose turn it is to pick, what it records) is its own;
    the per-ply work around it is here: :meth:`candidates`, then
    :meth:`play`, then :meth:`retire`."""

    def __init__(self, n: int, *, size: int, rules: str, history: int, max_moves: int):
        self.geo = geometry(size)
        self.points = size * size
        self.limit = move_cap(size, max_moves)
        self.boards = K.new_boards(n, size, RULE_NAMES[rules])
        self.work = K.new_work(self.points)
        self.hist = np.zeros((n, history, self.points), np.int8)
        self.active = np.arange(n)
        self.ply = 0

    def candidates(self, komi: float) -> tuple[np.ndarray, np.ndarray]:
        """The going games' candidate moves (A, P + 1) and sides to move (A,)."""
        out = np.zeros((self.active.size, self.points + 1), np.bool_)
        candidates_into(self.boards, self.active, float(komi), self.geo.neighbours,
                        self.geo.diagonals, self.geo.zobrist, out, self.work)
        return out, self.boards.meta[self.active, K.TO_PLAY].astype(np.int8)

    def play(self, chosen: np.ndarray) -> None:
        """Play one candidate per going game and push the new positions onto the histories."""
        active, hist = self.active, self.hist
        play_into(self.boards, active, chosen, self.geo.neighbours, self.geo.zobrist)
        hist[active, :-1] = hist[active, 1:]
        hist[active, -1] = self.boards.stones[active]
        self.ply += 1

    def retire(self) -> None:
        """Stop the games ended by two passes or the move cap."""
        over = (self.boards.meta[self.active, K.PASSES] >= 2) | (self.ply >= self.limit)
        self.active = self.active[~over]

    def margins(self, komi: float) -> np.ndarray:
        """Black's area minus White's minus komi, per game."""
        return final_margins(self.boards, np.arange(self.boards.stones.shape[0]), float(komi),
                             self.geo.neighbours)


@dataclass
class StepGames:
    """A step's games and the learner's moves in them.

    Per learner move (M rows): ``history`` (M, T, P) int8 stones, oldest
    first, ``to_play`` (M,), ``candidates`` (M, P + 1) bool, ``move`` (M,),
    ``policy`` (M, P + 1) the learner's softmax at temperature 1 over the
    candidates, ``value`` (M,) its value head in [-1, 1] for the side to move,
    ``game`` (M,) the game's index. Per game (N): ``learner_color``,
    ``opponent`` (index into the step's opponents), ``margin`` (Black - White
    - komi), ``length`` (moves played), ``moves`` (N, max length) the moves,
    -1 after the end.
    """

    history: np.ndarray
    to_play: np.ndarray
    candidates: np.ndarray
    move: np.ndarray
    policy: np.ndarray
    value: np.ndarray
    game: np.ndarray
    learner_color: np.ndarray
    opponent: np.ndarray
    margin: np.ndarray
    length: np.ndarray
    moves: np.ndarray
    evaluations: int = 0  # positions sent to a network (learner and opponents)

    @property
    def winner(self) -> np.ndarray:
        """BLACK, WHITE or 0 (a drawn count) per game."""
        return np.where(self.margin > 0, BLACK, np.where(self.margin < 0, WHITE, 0))

    @property
    def learner_outcome(self) -> np.ndarray:
        """+1 a learner win, -1 a loss, 0 a draw, per game."""
        winner = self.winner
        return np.where(winner == 0, 0.0, np.where(winner == self.learner_color, 1.0, -1.0))

    @property
    def outcome(self) -> np.ndarray:
        """The final outcome for the side to move at each learner move."""
        return self.learner_outcome[self.game]


def play_step_games(learner, opponents: list, games: int, *, size: int, komi: float,
                    rules: str, history: int, rng: np.random.Generator,
                    temperature: float = 1.0, opening_moves: int = 0, max_moves: int = 0,
                    parallel: int = 0) -> StepGames:
    """Play ``games`` games of ``learner`` against ``opponents`` to the end.

    ``learner`` and each opponent are evaluators (``evaluate(stones, to_play,
    candidates) -> (policy, value)``, :class:`harness.search.NetworkEvaluator`
    at policy temperature 1). Game ``i`` is against opponent ``(i // 2) %
    len(opponents)`` with the learner Black in even games, so every opponent
    meets both colours; ``parallel`` games are in flight at once (0: all).
    """
    if not opponents:
        raise ValueError("play_step_games needs at least one opponent")
    parallel = parallel or games
    parts = []
    for first in range(0, games, parallel):
        index = np.arange(first, min(games, first + parallel))
        parts.append(_play_wave(learner, opponents, index, size=size, komi=komi, rules=rules,
                                history=history, rng=rng, temperature=temperature,
                                opening_moves=opening_moves, max_moves=max_moves))
    return _concat(parts)


def _play_wave(learner, opponents, index, *, size, komi, rules, history, rng, temperature,
               opening_moves, max_moves) -> StepGames:
    n = len(index)
    wave = RawGames(n, size=size, rules=rules, history=history, max_moves=max_moves)
    points = wave.points
    learner_color = np.where(index % 2 == 0, BLACK, WHITE).astype(np.int8)
    opponent = (index // 2) % len(opponents)
    moves = np.full((n, wave.limit), -1, np.int16)
    rec: dict[str, list] = {k: [] for k in ("history", "to_play", "candidates", "move",
                                            "policy", "value", "game")}
    evaluations = 0
    while wave.active.size:
        active, hist = wave.active, wave.hist
        candidates, to_play = wave.candidates(komi)
        chosen = np.empty(active.size, np.int64)
        if wave.ply < opening_moves:
            chosen[:] = uniform_rows(candidates, rng)
        else:
            mine = to_play == learner_color[active]
            groups = [(learner, np.flatnonzero(mine))]
            for k, net in enumerate(opponents):
                groups.append((net, np.flatnonzero(~mine & (opponent[active] == k))))
            for net, rows in groups:
                if not rows.size:
                    continue
                policy, value = net.evaluate(hist[active[rows]], to_play[rows], candidates[rows])
                evaluations += rows.size
                chosen[rows] = sample_rows(policy, temperature, rng)
                if net is learner:
                    rec["history"].append(hist[active[rows]].copy())
                    rec["to_play"].append(to_play[rows])
                    rec["candidates"].append(candidates[rows])
                    rec["move"].append(chosen[rows].astype(np.int32))
                    rec["policy"].append(policy.astype(np.float32))
                    rec["value"].append(np.asarray(value, np.float32))
                    rec["game"].append(index[active[rows]].astype(np.int32))
        moves[active, wave.ply] = chosen
        wave.play(chosen)
        wave.retire()
    lengths = wave.boards.meta[:, K.MOVES].astype(np.int32)
    empty = {"history": np.zeros((0, history, points), np.int8),
             "to_play": np.zeros(0, np.int8), "candidates": np.zeros((0, points + 1), np.bool_),
             "move": np.zeros(0, np.int32), "policy": np.zeros((0, points + 1), np.float32),
             "value": np.zeros(0, np.float32), "game": np.zeros(0, np.int32)}
    joined = {k: (np.concatenate(v) if v else empty[k]) for k, v in rec.items()}
    return StepGames(**joined, learner_color=learner_color, opponent=opponent,
                     margin=wave.margins(komi), length=lengths, moves=moves,
                     evaluations=evaluations)


def _concat(parts: list[StepGames]) -> StepGames:
    if len(parts) == 1:
        return parts[0]
    width = max(p.moves.shape[1] for p in parts)
    fields = {}
    for name in ("history", "to_play", "candidates", "move", "policy", "value", "game",
                 "learner_color", "opponent", "margin", "length"):
        fields[name] = np.concatenate([getattr(p, name) for p in parts])
    fields["moves"] = np.concatenate([
        np.pad(p.moves, ((0, 0), (0, width - p.moves.shape[1])), constant_values=-1)
        for p in parts])
    return StepGames(**fields, evaluations=sum(p.evaluations for p in parts))
