"""RL self-play on Ray actors: many games per actor with the batched MCTS.

Each :class:`SelfPlayWorker` actor owns one network and one evaluator
(TensorFlow started and the forward pass traced once per worker) and plays
whole units of games (:class:`harness.rl.selfplay.Unit`) with
:func:`harness.rl.selfplay.unit_search`, exactly as the local backend does.
The network of a generation goes into the object store once (the bytes of
its ``.keras`` checkpoint, loaded with ``safe_mode``); a worker loads it when
its name changes, and only copies the weights when the architecture is the
one it already has, so the traced graph is kept. With ``[selfplay] path =
"device"`` a worker plays its units with the device search instead
(:func:`harness.rl.selfplay.play_on_device`), on the GPU that ``[selfplay]
worker_gpus`` reserves for it.

The driver commits the finished games in game order (the replay buffer's
parts are numbered without gaps), so a killed run resumes as a local one
does; a unit lost with a dead worker is played again, from its own seed, on
a replacement.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from harness.distributed.backend import limit_compute_threads
from harness.distributed.executor import worker_pool
from harness.distributed.pool import RayPool


class SelfPlayWorker:
    """A Ray actor: plays self-play units with the network it was last sent."""

    def __init__(self, config):
        import ray

        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1)
        limit_compute_threads(int(cpus))
        if config.selfplay.path == "auto":  # decided on this actor's own device
            from harness.devices import device
            from harness.rl.selfplay import with_path_resolved

            config = with_path_resolved(config, device())
        self.config = config
        self.net_name: str | None = None
        self.model = None
        self.evaluator = None

    def _use(self, net: dict) -> None:
        if net["name"] == self.net_name:
            return
        from harness.nets import load_model

        fd, tmp = tempfile.mkstemp(suffix=".keras")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(net["keras"])
            model = load_model(tmp)
        finally:
            os.unlink(tmp)
        if self.model is not None and _architecture(model) == _architecture(self.model):
            self.model.set_weights(model.get_weights())
        elif self.config.selfplay.path == "device":
            self.model = model  # the device search reads the model itself
        else:
            from harness.search import NetworkEvaluator

            self.model = model
            self.evaluator = NetworkEvaluator(model, self.config.encoder, self.config.board_size,
                                              self.config.evaluator)
        self.net_name = net["name"]

    def play(self, net: dict, unit) -> tuple[list, int]:
        """(finished game records in the order they ended, network evaluations)."""
        from harness.rl.selfplay import play_on_device, play_unit, unit_search

        self._use(net)
        records: list = []
        if self.config.selfplay.path == "device":
            spent = [0]

            def keep(number: int, record, evaluations: int) -> None:
                records.append(record)
                spent[0] = evaluations

            play_on_device(self.model, self.config, [unit], keep)
            return records, spent[0]
        search = unit_search(self.evaluator, self.config, unit)
        play_unit(search, unit.count, self.config, unit.seed, records.append)
        return records, int(search.evaluations)


def _architecture(model) -> str:
    return json.dumps(model.get_config(), sort_keys=True, default=str)


class SelfPlayActors:
    """A run's self-play workers on Ray, kept across generations.

    The Ray session starts (or joins ``config.ray_address``) at the first
    :meth:`play`; ``selfplay.workers`` actors (0: one per CPU of the cluster)
    live until :meth:`close`.
    """

    def __init__(self, config):
        self.config = config
        self._stack = contextlib.ExitStack()
        self._ray = None
        self._pool: RayPool | None = None

    def _start(self) -> None:
        if self._pool is not None:
            return
        self._pool = self._stack.enter_context(worker_pool(
            SelfPlayWorker, (self.config,), self.config.selfplay.workers, backend="ray",
            ray_address=self.config.ray_address, gpus_each=self.config.selfplay.worker_gpus))
        self._ray = self._pool.ray

    @property
    def pool(self) -> RayPool | None:
        return self._pool

    def play(self, units: Sequence, checkpoint: Path) -> Iterator[tuple[int, object, int]]:
        """(game number, record, evaluations so far) for every game of ``units``, in order."""
        self._start()
        checkpoint = Path(checkpoint)
        net = self._ray.put({"name": str(checkpoint.resolve()), "keras": checkpoint.read_bytes()})
        size = len(self._pool.actors)
        evaluations = 0
        for unit, (records, evals) in self._pool.run(
                "play", ((unit, (net, unit)) for unit in units), ordered=True, window=2 * size):
            evaluations += evals
            for offset, record in enumerate(records):
                yield unit.first + offset, record, evaluations

    def close(self) -> None:
        self._pool = None
        self._stack.close()
