"""The 8 symmetries of the square board, applied to inputs, policies and points.

Symmetry ``k`` (0..7) is ``k % 4`` quarter turns (NumPy's ``rot90`` sense),
applied after a transpose when ``k >= 4``; 0 is the identity. Everything goes
through one gather table per board size, so planes, policy vectors and move
numbers can never disagree about where a point goes. ``k`` may also be an
array with one symmetry per sample, for data augmentation on whole batches.
"""

from __future__ import annotations

from functools import cache

import numpy as np

SYMMETRIES = 8


@cache
def _tables(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``source[k, q]``: the point that lands on ``q``; ``dest[k, p]``: where ``p`` goes."""
    grid = np.arange(size * size, dtype=np.int64).reshape(size, size)
    source = np.empty((SYMMETRIES, size * size), np.int64)
    for k in range(SYMMETRIES):
        source[k] = np.rot90(grid.T if k >= 4 else grid, k % 4).ravel()
    dest = np.empty_like(source)
    rows = np.arange(SYMMETRIES)[:, None]
    dest[rows, source] = np.arange(size * size)[None, :]
    source.flags.writeable = False
    dest.flags.writeable = False
    return source, dest


def _check(k) -> np.ndarray:
    ks = np.asarray(k)
    if not np.issubdtype(ks.dtype, np.integer) or np.any((ks < 0) | (ks >= SYMMETRIES)):
        raise ValueError(f"symmetry must be an integer in 0..{SYMMETRIES - 1}, got {k!r}")
    return ks


def inverse(k: int) -> int:
    """The symmetry that undoes ``k``: turns reverse, reflections undo themselves."""
    _check(k)
    return k if k >= 4 else (4 - k) % 4


def compose(a: int, b: int) -> int:
    """The symmetry equal to applying ``b`` first, then ``a``."""
    _check(a)
    _check(b)
    source, _ = _tables(3)
    combined = source[b][source[a]]
    return int(np.flatnonzero((source == combined).all(axis=1))[0])


def transform_planes(x: np.ndarray, k) -> np.ndarray:
    """Planes ``(B, B, C)`` or ``(N, B, B, C)`` under symmetry ``k`` (a copy).

    For a batch, ``k`` may be an ``(N,)`` array: one symmetry per sample.
    """
    ks = _check(k)
    if x.ndim not in (3, 4) or x.shape[-3] != x.shape[-2]:
        raise ValueError(f"planes must be (B, B, C) or (N, B, B, C), got shape {x.shape}")
    size = x.shape[-2]
    source, _ = _tables(size)
    flat = x.reshape(*x.shape[:-3], size * size, x.shape[-1])
    if ks.ndim == 0:
        return flat[..., source[int(ks)], :].reshape(x.shape)
    if x.ndim != 4 or ks.shape != (x.shape[0],):
        raise ValueError(
            f"per-sample symmetries need (N, B, B, C) planes and (N,) k, got {ks.shape}"
        )
    return np.take_along_axis(flat, source[ks][:, :, None], axis=1).reshape(x.shape)


def transform_policy(pi: np.ndarray, k, size: int) -> np.ndarray:
    """Policy vectors of length ``B*B + 1`` (or ``(N, B*B + 1)``): points move, pass stays."""
    ks = _check(k)
    points = size * size
    if pi.shape[-1] != points + 1 or pi.ndim not in (1, 2):
        raise ValueError(
            f"policy must be (..., {points + 1}) for a {size}x{size} board, got {pi.shape}"
        )
    source, _ = _tables(size)
    out = np.empty_like(pi)
    if ks.ndim == 0:
        out[..., :points] = pi[..., source[int(ks)]]
    else:
        if pi.ndim != 2 or ks.shape != (pi.shape[0],):
            raise ValueError(
                f"per-sample symmetries need (N, P+1) policies and (N,) k, got {ks.shape}"
            )
        out[:, :points] = np.take_along_axis(pi[:, :points], source[ks], axis=1)
    out[..., points] = pi[..., points]
    return out


def transform_points(points, k: int, size: int):
    """Move numbers (``row*size + col``, pass = ``size*size``) under symmetry ``k``."""
    ks = _check(k)
    if ks.ndim != 0:
        raise ValueError("transform_points takes one symmetry")
    _, dest = _tables(size)
    moves = np.asarray(points, dtype=np.int64)
    if np.any((moves < 0) | (moves > size * size)):
        raise ValueError(f"points must be in 0..{size * size} on a {size}x{size} board")
    result = np.append(dest[int(ks)], size * size)[moves]
    return int(result) if result.ndim == 0 else result
