"""The exponential moving average of a network's weights (``[train] ema_decay``).

The average is updated after every optimizer step, so its cost is paid 200
times a generation. Reading the weights back to numpy each step (Keras's
``get_weights``) took 18 ms a step for the 9x9 recipe's network under
TensorFlow, about an eighth of its training time; here the average lives in
variables beside the weights and one compiled call updates all of them. It is
read back only when a network is saved or played.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


class WeightAverage:
    """``mean <- decay * mean + (1 - decay) * weight`` for every entry of
    ``model.weights`` (the order of ``get_weights``), starting from
    ``initial`` (default: the model's weights now)."""

    def __init__(self, model, decay: float, initial: Sequence[np.ndarray] | None = None):
        import keras

        self._weights = list(model.weights)
        start = model.get_weights() if initial is None else list(initial)
        if [np.shape(w) for w in start] != [tuple(v.shape) for v in self._weights]:
            raise ValueError("the average's initial values do not match the model's weights")
        self._means = [keras.Variable(np.array(w, dtype=v.dtype), trainable=False,
                                      name=f"average_{i}")
                       for i, (w, v) in enumerate(zip(start, self._weights, strict=True))]
        self._update = _compiled_update(self._means, self._weights, float(decay))

    def update(self) -> None:
        """One step of the average (after one optimizer step)."""
        self._update()

    def values(self) -> list[np.ndarray]:
        """The average, as ``set_weights`` takes it."""
        return [np.array(m.numpy()) for m in self._means]


def _compiled_update(means, weights, decay: float) -> Callable[[], None]:
    """The whole update as one call: a ``tf.function`` or a ``jax.jit``; op by
    op elsewhere (PyTorch runs eagerly anyway)."""
    import keras

    backend = keras.backend.backend()
    keep, take = decay, 1.0 - decay
    if backend == "tensorflow":
        import tensorflow as tf

        @tf.function(jit_compile=False)
        def update():
            for m, w in zip(means, weights, strict=True):
                m.value.assign(m.value * keep + w.value * take)

        return update
    if backend == "jax":
        import jax

        blend = jax.jit(lambda ms, ws: [m * keep + w * take for m, w in zip(ms, ws, strict=True)])

        def update():
            fresh = blend([m.value for m in means], [w.value for w in weights])
            for m, value in zip(means, fresh, strict=True):
                m.assign(value)

        return update

    def update():
        for m, w in zip(means, weights, strict=True):
            m.assign(m * keep + w * take)

    return update
