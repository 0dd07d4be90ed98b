"""Supervised training: a checked config, budgeted epochs with checkpoints and
resume, validation with intervals over games, and the comparison of runs.

What other stages use of training (self-play's learner: its settings,
optimizer, compiled step, checkpoints, seeds and value targets) is published
here and loaded on first use, so ``import harness.train`` stays cheap and
those stages import from ``harness.train``, not from its modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.train.checkpoints import check_compatible, load_checkpoint
    from harness.train.config import OptimizerSettings, RunSettings
    from harness.train.distribute import optimizer_step, predict_batch
    from harness.train.evaluation import model_value_loss
    from harness.train.family import with_family_defaults
    from harness.train.schedules import keras_schedule
    from harness.train.sources import derive_seed, to_head_targets
    from harness.train.trainer import (
        apply_jit_compile,
        compile_model,
        exclude_from_decay,
        make_optimizer,
    )
    from harness.train.value_targets import signed_outcome

_LAZY = {
    "check_compatible": "harness.train.checkpoints",
    "load_checkpoint": "harness.train.checkpoints",
    "OptimizerSettings": "harness.train.config",
    "RunSettings": "harness.train.config",
    "optimizer_step": "harness.train.distribute",
    "predict_batch": "harness.train.distribute",
    "model_value_loss": "harness.train.evaluation",
    "with_family_defaults": "harness.train.family",
    "keras_schedule": "harness.train.schedules",
    "derive_seed": "harness.train.sources",
    "to_head_targets": "harness.train.sources",
    "apply_jit_compile": "harness.train.trainer",
    "compile_model": "harness.train.trainer",
    "exclude_from_decay": "harness.train.trainer",
    "make_optimizer": "harness.train.trainer",
    "signed_outcome": "harness.train.value_targets",
}

__all__ = [
    "OptimizerSettings",
    "RunSettings",
    "apply_jit_compile",
    "check_compatible",
    "compile_model",
    "derive_seed",
    "exclude_from_decay",
    "keras_schedule",
    "load_checkpoint",
    "make_optimizer",
    "model_value_loss",
    "optimizer_step",
    "predict_batch",
    "signed_outcome",
    "to_head_targets",
    "with_family_defaults",
]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'harness.train' has no attribute {name!r}")
