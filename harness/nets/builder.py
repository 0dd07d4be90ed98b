"""One place that makes the zoo's stock layers, so initialisation is seeded in one way.

With a seed, every layer gets its own initializer seed drawn in build order,
so the same name, board and seed give the same weights without touching
Keras's global random state. No weight regularisers are attached: L2 is a
training setting and lives with the optimiser.
"""

from __future__ import annotations

import keras
from keras import layers


class LayerMaker:
    def __init__(self, seed: int | None = None):
        self._seed = seed
        self._count = 0

    def next_seed(self) -> int | None:
        if self._seed is None:
            return None
        self._count += 1
        return (self._seed * 1_000_003 + self._count) % (2**31 - 1)

    def _init(self, kind: str):
        seed = self.next_seed()
        if seed is None:
            return kind
        return keras.initializers.get({"class_name": kind, "config": {"seed": seed}})

    def initializer(self):
        """A seeded Glorot initializer for a stock layer built elsewhere."""
        return self._init("GlorotUniform")

    def conv(self, filters: int, kernel: int = 3, *, bias: bool = True, activation=None,
             name: str | None = None) -> layers.Conv2D:
        return layers.Conv2D(filters, kernel, padding="same", use_bias=bias,
                             activation=activation, name=name,
                             kernel_initializer=self._init("GlorotUniform"))

    def depthwise(self, kernel: int = 3, *, bias: bool = False) -> layers.DepthwiseConv2D:
        return layers.DepthwiseConv2D(kernel, padding="same", use_bias=bias,
                                      depthwise_initializer=self._init("GlorotUniform"))

    def dense(self, units: int, *, activation=None, name: str | None = None) -> layers.Dense:
        return layers.Dense(units, activation=activation, name=name,
                            kernel_initializer=self._init("GlorotUniform"))

    @staticmethod
    def bn() -> layers.BatchNormalization:
        return layers.BatchNormalization()

    @staticmethod
    def relu() -> layers.ReLU:
        return layers.ReLU()

    def bn_relu(self, x):
        return self.relu()(self.bn()(x))
