"""How a supervised run is paced: epochs of a fixed number of steps, or equal
slices of a compute budget.

The two modes differ in four things only: how many steps an epoch takes,
when an epoch and the run are over, the learning rate of the next step, and
what the optimizer is built with. Each mode answers them in one place, so
the training loop asks its pace instead of checking the mode wherever it
needs one of the answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from harness.train.schedules import ScheduleSpec, learning_rate, learning_rate_at

if TYPE_CHECKING:
    from harness.train.run_dir import RunState


class Pace(Protocol):
    epochs: int
    schedule: ScheduleSpec

    @property
    def epoch_steps(self) -> int | None: ...

    def describe(self, batch_size: int) -> str: ...

    def epoch_over(self, state: RunState, epoch: int) -> bool: ...

    def run_over(self, state: RunState) -> bool: ...

    def rate(self, state: RunState, step: int) -> float: ...

    def optimizer_rate(self) -> Any: ...

    def set_rate(self, optimizer: Any, rate: float) -> None: ...


@dataclass(frozen=True)
class EpochPace:
    """``epochs`` of ``steps_per_epoch`` optimizer steps; the schedule is a
    function of the optimizer's own step counter, so a resumed run follows
    the same curve."""

    epochs: int
    schedule: ScheduleSpec
    steps_per_epoch: int

    @property
    def epoch_steps(self) -> int:
        return self.steps_per_epoch

    def describe(self, batch_size: int) -> str:
        return (f"{self.epochs} epochs x {self.steps_per_epoch * batch_size:,} samples, "
                f"{self.steps_per_epoch:,} steps per epoch")

    def epoch_over(self, state: RunState, epoch: int) -> bool:
        return False  # the epoch's batches run out instead

    def run_over(self, state: RunState) -> bool:
        return state.epochs_done >= self.epochs

    def rate(self, state: RunState, step: int) -> float:
        return learning_rate(self.schedule, step)

    def optimizer_rate(self) -> Any:
        from harness.train.schedules import keras_schedule

        return keras_schedule(self.schedule)

    def set_rate(self, optimizer: Any, rate: float) -> None:
        pass  # the optimizer's schedule follows its own step counter


@dataclass(frozen=True)
class BudgetPace:
    """Train until ``budget`` (in ``unit``: wall_s, cpu_s or samples) is
    spent, in ``epochs`` equal slices; the schedule follows the fraction spent,
    so models of any speed get the same schedule shape at the same compute.
    The trainer sets the optimizer's rate before every step (:meth:`set_rate`)."""

    epochs: int
    schedule: ScheduleSpec
    budget: float
    unit: str

    @property
    def epoch_steps(self) -> None:
        return None  # an epoch ends when its slice is spent

    def describe(self, batch_size: int) -> str:
        return f"a budget of {self.budget:,g} {self.unit} in {self.epochs} slices"

    def used(self, state: RunState) -> float:
        spent = {"wall_s": state.wall_time_s, "cpu_s": state.cpu_time_s,
                 "samples": float(state.samples_seen)}[self.unit]
        return spent / self.budget

    def epoch_over(self, state: RunState, epoch: int) -> bool:
        return self.used(state) >= epoch / self.epochs

    def run_over(self, state: RunState) -> bool:
        return state.epochs_done >= self.epochs or self.used(state) >= 1.0

    def rate(self, state: RunState, step: int) -> float:
        return learning_rate_at(self.schedule, self.used(state))

    def optimizer_rate(self) -> float:
        return self.schedule.initial

    def set_rate(self, optimizer: Any, rate: float) -> None:
        optimizer.learning_rate.assign(rate)
