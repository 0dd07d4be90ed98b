"""Tournament and datagen games on Ray: the same games as local processes, each
written once by the driver, and a worker killed mid-tournament is replaced with
its game replayed."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from harness.arena.datagen import DatagenConfig, generate
from harness.arena.games import RESULTS_FILE, TIMING_FIELDS
from harness.arena.tournament import TournamentConfig, run_tournament, schedule

pytestmark = pytest.mark.usefixtures("ray_cluster")


def config(out: Path, **kw) -> TournamentConfig:
    values = dict(players=["random", "uct=uct:50"], out=str(out), board_size=7, komi=7.5,
                  games_per_pair=8, opening_moves=2, seed=11, parallel=2)
    values.update(kw)
    return TournamentConfig(**values)


def results(out: Path) -> list[dict]:
    """Every line of ``results.jsonl`` without its timings, in file order."""
    lines = (out / RESULTS_FILE).read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING_FIELDS} for line in lines]


def by_game(rows: list[dict]) -> dict[str, dict]:
    return {row["game_id"]: row for row in rows}


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "t"
    run_tournament(config(out), progress=False)
    return out


def test_a_ray_tournament_plays_the_same_games_as_local_processes(local_run, tmp_path):
    out = tmp_path / "t"
    rows = run_tournament(config(out, backend="ray"), progress=False)

    assert len(rows) == 8 and all(r.error is None for r in rows)
    ray_rows, local_rows = results(out), results(local_run)
    assert len(ray_rows) == len({r["game_id"] for r in ray_rows}) == 8
    assert by_game(ray_rows) == by_game(local_rows)  # winners, results, move counts
    for row in ray_rows:  # and move for move
        sgf = row["sgf"]
        assert (out / sgf).read_text() == (local_run / sgf).read_text()
    assert (out / "ranking.csv").read_text() == (local_run / "ranking.csv").read_text()


def _descendants(pid: int) -> list[int]:
    """Processes below ``pid`` (the Ray cluster this process started, and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _game_workers() -> list[int]:
    pids = []
    for pid in _descendants(os.getpid()):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"ray::GameWorker"):
            pids.append(pid)
    return pids


def test_a_worker_killed_mid_tournament_is_replaced_and_no_game_counts_twice(
        local_run, tmp_path, caplog):
    out = tmp_path / "t"
    killed: list[int] = []

    def kill_a_worker_after_the_first_result() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            path = out / RESULTS_FILE
            workers = _game_workers()
            if path.exists() and path.read_text().count("\n") >= 1 and workers:
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_worker_after_the_first_result)
    caplog.set_level(logging.WARNING, logger="harness.distributed.pool")
    killer.start()
    rows = run_tournament(config(out, backend="ray"), progress=False)
    killer.join()

    assert killed, "no game worker was found to kill"
    assert any("replaying" in r.getMessage() for r in caplog.records)
    lines = results(out)
    ids = [row["game_id"] for row in lines]
    assert sorted(ids) == sorted(t.game_id for t in schedule(config(out)))  # each exactly once
    assert all(r.error is None for r in rows)
    # The replayed game is the game the dead worker was playing: same seed, same moves.
    assert by_game(lines) == by_game(results(local_run))


def test_datagen_on_ray_writes_the_same_games_as_local(tmp_path):
    base = DatagenConfig(player="uct:20", games=4, out=str(tmp_path / "local"), board_size=5,
                         komi=2.5, opening_moves=2, seed=4)
    generate(base, progress=False)
    on_ray = dataclasses.replace(base, out=str(tmp_path / "ray"), backend="ray")
    rows = generate(on_ray, progress=False)

    assert len(rows) == 4 and all(r.error is None for r in rows)
    assert by_game(results(on_ray.games_dir.parent)) == by_game(results(base.games_dir.parent))
    for sgf in sorted(base.games_dir.glob("*.sgf")):
        assert (on_ray.games_dir / sgf.name).read_text() == sgf.read_text()
