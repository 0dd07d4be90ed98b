"""Tournament and datagen games as work for a pool of Ray actors.

Each actor is one long-lived worker process that plays scheduled games with
:func:`harness.arena.tournament.play_task`, keeping its players (a loaded
network, a GTP engine) between games like a local worker process does.
Every game carries its own seed, so its moves do not depend on which worker
plays it. The driver alone appends rows to ``results.jsonl``.

On a cluster the workers write each game's SGF under ``out/games/``
themselves, so ``out`` must be on a filesystem every node sees.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

from harness.distributed.backend import cluster_cpus, ray_session
from harness.distributed.pool import WorkerPool


class GameWorker:
    """A Ray actor: plays games of one tournament (or datagen) config."""

    def __init__(self, config):
        self.config = config

    def play(self, task):
        from harness.arena.tournament import play_task

        return play_task(task, self.config)

    def close(self) -> bool:
        from harness.arena.tournament import _PLAYERS, _close_quietly

        for player in _PLAYERS.values():
            _close_quietly(player)
        _PLAYERS.clear()
        return True


def play_all_ray(tasks: Sequence, config) -> Iterator:
    """Rows of ``tasks`` as they finish (any order), each game exactly once.

    ``config`` is a TournamentConfig or DatagenConfig with ``ray_address``
    and ``parallel``: a local Ray instance gets ``parallel`` CPUs when it is
    above 1, else the machine's. A game whose workers kept dying becomes an
    error row, as on the local backend.
    """
    from harness.arena.tournament import GameRow

    if not tasks:
        return
    # Workers may run elsewhere (another working directory, another node).
    config = dataclasses.replace(config, out=str(Path(config.out).resolve()))
    by_id = {task.game_id: task for task in tasks}
    with ray_session(config.ray_address, cpus=config.parallel if config.parallel > 1 else 0) as ray:
        size = min(len(tasks), cluster_cpus(ray))
        with WorkerPool(ray, GameWorker, (config,), size) as pool:
            try:
                for _, row in pool.run(
                    "play", ((task.game_id, (task,)) for task in tasks),
                    lost=lambda key, message: GameRow.failed(by_id[key],
                                                             f"worker failed: {message}"),
                ):
                    yield row
            finally:
                pool.close("close")
