"""Save and load zoo models as ``.keras`` files, safely and atomically."""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

import keras

from harness.nets import layers as _registered  # noqa: F401  (registers the custom layers)
from harness.nets.summary import spec_of, value_loss_of

MAX_UNPACKED_BYTES = 8 << 30  # a 60-block MobileNet is ~35 MB, a0.40.256 ~200 MB


class ModelFileError(ValueError):
    """A model file that is missing, corrupt or not a Keras model."""


def save_model(model: keras.Model, path: str | os.PathLike) -> Path:
    """Write ``model`` to ``path`` (a ``.keras`` file) without ever leaving a
    half-written file under that name."""
    path = Path(path)
    if path.suffix != ".keras":
        raise ValueError(f"{path}: model files must end in .keras")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".keras", dir=path.parent)
    os.close(fd)
    try:
        model.save(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def load_model(path: str | os.PathLike) -> keras.Model:
    """Load a ``.keras`` model with ``safe_mode=True`` (no arbitrary code).

    Raises :class:`ModelFileError` with one line naming the file when it is
    missing, corrupt or not a Keras model. The returned model carries
    ``value_loss`` (and ``spec`` for zoo models) like a freshly built one.
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
        model = keras.saving.load_model(path, safe_mode=True, compile=False)
    except ModelFileError:
        raise
    except Exception as error:  # corrupt archives fail in many ways inside Keras
        reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ModelFileError(
            f"{path}: cannot load model ({type(error).__name__}: {reason[:200]})") from error
    if not isinstance(model, keras.Model) or "value" not in model.output_names:
        raise ModelFileError(f"{path}: not a policy-value model (no 'value' output)")
    model.value_loss = value_loss_of(model)
    model.spec = spec_of(model)
    return model
