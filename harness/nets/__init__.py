"""Model zoo: Keras factories for the architectures the harness compares.

Names are parsed without Keras (``parse_model_name``, ``model_names``); the
rest loads Keras on first use, so ``import harness.nets`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.nets.names import ModelSpec, parse_model_name
from harness.nets.registry import model_names

if TYPE_CHECKING:
    from harness.nets.compute import Compute
    from harness.nets.factories import build_model
    from harness.nets.info import ModelFileError, ModelInfo, read_model_info
    from harness.nets.saving import load_model, model_info, save_model
    from harness.nets.summary import flops_per_position, model_summary, value_loss_of

_LAZY = {
    "Compute": "harness.nets.compute",
    "flops_per_position": "harness.nets.summary",
    "build_model": "harness.nets.factories",
    "load_model": "harness.nets.saving",
    "save_model": "harness.nets.saving",
    "ModelFileError": "harness.nets.info",
    "ModelInfo": "harness.nets.info",
    "read_model_info": "harness.nets.info",
    "model_info": "harness.nets.saving",
    "model_summary": "harness.nets.summary",
    "value_loss_of": "harness.nets.summary",
}

__all__ = [
    "Compute",
    "ModelFileError",
    "ModelInfo",
    "ModelSpec",
    "build_model",
    "flops_per_position",
    "load_model",
    "model_info",
    "model_names",
    "model_summary",
    "parse_model_name",
    "read_model_info",
    "save_model",
    "value_loss_of",
]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'harness.nets' has no attribute {name!r}")
