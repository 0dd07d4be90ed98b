"""Evaluators that need no network: known answers for search tests and demos.

They implement the :class:`~harness.search.evaluator.Evaluator` interface with
rules-based values (Tromp-Taylor area or material from the side to move), so
a test can check that the search finds a capture or saves a group without
training anything. ``priors="pattern"`` gives every point a distinct prior
that depends only on its distances to the stones and the edges, which is
unchanged by board symmetries: a position and its mirror image get mirrored
priors and hence mirrored searches.
"""

from __future__ import annotations

import time

import numpy as np

from harness.game import board as K
from harness.game.geometry import BLACK, WHITE, geometry

VALUE_KINDS = ("area", "material", "zero")
PRIOR_KINDS = ("uniform", "pattern")
SQUASHES = ("tanh", "clip")


class OracleEvaluator:
    """Uniform or symmetric-pattern priors; value from counting the leaf."""

    def __init__(
        self,
        size: int,
        *,
        value: str = "material",
        priors: str = "uniform",
        komi: float = 0.0,
        scale: float | None = None,
        history: int = 1,
        squash: str = "tanh",
    ):
        if value not in VALUE_KINDS:
            raise ValueError(f"value must be one of {VALUE_KINDS}, got {value!r}")
        if priors not in PRIOR_KINDS:
            raise ValueError(f"priors must be one of {PRIOR_KINDS}, got {priors!r}")
        if squash not in SQUASHES:
            raise ValueError(f"squash must be one of {SQUASHES}, got {squash!r}")
        self.size = size
        self.history = history
        self.value_kind = value
        self.prior_kind = priors
        # "clip" maps the count to a value without transcendental functions,
        # whose last bits differ between CPUs' SIMD paths: with pattern priors
        # (integer weights, exact sums) every number is then the same on any
        # machine, so a test may pin whole searches bit for bit.
        self.squash = squash
        self.komi = komi
        self.scale = scale if scale is not None else max(1.0, size * size / 8)
        self.calls = 0
        self.positions = 0
        self.seconds = 0.0  # wall time inside evaluate, as NetworkEvaluator counts its passes
        self._boards = K.new_boards(1, size)
        rows, cols = np.divmod(np.arange(size * size), size)
        self._rows, self._cols = rows, cols
        edges = np.stack([rows, cols, size - 1 - rows, size - 1 - cols], axis=1)
        self._edges = np.sort(edges, axis=1).astype(np.uint64)

    def evaluate(
        self, stones: np.ndarray, to_play: np.ndarray, legal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        start = time.perf_counter()
        self.calls += 1
        self.positions += stones.shape[0]
        current = stones[:, -1, :]
        if self.prior_kind == "uniform":
            weights = legal.astype(np.float64)
        else:
            weights = np.stack([self._pattern(row) for row in current]) * legal
        policy = (weights / np.maximum(weights.sum(axis=1, keepdims=True), 1e-30)).astype(
            np.float32
        )
        sign = np.where(to_play == BLACK, 1.0, -1.0)
        if self.value_kind == "zero":
            raw = np.zeros(len(current))
        elif self.value_kind == "material":
            raw = (current == BLACK).sum(axis=1) - (current == WHITE).sum(axis=1) - self.komi
        else:
            raw = np.array([self._area(row) for row in current]) - self.komi
        scaled = sign * raw / self.scale
        value = np.tanh(scaled) if self.squash == "tanh" else np.clip(scaled, -1.0, 1.0)
        self.seconds += time.perf_counter() - start
        return policy, value.astype(np.float32)

    def _area(self, row: np.ndarray) -> float:
        self._boards.stones[0] = row
        owner = np.zeros(row.size, np.int32)
        return float(K.area_score(self._boards, 0, geometry(self.size).neighbours, owner))

    def _pattern(self, row: np.ndarray) -> np.ndarray:
        """A weight in [1, 2^20] per move (pass last) that only depends on the
        sorted distances of the point to every stone (with colours) and to the
        four edges, so symmetric points of symmetric positions agree."""
        points = row.size
        stone_at = np.flatnonzero(row)
        dr = self._rows[:, None] - self._rows[None, stone_at]
        dc = self._cols[:, None] - self._cols[None, stone_at]
        codes = np.sort((dr * dr + dc * dc) * 3 + row[stone_at][None, :], axis=1)
        codes = np.concatenate([self._edges, codes.astype(np.uint64)], axis=1)
        h = np.full(points, 0x84222325CBF29CE4, np.uint64)
        with np.errstate(over="ignore"):
            for j in range(codes.shape[1]):
                h = (h ^ (codes[:, j] + np.uint64(1))) * np.uint64(0x100000001B3)
                h ^= h >> np.uint64(29)
        weights = np.empty(points + 1, np.float64)
        weights[:points] = 1 + (h % np.uint64(1 << 20)).astype(np.float64)
        weights[points] = 1.0  # pass: always the least likely
        return weights
