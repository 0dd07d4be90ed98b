"""Loading checkpoints with every custom object registered, and checking their shape.

The zoo's ``load_model`` registers its custom layers and loads with
``safe_mode=True``; importing this module's Keras schedule registers the
learning-rate schedule saved inside every training checkpoint's optimizer.
"""

from __future__ import annotations

from pathlib import Path

from harness.train.config import ConfigError


def load_checkpoint(path: str | Path, *, compile: bool = True):
    """A ``.keras`` checkpoint; compiled (optimizer state included) for resuming.

    Uncompiled loads go through the zoo's ``load_model``; compiled ones need
    Keras' own loader, with the zoo's layers and our schedule registered.
    """
    from harness.nets import ModelFileError, load_model

    path = Path(path)
    try:
        model = load_model(path)  # checks the file, one line on failure
    except ModelFileError as e:
        raise ConfigError(str(e)) from None
    if not compile:
        return model
    import keras

    import harness.train._keras_schedule  # noqa: F401  (registers HarnessSchedule)

    try:
        compiled = keras.models.load_model(path, safe_mode=True, compile=True)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"{path}: cannot restore the training state ({first[:200]})") from None
    compiled.value_loss = model.value_loss
    compiled.model_info = model.model_info
    return _runnable_training_state(compiled, path)


def _runnable_training_state(compiled, path: Path):
    """``compiled``, or its float32 copy with the same optimizer state when it
    was saved under a mixed precision this device does not compute natively
    (a run resumed on an AVX2 CPU after a machine with bfloat16: emulated
    bfloat16 trains 11x slower, docs/results.md)."""
    from harness.nets.precision import runnable_here

    copy = runnable_here(compiled)
    if copy is compiled:
        return compiled
    copy.compile_from_config(compiled.get_compile_config())
    copy.optimizer.build(copy.trainable_variables)
    saved, fresh = compiled.optimizer.variables, copy.optimizer.variables
    if [v.shape for v in saved] != [v.shape for v in fresh]:
        raise ConfigError(f"{path}: its optimizer state does not carry over to a float32 copy; "
                          f"resume it on a device that computes its mixed precision natively")
    for target, value in zip(fresh, saved, strict=True):
        target.assign(value)
    return copy


def input_shape(model) -> tuple[int, int, int]:
    """(board rows, board cols, planes) of a channels-last model."""
    shape = tuple(model.inputs[0].shape[1:])
    if len(shape) != 3:
        raise ConfigError(f"model input has shape {shape}, expected (B, B, planes)")
    return shape  # type: ignore[return-value]


def check_compatible(model, board_size: int, planes: int, encoder: str, what: str) -> None:
    """One line naming the mismatch between a model's input and a dataset's encoding."""
    rows, cols, channels = input_shape(model)
    if (rows, cols) != (board_size, board_size):
        raise ConfigError(f"{what}: model is for a {rows}x{cols} board, "
                          f"dataset is {board_size}x{board_size}")
    if channels != planes:
        raise ConfigError(f"{what}: model takes {channels} input planes, "
                          f"encoder {encoder} gives {planes}")
    info = getattr(model, "model_info", None)
    if info is not None and info.encoder != encoder:  # same width, other planes
        raise ConfigError(f"{what}: model was trained on encoder {info.encoder}, "
                          f"not {encoder}")
