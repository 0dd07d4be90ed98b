"""The files of one training run, ``models/<run>/``, each written atomically.

Write order after an epoch is checkpoint, then ``metrics.csv``, then
``state.json``: the state file is the commit point. A kill at any moment leaves
either the previous state (the new checkpoint is ignored and the epoch is
replayed) or the new one; metric rows beyond the committed epoch are dropped
on resume, so no epoch is ever counted twice.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.config_io import read_saved_config, save_config
from harness.files import atomic_path, atomic_write
from harness.train.config import ConfigError, TrainConfig

METRICS_COLUMNS = (
    "epoch", "step", "lr", "samples", "samples_per_s", "epoch_time_s", "wall_time_s",
    "cpu_time_s", "samples_seen", "first_step_s", "forward_flops", "train_flops", "device",
    "train_loss", "train_policy_loss", "train_value_loss",
    "val_loss", "val_policy_loss", "val_value_loss",
    "val_policy_top1", "val_policy_top1_low", "val_policy_top1_high",
    "val_policy_top5", "val_policy_top5_low", "val_policy_top5_high",
    "val_value_mse", "val_value_mse_low", "val_value_mse_high", "val_games",
)


@dataclass
class RunState:
    epochs_done: int = 0
    step: int = 0
    checkpoint: str = ""
    best_epoch: int = 0
    best_val_loss: float | None = None
    wall_time_s: float = 0.0  # training only (validation is not charged to a budget)
    cpu_time_s: float = 0.0  # process CPU seconds while training, all threads
    samples_seen: int = 0
    first_step_s: float = 0.0  # the latest start's first step (tracing); not charged
    # A Ctrl-C inside an epoch: resume from this checkpoint, skipping the batches done.
    partial: dict[str, Any] = field(default_factory=dict)


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    config_path = property(lambda self: self.path / "config.json")
    state_path = property(lambda self: self.path / "state.json")
    metrics_path = property(lambda self: self.path / "metrics.csv")
    best_path = property(lambda self: self.path / "best.keras")

    def epoch_checkpoint(self, epoch: int) -> Path:
        return self.path / f"epoch-{epoch:03d}.keras"

    @property
    def interrupted_checkpoint(self) -> Path:
        return self.path / "interrupted.keras"

    def exists(self) -> bool:
        return self.state_path.exists() or self.config_path.exists()

    def create(self, config: TrainConfig) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        save_config(config, self.config_path)
        self.write_state(RunState())

    def read_config(self) -> TrainConfig:
        return read_saved_config(TrainConfig, self.config_path)

    def read_state(self) -> RunState:
        try:
            return RunState(**json.loads(self.state_path.read_text()))
        except FileNotFoundError:
            raise ConfigError(f"{self.path}: no training run to resume (no state.json)") from None
        except (json.JSONDecodeError, TypeError) as e:
            raise ConfigError(f"{self.state_path}: corrupt run state ({e})") from None

    def write_state(self, state: RunState) -> None:
        atomic_write(self.state_path, json.dumps(asdict(state), indent=2) + "\n")

    def save_model(self, model, path: Path) -> None:
        from harness.nets import save_model  # atomic: temporary name, then rename

        save_model(model, path)

    def copy_to_best(self, checkpoint: Path) -> None:
        with atomic_path(self.best_path) as tmp:
            shutil.copyfile(checkpoint, tmp)

    def read_metrics(self, upto_epoch: int | None = None) -> list[dict[str, str]]:
        if not self.metrics_path.exists():
            return []
        with open(self.metrics_path, newline="") as f:
            rows = list(csv.DictReader(f))
        if upto_epoch is not None:
            rows = [r for r in rows if int(r["epoch"]) <= upto_epoch]
        return rows

    def write_metrics(self, rows: list[dict[str, Any]]) -> None:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=METRICS_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(row.get(k, "")) for k in METRICS_COLUMNS})
        atomic_write(self.metrics_path, buf.getvalue())


def _fmt(value: Any) -> Any:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value

