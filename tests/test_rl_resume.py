"""A self-play run killed (SIGKILL) during generation 2's self-play resumes and loses
no finished game, stores none twice and does not repeat generation 1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np

from harness.files import read_json
from harness.rl.buffer import ReplayBuffer
from harness.sgf import parse_sgf_bytes

GAMES = 8
CONFIG = """
run = "kill"
board_size = 5
komi = 2.0
encoder = "agz17"
model = "a0.tiny"
generations = 2
seed = 3
[mcts]
playouts = 6
add_noise = true
temperature_moves = 6
fast_playouts = 3
full_search_prob = 0.5
resign_threshold = -0.95
resign_disabled_fraction = 0.5
[evaluator]
batch_size = 8
[selfplay]
games = {games}
parallel = 2
[train]
steps = 3
batch_size = 16
[window]
initial = 8
"""


def _harness(args: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.Popen([sys.executable, "-m", "harness", "rl", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _game_moves(path: Path) -> list[tuple[int, ...]]:
    """Each game of a chunk or part file as its move sequence."""
    with h5py.File(path, "r") as f:
        move = f["positions/move"][...]
        first = f["games/first"][...]
        count = f["games/positions"][...]
    return [tuple(move[a:a + n].tolist()) for a, n in zip(first, count, strict=True)]


def test_killed_during_selfplay_resumes_without_losing_or_repeating_games(tmp_path):
    config = tmp_path / "kill.toml"
    config.write_text(CONFIG.format(games=GAMES))
    run = tmp_path / "runs" / "kill"
    args = ["--config", str(config), "--runs-dir", str(tmp_path / "runs")]
    parts = run / "buffer" / "gen-0002.parts"

    proc = _harness(args, tmp_path)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if parts.is_dir() and len(list(parts.glob("game-*.h5"))) >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"run ended before it could be killed:\n{proc.stdout.read()}"
        assert parts.is_dir(), "generation 2 never started"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()

    state = read_json(run / "state.json")
    assert state["generation"] == 2 and state["phase"] == "selfplay"
    assert not (run / "buffer" / "gen-0002.h5").exists()
    finished = [_game_moves(p)[0] for p in sorted(parts.glob("game-*.h5"))]
    assert 2 <= len(finished) < GAMES
    gen1 = _game_moves(run / "buffer" / "gen-0001.h5")
    gen1_model = (run / "models" / "gen-0001.keras").stat().st_mtime_ns

    resumed = _harness([*args, "--resume"], tmp_path)
    output, _ = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, output
    assert f"{len(finished)} games on disk" in output

    buffer = ReplayBuffer(run / "buffer", 5)
    assert buffer.game_counts().keys() == {1, 2}
    assert not parts.exists()
    gen2 = _game_moves(run / "buffer" / "gen-0002.h5")
    assert len(gen1) == len(gen2) == GAMES  # every game once, none missing
    assert gen2[: len(finished)] == finished  # the games finished before the kill, kept as is
    assert _game_moves(run / "buffer" / "gen-0001.h5") == gen1
    # Generation 1's training was committed before the kill and not redone.
    assert (run / "models" / "gen-0001.keras").stat().st_mtime_ns == gen1_model
    sgfs = sorted((run / "games" / "gen-0002").glob("*.sgf"))
    assert len(sgfs) == GAMES
    for sgf, moves in zip(sgfs, gen2, strict=True):  # the SGFs are the buffer's games
        record = parse_sgf_bytes(sgf.read_bytes())[0]
        assert tuple(p for _, p in record.moves) == moves
    stats = read_json(run / "stats" / "gen-0002.json")
    assert stats["games"] == GAMES and stats["games_total"] == 2 * GAMES
    # The run's compute goes on over the kill: generation 1's from the first
    # session, generation 2's evaluations from both sessions' games.
    evaluations = [read_json(run / "stats" / f"gen-{g:04d}.selfplay.json")["evaluations"]
                   for g in (1, 2)]
    assert stats["evaluations_total"] == sum(evaluations)
    assert stats["train_samples_total"] == 2 * 3 * 16  # two generations of 3 steps of 16
    assert stats["cpu_time_s"] > state["cpu_time_s"] > 0
    final = read_json(run / "state.json")
    assert final["generation"] == 3 and final["best"] == "models/gen-0002.keras"
    assert np.isfinite(final["nets"]["main"]["policy_losses"]).all()
