"""Network inputs from a :class:`~harness.jaxgo.rules.GoState`, on the device.

The planes are the harness's encoders' (:mod:`harness.features.encoders`),
channel for channel, so a network trained on the harness's datasets reads a
JAX self-play position as it read a stored one.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from harness.features.encoders import get_encoder
from harness.game.geometry import BLACK
from harness.jaxgo.rules import RECENT, GoState, board_size

AGZ17_HISTORY = get_encoder("agz17").history
if AGZ17_HISTORY > RECENT:  # the state keeps fewer boards than the encoder reads
    raise ImportError(f"agz17 reads {AGZ17_HISTORY} boards, the state keeps {RECENT}")


def agz17(state: GoState) -> jax.Array:
    """float32 (B, size, size, 17), as ``get_encoder("agz17")``: own then
    opponent stones for the last eight positions, newest first ("own" is the
    side to move now, in the older boards too), then ones if Black is to play."""
    size = board_size(state)
    batch = state.board.shape[0]
    newest_first = state.recent[:, ::-1][:, :AGZ17_HISTORY]  # (B, 8, P)
    me = state.to_play[:, None, None]
    stones = jnp.stack([newest_first == me, newest_first == 3 - me], axis=2)  # (B, 8, 2, P)
    black = jnp.broadcast_to((state.to_play == BLACK)[:, None, None], (batch, 1, size * size))
    planes = jnp.concatenate([stones.reshape(batch, 2 * AGZ17_HISTORY, -1), black], axis=1)
    return planes.transpose(0, 2, 1).reshape(batch, size, size, -1).astype(jnp.float32)
