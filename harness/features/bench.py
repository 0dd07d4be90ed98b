"""Encoder throughput rows for ``harness bench rules``: positions encoded per second.

Measured in batches, the way the training input pipeline calls the encoders,
on real-game positions when the development data is there (ladder and
liberty work depends on how many weak strings a position has, so playouts
would flatter or punish the feature encoders). Time is this process's CPU
time: the kernels run on one thread, so the rate is a one-core rate even when
other jobs share the machine.
"""

from __future__ import annotations

import time

import numpy as np

from harness.features.encoders import encoder_names, get_encoder
from harness.features.samples import sample_positions

BATCH = 256
POOL = 2048  # distinct positions cycled through while timing


def encoder_rates(
    size: int = 19, seconds: float = 2.0, names: list[str] | None = None, seed: int = 0
) -> list[tuple]:
    """Rows ``(f"{name} encode", "19x19", positions_per_s, "positions/s")``, one per encoder."""
    names = encoder_names() if names is None else names
    depth = max(get_encoder(n).history for n in names)
    hist, to_play, _ = sample_positions(size, POOL, depth, seed)
    batches = [(hist[i : i + BATCH], to_play[i : i + BATCH]) for i in range(0, len(hist), BATCH)]
    batches = [b for b in batches if len(b[1]) == BATCH] or batches
    rows = []
    for name in names:
        encoder = get_encoder(name)
        out = np.empty((len(batches[0][1]), size, size, encoder.planes), np.float32)
        encoder.encode(batches[0][0], batches[0][1], size, out)  # compile or load the kernel
        done, start, i = 0, time.process_time(), 0
        while True:
            h, t = batches[i % len(batches)]
            if len(t) != len(out):
                out = np.empty((len(t), size, size, encoder.planes), np.float32)
            encoder.encode(h, t, size, out)
            done += len(t)
            i += 1
            elapsed = time.process_time() - start
            if elapsed >= seconds and i >= len(batches):
                break
        rows.append((f"{name} encode", f"{size}x{size}", done / elapsed, "positions/s"))
    return rows
