"""The 8 board symmetries: a group, consistent on planes, policies and points."""

from __future__ import annotations

import numpy as np
import pytest

from harness.features import encoder_names, get_encoder
from harness.features.samples import playout_positions
from harness.features.symmetry import (
    SYMMETRIES,
    compose,
    inverse,
    transform_planes,
    transform_points,
    transform_policy,
)
from harness.game.geometry import gtp_to_point, point_to_gtp

KS = range(SYMMETRIES)


def test_identity_and_eight_distinct_maps():
    size = 5
    grid = np.arange(size * size, dtype=np.float32).reshape(size, size, 1)
    images = {transform_planes(grid, k).tobytes() for k in KS}
    assert len(images) == 8
    np.testing.assert_array_equal(transform_planes(grid, 0), grid)


def test_corners_go_where_the_definition_says():
    # k = 1 is a quarter turn counter-clockwise: the top-right corner (T19 on
    # the board as printed) comes to the top-left; k = 4 is the transpose
    # (the main diagonal A19-T1 stays put).
    size = 19
    p = gtp_to_point("T19", size)
    assert point_to_gtp(transform_points(p, 1, size), size) == "A19"
    assert point_to_gtp(transform_points(p, 2, size), size) == "A1"
    assert point_to_gtp(transform_points(p, 3, size), size) == "T1"
    assert point_to_gtp(transform_points(gtp_to_point("A1", size), 4, size), size) == "T19"
    assert point_to_gtp(transform_points(gtp_to_point("K10", size), 5, size), size) == "K10"


def test_the_eight_form_a_group():
    for a in KS:
        assert compose(a, inverse(a)) == compose(inverse(a), a) == 0
        for b in KS:
            c = compose(a, b)
            assert c in KS
            x = np.random.default_rng(a * 8 + b).random((7, 7, 2))
            np.testing.assert_array_equal(
                transform_planes(transform_planes(x, b), a), transform_planes(x, c)
            )
    # Quarter turns generate a cyclic subgroup of order 4; reflections are involutions.
    assert [compose(1, compose(1, compose(1, 1)))] == [0]
    assert all(compose(k, k) == 0 for k in range(4, 8))


@pytest.mark.parametrize("k", KS)
def test_planes_policy_and_points_agree(k):
    size = 9
    rng = np.random.default_rng(k)
    points = rng.choice(size * size, 5, replace=False)
    planes = np.zeros((size * size, 1), np.float32)
    planes[points, 0] = 1
    moved = transform_planes(planes.reshape(size, size, 1), k).reshape(-1)
    dest = transform_points(points, k, size)
    assert set(np.flatnonzero(moved)) == set(dest.tolist())
    pi = rng.random(size * size + 1)
    out = transform_policy(pi, k, size)
    np.testing.assert_array_equal(out[dest], pi[points])
    assert out[-1] == pi[-1]  # pass stays pass
    assert transform_points(size * size, k, size) == size * size
    # And back again.
    np.testing.assert_array_equal(transform_policy(out, inverse(k), size), pi)
    np.testing.assert_array_equal(transform_points(dest, inverse(k), size), points)


def test_batched_policies_and_one_symmetry_per_sample():
    size = 7
    rng = np.random.default_rng(0)
    pi = rng.random((8, size * size + 1))
    x = rng.random((8, size, size, 3))
    ks = np.arange(8)
    each_pi = np.stack([transform_policy(pi[i], int(k), size) for i, k in enumerate(ks)])
    each_x = np.stack([transform_planes(x[i], int(k)) for i, k in enumerate(ks)])
    np.testing.assert_array_equal(transform_policy(pi, ks, size), each_pi)
    np.testing.assert_array_equal(transform_planes(x, ks), each_x)
    np.testing.assert_array_equal(transform_policy(pi, 3, size)[:, -1], pi[:, -1])


def test_bad_symmetries_are_refused():
    with pytest.raises(ValueError):
        transform_planes(np.zeros((5, 5, 1)), 8)
    with pytest.raises(ValueError):
        transform_policy(np.zeros(26), 1, 6)
    with pytest.raises(ValueError):
        transform_points(np.array([0, 26]), 1, 5)


def transform_history(hist: np.ndarray, k: int, size: int) -> np.ndarray:
    n, t, _ = hist.shape
    boards = np.moveaxis(hist.reshape(n, t, size, size), 1, -1)
    return np.moveaxis(transform_planes(boards, k), -1, 1).reshape(n, t, size * size)


@pytest.fixture(scope="module")
def positions():
    """Playout positions at every stage (many weak strings, so ladders and liberties matter)."""
    return playout_positions(9, 96, 8, seed=11)


@pytest.mark.parametrize("name", encoder_names())
def test_encoding_commutes_with_every_symmetry(name, positions):
    hist, to_play = positions
    encoder = get_encoder(name)
    x = encoder.encode(hist, to_play, 9)
    assert x.any()
    for k in KS:
        np.testing.assert_array_equal(
            encoder.encode(transform_history(hist, k, 9), to_play, 9),
            transform_planes(x, k),
            err_msg=f"{name}, symmetry {k}",
        )
