"""What a run has spent so far: training and self-play FLOPs, seconds, the device.

A network's cost per position is :func:`harness.nets.summary.flops_per_position`
(two FLOPs per multiply-accumulate of its convolutions, dense layers and
attention, read from the layer shapes), computed once per run. A training
sample costs :data:`TRAIN_FLOPS_FACTOR` forward passes (the forward pass and
the two backward products), a self-play evaluation one. Supervised runs write
the cumulative figures into ``metrics.csv``, self-play runs into
``stats.csv``, and both into every checkpoint they save, as
:attr:`harness.nets.info.ModelInfo.compute`.

No Keras here: :mod:`harness.nets.info` reads the record without it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# A training step's FLOPs per sample, in forward passes' FLOPs.
TRAIN_FLOPS_FACTOR = 3


def train_flops(forward_flops: int, samples: int) -> int:
    """FLOPs of training a network of ``forward_flops`` per position on ``samples``."""
    return TRAIN_FLOPS_FACTOR * int(forward_flops) * int(samples)


def selfplay_flops(forward_flops: int, evaluations: int) -> int:
    """FLOPs of ``evaluations`` positions sent to a network of ``forward_flops``."""
    return int(forward_flops) * int(evaluations)


@dataclass(frozen=True)
class Compute:
    """A run's cumulative compute when a checkpoint was saved.

    ``samples`` are the training samples behind ``train_flops`` and
    ``evaluations`` the self-play positions sent to the network behind
    ``selfplay_flops`` (0 for a supervised run). ``wall_s`` and ``cpu_s`` are
    the run's own clock: the seconds its stages were timed for, over every
    session of a resumed run, and this process's CPU seconds (all its threads;
    not those of worker processes). ``device`` is what the latest session
    computed on (:meth:`harness.devices.Device.describe`).
    """

    train_flops: int = 0
    selfplay_flops: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    device: str = ""
    samples: int = 0
    evaluations: int = 0

    def __post_init__(self) -> None:
        for name in ("train_flops", "selfplay_flops", "samples", "evaluations"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"compute: {name} must be a whole number >= 0, got {value!r}")
        for name in ("wall_s", "cpu_s"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not value >= 0:
                raise ValueError(f"compute: {name} must be seconds >= 0, got {value!r}")
        if not isinstance(self.device, str):
            raise ValueError(f"compute: device must be text, got {self.device!r}")

    @property
    def flops(self) -> int:
        """Training and self-play FLOPs together."""
        return self.train_flops + self.selfplay_flops

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Any) -> Compute:
        """The record of :meth:`to_dict`; keys a later version adds are ignored,
        a wrong one is a ValueError naming it."""
        if not isinstance(values, dict):
            raise ValueError(f"compute must be a table, got {values!r}")
        known = {k: values[k] for k in cls.__dataclass_fields__ if k in values}
        return cls(**known)

    def describe(self) -> str:
        """One line for people: FLOPs in scientific notation, seconds, the device."""
        parts = [f"{self.train_flops:.3g} training FLOPs ({self.samples:,} samples)"]
        if self.selfplay_flops or self.evaluations:
            parts.append(f"{self.selfplay_flops:.3g} self-play FLOPs "
                         f"({self.evaluations:,} evaluations)")
        parts.append(f"{self.wall_s:,.1f} s wall, {self.cpu_s:,.1f} s CPU")
        if self.device:
            parts.append(f"on {self.device}")
        return ", ".join(parts)
