"""One generation's self-play: the search stage's game driver, committing every game.

Games are played by :func:`harness.search.game_driver.play_games` (every search
slot always busy); each finished game is written at once as an SGF and as
its own buffer part, so a run killed mid-generation keeps every finished
game and, when resumed, plays only the games still missing. Timing counters
are saved (``stats/gen-NNNN.selfplay.json``) after each game so that games/hour,
evaluations/s and the generation's compute (network evaluations, wall and CPU
seconds) of a resumed generation cover all its sessions.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.devices import Device, forward_rows
from harness.files import atomic_json, read_json
from harness.game.geometry import BLACK, WHITE
from harness.rl.buffer import GameMeta, ReplayBuffer
from harness.rl.config import RLConfig
from harness.rl.game_rows import game_rows
from harness.search.game_driver import SelfPlayGame
from harness.train import derive_seed

# Salt of the evaluator's symmetry stream, so it never repeats the search's own.
SYMMETRY_STREAM = 1


def sgf_path(run_dir: Path, generation: int, number: int) -> Path:
    return run_dir / "games" / f"gen-{generation:04d}" / f"game-{number:06d}.sgf"


def progress_path(run_dir: Path, generation: int) -> Path:
    return run_dir / "stats" / f"gen-{generation:04d}.selfplay.json"


def _write_sgf(record: SelfPlayGame, path: Path, generation: int, player: str) -> None:
    from harness.sgf import write_sgf

    notes = [f"self-play generation {generation}",
             "resignation on" if record.resign_enabled else "resignation off"]
    if record.would_resign:
        notes.append(f"{'B' if record.would_resign == BLACK else 'W'} would have resigned")
    if record.truncated:
        notes.append("stopped at the move limit and scored")
    write_sgf(record.game, path, result=record.result, black=player, white=player,
              properties={"GC": "; ".join(notes)})


@dataclass(frozen=True)
class Unit:
    """Games ``first .. first + count - 1`` of a generation, played by one search from ``seed``.

    The unit, not the worker, fixes the games: the seed comes from the run
    seed, the generation and ``first``, and games are numbered in the order
    they finish within the unit, so a unit replayed elsewhere plays the same.
    """

    first: int
    count: int
    seed: int


def selfplay_path(config: RLConfig, dev: Device) -> tuple[str, str]:
    """The path ``config``'s self-play takes on ``dev`` and why: ``auto``
    takes the device path where Keras runs on JAX with a GPU and the run uses
    nothing that path refuses, else the host's."""
    path = config.selfplay.path
    if path != "auto":
        return path, "configured"
    if dev.backend != "jax":
        return "host", f"Keras runs on {dev.backend}; the device path needs JAX"
    if not dev.is_gpu:
        return "host", "no GPU (on a CPU the host path was faster)"
    if refusal := config.device_path_refusal():
        return "host", f"the device path {refusal}"
    return "device", f"JAX on {dev.gpus[0]}"


def with_path_resolved(config: RLConfig, dev: Device) -> RLConfig:
    """``config`` with ``[selfplay] path`` decided for ``dev`` (see
    :func:`selfplay_path`); a run's saved config keeps ``auto``, so a resume
    or a Ray actor on another device decides again."""
    path, _ = selfplay_path(config, dev)
    if path == config.selfplay.path:
        return config
    return dataclasses.replace(config, selfplay=dataclasses.replace(config.selfplay, path=path))


def filled_for_device(config: RLConfig, dev: Device) -> RLConfig:
    """``config`` with the games at once and the evaluator's batch that fill
    ``dev``: on a GPU, enough games (at most a generation's) that their leaves
    make one forward pass of :func:`harness.devices.forward_rows` rows, and an
    evaluator batch that holds them; unchanged on a CPU, on Ray (whose actors
    run elsewhere) or with ``[selfplay] fill_device = false``."""
    selfplay, leaves = config.selfplay, config.mcts.leaves_per_game
    if not (dev.is_gpu and selfplay.fill_device and config.backend == "local"):
        return config
    parallel = min(selfplay.games, max(selfplay.parallel,
                                       forward_rows(dev, selfplay.parallel * leaves) // leaves))
    batch = max(config.evaluator.batch_size, parallel * leaves)
    return dataclasses.replace(
        config, selfplay=dataclasses.replace(selfplay, parallel=parallel),
        evaluator=dataclasses.replace(config.evaluator, batch_size=batch))


def selfplay_units(config: RLConfig, generation: int, done: int) -> list[Unit]:
    """The units covering games ``done ..`` of ``generation``.

    Unit boundaries are multiples of the unit size; a generation resumed in
    the middle of a unit plays the rest of it as a unit of its own (seeded by
    its first missing game, as a resumed local generation always was).
    """
    selfplay = config.selfplay
    size = selfplay.unit_games or (selfplay.parallel if config.backend == "ray" else selfplay.games)
    units, first = [], done
    while first < selfplay.games:
        end = min(selfplay.games, (first // size + 1) * size)
        units.append(Unit(first, end - first, derive_seed(config.seed, generation, first)))
        first = end
    return units


def unit_search(evaluator, config: RLConfig, unit: Unit):
    """The search that plays ``unit``: its own slots and seed, an empty evaluation
    cache, and the evaluator's random symmetries drawn from the unit's seed."""
    from harness.search import BatchedSearch
    from harness.search.evaluator import reseed_symmetries

    clear = getattr(evaluator, "clear_cache", None)
    if clear is not None:
        clear()
    reseed_symmetries(evaluator, derive_seed(unit.seed, SYMMETRY_STREAM))
    return BatchedSearch(evaluator, config.mcts, games=min(config.selfplay.parallel, unit.count),
                         seed=unit.seed)


def play_generation(
    evaluator,
    config: RLConfig,
    generation: int,
    buffer: ReplayBuffer,
    run_dir: Path,
    *,
    player: str = "",
    log: Callable[[str], None] = print,
    checkpoint: Path | None = None,
    actors=None,
) -> dict:
    """Play the games of ``generation`` still missing; returns the timing counters.

    ``evaluator`` is the self-play network behind the search's Evaluator
    interface (local backend). On the Ray backend the games are played by
    ``actors`` (the caller's :class:`harness.rl.remote.SelfPlayActors`, which
    outlive a generation) with the weights of ``checkpoint``; either way this
    process commits every game, in game order.
    """
    done = buffer.games_committed(generation)
    progress = read_json(progress_path(run_dir, generation),
                         {"seconds": 0.0, "cpu_seconds": 0.0, "evaluations": 0, "games": 0})
    progress["games"] = done
    remaining = config.selfplay.games - done
    if remaining <= 0:
        return progress
    if done:
        log(f"generation {generation}: {done} games on disk, playing the other {remaining}")
    units = selfplay_units(config, generation, done)
    base_seconds, base_evals = float(progress["seconds"]), int(progress["evaluations"])
    base_cpu = float(progress.get("cpu_seconds", 0.0))  # not kept before compute was counted
    t0, cpu0 = time.perf_counter(), time.process_time()

    def commit(number: int, record: SelfPlayGame, evaluations: int) -> None:
        game = record.game
        _write_sgf(record, sgf_path(run_dir, generation, number), generation, player)
        meta = GameMeta(resign_enabled=record.resign_enabled, would_resign=record.would_resign,
                        resigned=game.resigned, truncated=record.truncated)
        buffer.add_game(generation, number, game_rows(record), meta)
        progress.update(seconds=base_seconds + time.perf_counter() - t0,
                        cpu_seconds=base_cpu + time.process_time() - cpu0,
                        evaluations=base_evals + evaluations, games=number + 1)
        atomic_json(progress_path(run_dir, generation), progress, sort_keys=True)

    if config.backend == "ray":
        if checkpoint is None or actors is None:
            raise ValueError("the ray backend plays with the caller's SelfPlayActors "
                             "(harness.rl.remote) and the self-play network's checkpoint file")
        for number, record, evaluations in actors.play(units, checkpoint):
            commit(number, record, evaluations)
        return progress

    if config.selfplay.path == "device":
        play_on_device(evaluator.model, config, units, commit)
        return progress

    finished_evals = 0
    for unit in units:
        search = unit_search(evaluator, config, unit)
        numbers = iter(range(unit.first, unit.first + unit.count))

        def on_record(record: SelfPlayGame, search=search, numbers=numbers,
                      before=finished_evals) -> None:
            commit(next(numbers), record, before + search.evaluations)

        play_unit(search, unit.count, config, unit.seed, on_record)
        finished_evals += search.evaluations
    return progress


def play_on_device(model, config: RLConfig, units: list[Unit], commit) -> None:
    """The units' games searched on the device (``[selfplay] path = "device"``),
    ``parallel`` at a time, each batch seeded by its first game so that a
    resumed generation plays the games it would have."""
    import keras

    if keras.backend.backend() != "jax":
        raise ValueError('[selfplay] path = "device" needs Keras\'s JAX backend '
                         f'(keras_backend = "jax"), not {keras.backend.backend()}')
    from harness.jaxgo.games import play_batch
    from harness.jaxgo.search import device_search, model_params

    search = device_search(model, config.encoder, config.evaluator, config.mcts)
    params = model_params(model)
    evaluations = 0
    for unit in units:
        for first in range(unit.first, unit.first + unit.count, config.selfplay.parallel):
            count = min(config.selfplay.parallel, unit.first + unit.count - first)
            records, spent = play_batch(
                search, params, count, config.board_size, komi=config.komi,
                rules_name=config.rules, max_moves=config.selfplay.max_moves,
                seed=derive_seed(unit.seed, first))
            for number, record in enumerate(records, start=first):
                evaluations += spent if number == first else 0
                commit(number, record, evaluations)


def play_unit(search, count: int, config: RLConfig, seed: int, commit) -> None:
    """``count`` games of a unit with the run's settings, each handed to ``commit``."""
    from harness.search.game_driver import play_games as drive

    selfplay = config.selfplay
    opening = None
    if selfplay.start_probability > 0:
        from harness.rl.openings import dataset_openings

        opening = dataset_openings(selfplay.start_dataset, selfplay.start_probability,
                                   selfplay.start_min_moves, selfplay.start_max_moves,
                                   config.board_size)
    drive(search, count, komi=config.komi, rules=config.rules,
          max_moves=selfplay.max_moves, seed=seed, on_record=commit, opening=opening)


def generation_stats(buffer: ReplayBuffer, generation: int, progress: dict) -> dict:
    """Per-generation self-play figures, from the merged chunk (exact after a resume)."""
    positions, games = buffer.read_generation(generation, ("target",))
    n = len(games["first"])
    lengths = games["positions"].astype(float)
    no_resign = games["resign_enabled"] == 0
    wanted = no_resign & (games["would_resign"] != 0)
    false_positive = wanted & (games["would_resign"] == games["winner"])
    seconds = float(progress.get("seconds", 0.0))
    evaluations = int(progress.get("evaluations", 0))
    return {
        "games": n,
        "positions": int(lengths.sum()),
        "target_positions": int(positions["target"].sum()),
        "mean_length": float(lengths.mean()) if n else 0.0,
        "black_wins": int((games["winner"] == BLACK).sum()),
        "white_wins": int((games["winner"] == WHITE).sum()),
        "resigned": int((games["resigned"] != 0).sum()),
        "truncated": int(games["truncated"].sum()),
        "no_resign_games": int(no_resign.sum()),
        "resign_checks": int(wanted.sum()),
        "resign_false_positives": int(false_positive.sum()),
        "resign_false_positive_rate": (float(false_positive.sum() / wanted.sum())
                                       if wanted.any() else float("nan")),
        "selfplay_s": seconds,
        "selfplay_cpu_s": float(progress.get("cpu_seconds", 0.0)),
        "evaluations": evaluations,
        "games_per_hour": 3600.0 * n / seconds if seconds > 0 else float("nan"),
        "evals_per_s": evaluations / seconds if seconds > 0 else float("nan"),
    }
