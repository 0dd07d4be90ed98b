"""Export a ``.keras`` model to ONNX once, and find the export again by content.

Inference runtimes (ONNX Runtime, OpenVINO) read an ONNX graph; the ``.keras``
file stays the source of truth. The graph is written beside the model as
``STEM.HASH.onnx``, where HASH is the SHA-256 of the model file's bytes, so a
retrained model with the same name never reuses a stale graph; when the
model's folder is read-only it goes to a cache folder (``$HARNESS_CACHE``,
else ``~/.cache/harness``) under the same name. Models that live only in
memory are keyed by the SHA-256 of their config and weights instead;
:func:`graph_file` gives the runtimes such a model's graph in a temporary
file instead, so that RL, which exports every generation, leaves no cache.

Keras 3 exports through tf2onnx (``model.export(format="onnx")``); the
harness's custom layers use ``keras.ops`` only and export like stock layers.
Keras exports float32 models only, so a model trained under a mixed
precision policy is exported from a float32 copy with the same weights
(mixed precision keeps its weights in float32 anyway).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.files import atomic_path
from harness.nets.precision import float32_copy

HASH_CHUNK_BYTES = 1 << 20


def file_hash(path: str | os.PathLike) -> str:
    """First 16 hex digits of the SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(HASH_CHUNK_BYTES):
            digest.update(block)
    return digest.hexdigest()[:16]


def weights_hash(model) -> str:
    """First 16 hex digits of the SHA-256 of a model's config and weights: the
    identity of an in-memory model, which changes whenever its weights do."""
    digest = hashlib.sha256(json.dumps(model.get_config(), sort_keys=True, default=str).encode())
    for weight in model.get_weights():
        digest.update(weight.tobytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where exports go when a model's own folder is not writable."""
    root = os.environ.get("HARNESS_CACHE") or Path.home() / ".cache" / "harness"
    return Path(root) / "onnx"


def writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried, not asked: a
    read-only mount says yes to ``os.access`` for root)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe.", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


def onnx_path(model_path: str | os.PathLike | None, key: str, stem: str = "model") -> Path:
    """Where the export of a model with identity ``key`` lives: beside the
    ``.keras`` file if its folder is writable, else in :func:`cache_dir`."""
    if model_path is not None:
        model_path = Path(model_path)
        stem = model_path.stem
        beside = model_path.parent / f"{stem}.{key}.onnx"
        if beside.is_file() or writable(model_path.parent):
            return beside
    return cache_dir() / f"{stem}.{key}.onnx"


def export_onnx(model, path: str | os.PathLike) -> Path:
    """Write ``model``'s inference graph to ``path`` (input ``planes`` with a
    free batch axis; outputs named like the model's), atomically: a reader never
    sees a half-written graph, and two processes exporting at once both win."""
    import keras

    if keras.backend.backend() != "tensorflow":
        raise RuntimeError(f"ONNX export goes through TensorFlow (tf2onnx); the Keras backend "
                           f"here is {keras.backend.backend()}")
    import tensorflow as tf

    path = Path(path)
    shape = tuple(model.inputs[0].shape[1:])
    signature = [tf.TensorSpec((None, *shape), tf.float32, name="planes")]
    with atomic_path(path) as tmp:
        model.export(str(tmp), format="onnx", verbose=False, input_signature=signature)
    return path


def exported(model, model_path: str | os.PathLike | None = None) -> Path:
    """The ONNX graph of ``model``, exported on first use and cached.

    With ``model_path`` (the ``.keras`` file ``model`` was loaded from) the
    cache key is the file's hash; without it, the hash of the weights.
    """
    key = file_hash(model_path) if model_path is not None else weights_hash(model)
    path = onnx_path(model_path, key, getattr(model, "name", "model"))
    if not path.is_file():
        export_onnx(float32_copy(model), path)
    return path


@contextmanager
def graph_file(model, model_path: str | os.PathLike | None) -> Iterator[Callable[[], Path]]:
    """A function giving the ONNX graph of ``model``, exported on its first
    call: :func:`exported` beside ``model_path`` (the frozen ``.keras`` file
    the model was loaded from), or, without one, a temporary file removed
    when the context ends (a runtime holds the graph once it has read it).
    Lazy, so that a caller trying several runtimes pays one export, and none
    when it tries none."""
    folder: tempfile.TemporaryDirectory | None = None
    path: Path | None = None

    def graph() -> Path:
        nonlocal folder, path
        if path is None:
            if model_path is not None:
                path = exported(model, model_path)
            else:
                folder = tempfile.TemporaryDirectory(prefix="harness-onnx-")
                path = export_onnx(float32_copy(model), Path(folder.name) / "model.onnx")
        return path

    try:
        yield graph
    finally:
        if folder is not None:
            folder.cleanup()
