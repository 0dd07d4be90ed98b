"""Save and load zoo models as ``.keras`` files, safely and atomically.

A saved file carries a :class:`~harness.nets.info.ModelInfo` (encoder, board,
rules, heads, value convention) so that whoever loads it feeds it the planes
it was trained on, wherever the file has been copied to. The record travels
on the model object as ``model.model_info``: :func:`load_model` sets it from
the file, writers set it with :func:`model_info`, and :func:`save_model`
writes it back, so a load-and-save keeps it.
"""

from __future__ import annotations

import logging
import os
import zipfile
from pathlib import Path

import keras

from harness.files import atomic_path
from harness.nets import layers as _registered  # noqa: F401  (registers the custom layers)
from harness.nets.info import ModelFileError, ModelInfo, read_model_info, write_model_info
from harness.nets.plugins import load_env_plugins
from harness.nets.precision import runnable_here
from harness.nets.summary import heads_of, spec_of, value_loss_of

_WEIGHTS_MEMBER = "model.weights.h5"  # where Keras 3 keeps the weights in a .keras archive
MAX_UNPACKED_BYTES = 8 << 30  # a 60-block MobileNet is ~35 MB, a0.40.256 ~200 MB

_log = logging.getLogger(__name__)
_warned: set[Path] = set()  # files without a record, warned about once per process


def model_info(model: keras.Model, *, encoder: str, rules: str = "") -> ModelInfo:
    """The record for ``model`` fed by ``encoder``: board size, heads, value
    convention and zoo name are read from the network itself, so the record
    cannot contradict the weights it is saved with."""
    spec = spec_of(model)
    architecture = model.name if spec else getattr(model, "plugin", "")
    return ModelInfo(encoder=encoder, board_size=int(model.inputs[0].shape[1]),
                     heads=tuple(heads_of(model)),
                     value="sigmoid" if value_loss_of(model) == "bce" else "tanh",
                     rules=rules, architecture=architecture)


def _load_failure(error: Exception) -> str:
    """Why Keras could not load a file, in one line: a layer class nobody
    registered (a plugin's, not loaded) is named, anything else quoted."""
    import re

    unknown = re.search(r"[Cc]ould not locate class '([^']+)'", str(error))
    if unknown:
        return (f": it uses layer class {unknown.group(1)!r}, which no loaded plugin registers "
                f"(load the plugin that defines it: harness --plugin MODULE, or plugins = [...])")
    reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f" ({type(error).__name__}: {reason[:200]})"


def save_model(model: keras.Model, path: str | os.PathLike,
               info: ModelInfo | None = None, *, half_weights: bool = False) -> Path:
    """Write ``model`` to ``path`` (a ``.keras`` file) without ever leaving a
    half-written file under that name.

    ``info`` (default: ``model.model_info``) goes inside the file; it is
    checked against the network first, since a wrong record is worse than
    none. Without either the file is written bare and warns when loaded.

    ``half_weights`` stores the float32 weights rounded to float16, half the
    bytes: how a published network stays under the repository's 2 MB per
    file. Loading casts them back into float32 variables (Keras assigns by
    the variable's dtype), so the network computes as before, on weights
    rounded to 11 significant bits.
    """
    path = Path(path)
    if path.suffix != ".keras":
        raise ValueError(f"{path}: model files must end in .keras")
    info = info if info is not None else getattr(model, "model_info", None)
    if info is not None:
        _check_info(model, info, path)
    with atomic_path(path) as tmp:  # keeps the .keras suffix Keras insists on
        model.save(str(tmp))
        if half_weights:
            _round_weights_to_float16(tmp)
        if info is not None:
            write_model_info(tmp, info)
    return path


def _round_weights_to_float16(path: Path) -> None:
    """Replace the weights member of the ``.keras`` archive at ``path`` by its
    float16 copy; the other members are written back unchanged."""
    with zipfile.ZipFile(path) as archive:
        members = [(m, archive.read(m.filename)) for m in archive.infolist()]
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members:
            if member.filename == _WEIGHTS_MEMBER:
                data = _float16_weights(data)
            archive.writestr(member, data)


def _float16_weights(h5_bytes: bytes) -> bytes:
    """The HDF5 weights file ``h5_bytes`` with every float32 dataset as
    float16; groups, attributes and other datasets as they were."""
    import io

    import h5py
    import numpy as np

    out = io.BytesIO()
    with h5py.File(io.BytesIO(h5_bytes), "r") as source, h5py.File(out, "w") as target:
        target.attrs.update(source.attrs)

        def copy(name: str, node) -> None:
            if isinstance(node, h5py.Group):
                target.require_group(name).attrs.update(node.attrs)
                return
            values = node[()]
            if values.dtype == np.float32:
                values = values.astype(np.float16)
            target.create_dataset(name, data=values).attrs.update(node.attrs)

        source.visititems(copy)
    return out.getvalue()


def load_model(path: str | os.PathLike) -> keras.Model:
    """Load a ``.keras`` model with ``safe_mode=True`` (no arbitrary code).

    Raises :class:`ModelFileError` with one line naming the file when it is
    missing, corrupt or not a Keras model. The returned model carries
    ``value_loss`` (and ``spec`` for zoo models) like a freshly built one, and
    ``model_info``: the file's record, or None for a file written before
    models described themselves (one warning line per file and process).
    A model saved under a mixed precision this device does not compute
    natively comes back computing in float32 (:mod:`harness.nets.precision`).
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file")
    if not zipfile.is_zipfile(path):
        raise ModelFileError(f"{path}: not a .keras model file (not a zip archive)")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
        if "config.json" not in {m.filename for m in members}:
            raise ModelFileError(f"{path}: not a .keras model file (no config.json inside)")
        if sum(m.file_size for m in members) > MAX_UNPACKED_BYTES:
            raise ModelFileError(f"{path}: unpacks to more than {MAX_UNPACKED_BYTES >> 30} GiB; "
                                 f"refusing to load")
        info = read_model_info(path)
        load_env_plugins()  # the layers of plugin networks this process was told about
        model = keras.saving.load_model(path, safe_mode=True, compile=False)
    except ModelFileError:
        raise
    except Exception as error:  # corrupt archives fail in many ways inside Keras
        raise ModelFileError(f"{path}: cannot load model{_load_failure(error)}") from error
    if not isinstance(model, keras.Model) or "value" not in model.output_names:
        raise ModelFileError(f"{path}: not a policy-value model (no 'value' output)")
    model = runnable_here(model)  # a bfloat16 network on a CPU without bfloat16: float32
    model.value_loss = value_loss_of(model)
    model.spec = spec_of(model)
    model.model_info = info
    if model.spec is None and info is not None and info.architecture:
        model.plugin = info.architecture
    if info is None and path.resolve() not in _warned:
        _warned.add(path.resolve())
        _log.warning("%s: no model info inside (written by an older harness): its encoder "
                     "and rules are guessed", path)
    return model


def _check_info(model: keras.Model, info: ModelInfo, path: Path) -> None:
    from harness.features import get_encoder

    actual = model_info(model, encoder=info.encoder, rules=info.rules)
    for field in ("board_size", "heads", "value"):
        if getattr(info, field) != getattr(actual, field):
            raise ValueError(f"{path}: model info says {field} {getattr(info, field)!r}, "
                             f"the network has {getattr(actual, field)!r}")
    planes, width = get_encoder(info.encoder).planes, int(model.inputs[0].shape[3])
    if planes != width:
        raise ValueError(f"{path}: model info says encoder {info.encoder} ({planes} planes), "
                         f"the network takes {width}")
