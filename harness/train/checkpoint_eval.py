"""A saved checkpoint scored on a dataset split: the library behind ``harness
evaluate``, the suite's comparison and the API.

The checkpoint is checked against the dataset (board, encoder planes) before
any work, with the encoder taken from the model file, else its run, else the
dataset, so a network is scored on the inputs it was trained on.
"""

from __future__ import annotations

from pathlib import Path


def run_config_for(model: Path):
    """The training config of the run a checkpoint belongs to, if it is in one."""
    from harness.config_io import read_saved_config
    from harness.train.config import ConfigError, TrainConfig

    try:
        return read_saved_config(TrainConfig, model.parent / "config.json")
    except ConfigError:
        return None


def evaluate_checkpoint(model_path: str | Path, data: str | Path, split: str, *,
                        encoder: str = "", batch_size: int = 256, max_samples: int = 0,
                        recalibrate_bn: int = 0, save_model: str | Path | None = None,
                        progress: bool = False) -> dict[str, float | str | int]:
    """Load, check against the dataset, evaluate: metrics with 95% intervals over games.

    Raises ConfigError (one line).
    """
    evaluation, info = evaluate_checkpoint_split(
        model_path, data, split, encoder=encoder, batch_size=batch_size,
        max_samples=max_samples, recalibrate_bn=recalibrate_bn, save_model=save_model,
        progress=progress)
    return {**info, **evaluation.with_intervals()}


def evaluate_checkpoint_split(model_path: str | Path, data: str | Path, split: str, *,
                              encoder: str = "", batch_size: int = 256, max_samples: int = 0,
                              recalibrate_bn: int = 0, save_model: str | Path | None = None,
                              progress: bool = False):
    """The :class:`~harness.train.evaluation.Evaluation` of a checkpoint, and what it ran on;
    with ``save_model``, the recalibrated checkpoint is written there first."""
    from harness.train.checkpoints import check_compatible, load_checkpoint
    from harness.train.config import ConfigError
    from harness.train.dataset_source import open_split, read_dataset_meta
    from harness.train.evaluation import evaluate_split, model_value_loss
    from harness.train.preflight import check_encoder

    model_path, data = Path(model_path), Path(data)
    if save_model is not None and not recalibrate_bn:
        raise ConfigError("--save-model writes a recalibrated checkpoint: give --recalibrate-bn N")
    if save_model is not None and Path(save_model).suffix != ".keras":
        raise ConfigError(f"{save_model}: the recalibrated checkpoint must be a .keras file")
    if not model_path.exists():
        raise ConfigError(f"{model_path}: model file not found")
    meta = read_dataset_meta(data)
    if split not in meta.splits:
        raise ConfigError(f"{data}: unknown split {split!r} (has {', '.join(meta.splits)})")
    if not meta.splits[split]:
        raise ConfigError(f"{data}: split {split!r} has no positions")
    run_config = run_config_for(model_path)
    model = load_checkpoint(model_path, compile=False)
    recorded = model.model_info.encoder if model.model_info else ""  # older files: none
    enc = check_encoder(encoder or recorded or (run_config.encoder if run_config else "")
                        or meta.encoder)
    check_compatible(model, meta.board_size, enc.planes, enc.name, str(model_path))
    value_loss = model_value_loss(model)
    weights = {"policy": 1.0, "value": 1.0}
    if run_config is not None:
        weights.update(run_config.loss_weights)
    if recalibrate_bn:
        from harness.train.batch_norm import recalibrate_from_source

        train = open_split(data, "train", enc.name)
        try:
            recalibrate_from_source(model, train, recalibrate_bn, batch_size)
        finally:
            train.close()
        if save_model is not None:
            from harness.nets import save_model as write_model  # atomic, model_info kept

            write_model(model, Path(save_model))
    source = open_split(data, split, enc.name)
    try:
        evaluation = evaluate_split(model, source, value_loss=value_loss, loss_weights=weights,
                                    batch_size=batch_size, max_samples=max_samples,
                                    progress=progress)
    finally:
        source.close()
    return evaluation, {"model": str(model_path), "data": str(data), "split": split,
                        "encoder": enc.name, "value_head": value_loss,
                        "recalibrate_bn": recalibrate_bn}
