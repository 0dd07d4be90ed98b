"""``harness train`` killed (SIGKILL) after its first checkpoint resumes to the end.

Real path: a few dev-set SGF files -> ``harness ingest`` -> ``harness train`` in a
subprocess with a tiny zoo model -> kill -9 -> ``harness train --resume``.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.devdata import dev_sgf_dir

DEV = dev_sgf_dir() / "FineArt"
# Runs one subcommand module the way harness.cli does, without importing the others.
RUNNER = (
    "import argparse, importlib, sys\n"
    "m = importlib.import_module(sys.argv[1])\n"
    "p = argparse.ArgumentParser()\n"
    "m.add_arguments(p)\n"
    "sys.exit(m.run(p.parse_args(sys.argv[2:])))\n"
)


@pytest.fixture(scope="module")
def dev_dataset(tmp_path_factory) -> Path:
    if not DEV.is_dir():
        pytest.skip(f"development data {DEV} is absent")
    pytest.importorskip("harness.data.ingest")
    from harness.data.ingest import IngestConfig, ingest

    out = tmp_path_factory.mktemp("data") / "dev.h5"
    files = sorted(DEV.glob("*.SGF"))[:6]
    ingest(IngestConfig(sources=[str(f) for f in files], output=out, val_games=1, workers=1,
                        progress=False))
    return out


def harness_train(*args: str) -> subprocess.Popen:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, "harness.commands.train", *args, "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=Path(__file__).resolve().parents[1],
    )


def committed_epochs(run: Path) -> int:
    try:
        return json.loads((run / "state.json").read_text())["epochs_done"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return 0


def test_sigkill_after_first_checkpoint_then_resume(dev_dataset, tmp_path):
    runs = tmp_path / "models"
    run = runs / "kill"
    args = ("--model", "a0.tiny", "--data", str(dev_dataset), "--runs-dir", str(runs),
            "--run", "kill", "--epochs", "2", "--epoch-samples", "1024", "--batch-size", "32",
            "--val-samples", "64", "--lr-schedule", "cosine")
    first = harness_train(*args)
    deadline = time.monotonic() + 240
    while committed_epochs(run) < 1:
        assert first.poll() is None, f"train exited early: {first.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, "no checkpoint within 240 s"
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    assert first.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert committed_epochs(run) == 1
    with open(run / "metrics.csv", newline="") as f:
        assert [r["epoch"] for r in csv.DictReader(f)] == ["1"]

    second = harness_train(*args, "--resume")
    out, err = second.communicate(timeout=240)
    assert second.returncode == 0, err[-2000:]
    assert "resuming" in out and "after epoch 1, step 32" in out
    with open(run / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["epoch"] for r in rows] == ["1", "2"]
    assert [int(r["step"]) for r in rows] == [32, 64]  # 1024 / 32 steps each, no restart
    assert float(rows[1]["lr"]) < float(rows[0]["lr"])  # the cosine schedule went on
    state = json.loads((run / "state.json").read_text())
    assert state["epochs_done"] == 2 and state["step"] == 64
    assert (run / "best.keras").exists() and (run / "epoch-002.keras").exists()
    # The live metrics: each epoch's row and the 50th step's loss once, over both sessions.
    from harness.metrics import JSONL_NAME, event_files, read_event_scalars, read_jsonl

    lines = read_jsonl(run / JSONL_NAME)
    assert [(r["step"], r["epoch/epoch"]) for r in lines if "epoch/epoch" in r] == [(32, 1),
                                                                                   (64, 2)]
    assert [r["step"] for r in lines if "train/loss" in r] == [50]
    assert len(event_files(run)) == 2  # one per session
    steps: dict[str, list[int]] = {}
    for s in read_event_scalars(run):
        steps.setdefault(s.tag, []).append(s.step)
    assert steps["epoch/val_loss"] == [32, 64] and steps["train/loss"] == [50]
