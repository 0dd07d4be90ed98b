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

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
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


@contextlib.contextmanager
def ray_games(config, size: int) -> Iterator[Callable[[Sequence], Iterator]]:
    """A function that plays a batch of tasks on one pool of at most ``size`` actors,
    yielding their rows as they finish (any order), each game exactly once.

    ``config`` is a TournamentConfig or DatagenConfig with ``ray_address``
    and ``parallel``: a local Ray instance gets ``parallel`` CPUs when it is
    above 1, else the machine's. A game whose workers kept dying becomes an
    error row, as on the local backend. The Ray session and the actors (with
    their loaded players) last until the context ends, so the rounds of an
    adaptive tournament share them.
    """
    # Workers may run elsewhere (another working directory, another node).
    config = dataclasses.replace(config, out=str(Path(config.out).resolve()))
    cpus = config.parallel if config.parallel > 1 else 0
    with contextlib.ExitStack() as stack:
        ray = stack.enter_context(ray_session(config.ray_address, cpus=cpus))
        pool = stack.enter_context(WorkerPool(ray, GameWorker, (config,),
                                              min(size, cluster_cpus(ray))))
        try:
            yield lambda tasks: _play(pool, tasks)
        finally:
            pool.close("close")


def _play(pool: WorkerPool, tasks: Sequence) -> Iterator:
    from harness.arena.tournament import GameRow

    by_id = {task.game_id: task for task in tasks}
    for _, row in pool.run(
        "play", ((task.game_id, (task,)) for task in tasks),
        lost=lambda key, message: GameRow.failed(by_id[key], f"worker failed: {message}"),
    ):
        yield row
