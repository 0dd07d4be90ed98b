"""What a ``.keras`` file says about itself: encoder, board, rules, heads, value convention,
and the compute of the run that trained it (:mod:`harness.nets.compute`).

Two encoders share an input width (``cazenave21`` and ``nogo`` both have 21
planes), so the file's shape cannot tell which planes it was trained on; a
checkpoint copied out of its run directory used to be fed whatever the width
suggested. :func:`harness.nets.save_model` therefore writes one small JSON
member, :data:`MEMBER`, into the ``.keras`` zip beside Keras' own
``config.json``, ``metadata.json`` and weights. Keras ignores members it does
not know, so ``keras.saving.load_model(path, safe_mode=True)`` reads the file
as before, and this module reads the member with :mod:`zipfile` and
:mod:`json` only: a tool can inspect a model without loading TensorFlow.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.nets.compute import Compute

MEMBER = "harness-model-info.json"
FORMAT = "harness.model-info"
VERSION = 1
MAX_INFO_BYTES = 64 << 10  # a record is ~300-600 bytes; anything larger is not ours
# What the ``value`` output means, both from the side to move's view (see
# ``harness.nets.heads``): "tanh" the expected outcome in [-1, 1], "sigmoid"
# the probability of winning in [0, 1].
VALUE_CONVENTIONS = ("tanh", "sigmoid")


class ModelFileError(ValueError):
    """A model file that is missing, corrupt or not a Keras model."""


@dataclass(frozen=True)
class ModelInfo:
    """The facts a player or evaluator needs before it can feed a network.

    ``heads`` and ``value`` are read from the network when it is saved
    (:func:`harness.nets.saving.model_info`), so they cannot disagree with it;
    ``encoder`` and ``rules`` are what the writer trained it on.
    """

    encoder: str
    board_size: int
    heads: tuple[str, ...] = ("policy", "value")
    value: str = "tanh"
    rules: str = ""  # "" when the writer did not know (e.g. a bare zoo model)
    # The zoo name (e.g. "a0.2.16"), or the plugin reference that built the
    # network ("my_nets:tiny_transformer"; harness.nets.plugins), or "".
    architecture: str = ""
    # The run's cumulative compute when this checkpoint was saved; None for a
    # network no run trained (a bare zoo model) or a file from before it was kept.
    compute: Compute | None = None

    def __post_init__(self) -> None:
        if not self.encoder:
            raise ValueError("model info needs an encoder name")
        if not 2 <= self.board_size <= 25:
            raise ValueError(f"model info: board size must be in 2..25, got {self.board_size}")
        if self.value not in VALUE_CONVENTIONS:
            raise ValueError(f"model info: value must be one of {VALUE_CONVENTIONS}, "
                             f"got {self.value!r}")
        if "value" not in self.heads:
            raise ValueError(f"model info: heads {self.heads} have no 'value' head")

    def to_json(self) -> str:
        values = {"format": FORMAT, "version": VERSION, "encoder": self.encoder,
                  "board_size": self.board_size, "rules": self.rules,
                  "heads": list(self.heads), "value": self.value,
                  "architecture": self.architecture}
        if self.compute is not None:  # an optional key: older readers ignore it
            values["compute"] = self.compute.to_dict()
        return json.dumps(values, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes) -> ModelInfo:
        """Parse a record; keys a later version adds are ignored, a missing or
        mistyped one is a ValueError naming it."""
        try:
            values = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"model info is not JSON ({error})") from None
        if not isinstance(values, dict) or values.get("format") != FORMAT:
            raise ValueError(f"model info is not a {FORMAT} record")
        if not isinstance(values.get("version"), int) or values["version"] > VERSION:
            raise ValueError(f"model info version {values.get('version')!r} is newer than "
                             f"this harness reads ({VERSION})")
        heads = _typed(values, "heads", list)
        if not all(isinstance(h, str) for h in heads):
            raise ValueError("model info: heads must be names")
        return cls(encoder=_typed(values, "encoder", str),
                   board_size=_typed(values, "board_size", int),
                   heads=tuple(heads), value=_typed(values, "value", str),
                   rules=_typed(values, "rules", str, ""),
                   architecture=_typed(values, "architecture", str, ""),
                   compute=_compute(values.get("compute")))


def _typed(values: dict[str, Any], key: str, kind: type, default: Any = None) -> Any:
    value = values.get(key, default)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"model info: {key} must be a {kind.__name__}, got {value!r}")
    return value


def _compute(values: Any) -> Compute | None:
    if values is None:
        return None
    try:
        return Compute.from_dict(values)
    except (TypeError, ValueError) as error:
        raise ValueError(f"model info: {error}") from None


def read_model_info(path: str | os.PathLike) -> ModelInfo | None:
    """The record inside a ``.keras`` file, or None for a file written before
    models described themselves. Raises :class:`ModelFileError` (one line)
    when the file is not a zip or its record is oversized or unreadable."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            try:
                member = archive.getinfo(MEMBER)
            except KeyError:
                return None
            if member.file_size > MAX_INFO_BYTES:
                raise ModelFileError(f"{path}: model info of {member.file_size} bytes "
                                     f"(at most {MAX_INFO_BYTES})")
            with archive.open(member) as stream:
                text = stream.read(MAX_INFO_BYTES + 1)
            if len(text) > MAX_INFO_BYTES:  # the header under-stated the size
                raise ModelFileError(f"{path}: model info larger than {MAX_INFO_BYTES} bytes")
    except (OSError, zipfile.BadZipFile) as error:
        raise ModelFileError(f"{path}: cannot read a .keras model file ({error})") from None
    try:
        return ModelInfo.from_json(text)
    except ValueError as error:
        raise ModelFileError(f"{path}: {error}") from None


def write_model_info(path: str | os.PathLike, info: ModelInfo) -> None:
    """Add the record to a ``.keras`` file Keras has just written (and nobody
    else can see yet: :func:`harness.nets.save_model` calls it on its
    temporary file, before the rename)."""
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        if MEMBER in archive.namelist():
            raise ValueError(f"{path}: already holds model info")
        archive.writestr(MEMBER, info.to_json())
