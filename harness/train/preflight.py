"""Everything checked before a run starts, each failure one line naming the problem.

Order: config keys and values (in :mod:`harness.train.config`), model name,
dataset file, encoder, then model/dataset agreement (board size and input
planes of any checkpoint the run starts from). Nothing here trains, writes a
run directory or imports TensorFlow, so a bad config costs well under a second.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.config_io import check_keys, load_config, read_table
from harness.train.config import ConfigError, TrainConfig
from harness.train.run_dir import RunDir


def resolve_config(path: str | Path | None, overrides: dict[str, Any], *,
                   resume: bool) -> TrainConfig:
    """The config of a new run, or the saved one of a run to resume.

    On resume the saved config is authoritative (its schedule is inside the
    checkpointed optimizer); a flag or file that contradicts it is an error,
    not silently ignored.
    """
    from harness.nets.plugins import directory_name

    if not resume:
        config = load_config(TrainConfig, path, overrides, table="train")
        return config if config.run else config.replace(run=directory_name(config.model))
    given = {**(read_table(path, "train") if path is not None else {}),
             **{k: v for k, v in overrides.items() if v is not None}}
    check_keys(TrainConfig, given, str(path) if path is not None else "flags")
    run = given.get("run") or (directory_name(given["model"]) if given.get("model") else None)
    if not run:
        raise ConfigError("--resume needs the run: give --run NAME (or the config that made it)")
    run_dir = RunDir(Path(given.get("runs_dir") or TrainConfig.runs_dir) / run)
    saved = run_dir.read_config()
    for key, value in given.items():
        if key in ("run", "runs_dir") or (key, value) in _UNRESOLVED:
            continue
        saved_value = saved.to_dict().get(key)
        if key == "loss_weights" and isinstance(value, dict):
            saved_value = {h: saved_value.get(h) for h in value}
        if _normal(value) != _normal(saved_value):
            raise ConfigError(f"{run_dir.path}: {key} was {saved_value!r} for this run, "
                              f"cannot change it to {value!r} on resume")
    return saved


# Values a new run resolves at start (saved resolved), so they match anything on resume.
_UNRESOLVED = {("encoder", ""), ("value_loss", "auto")}


def _normal(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def check_plugins(config: TrainConfig) -> None:
    """The run's Keras backend chosen and its plugins loaded, before any network."""
    from harness.devices import use_backend
    from harness.nets.plugins import load_plugins

    try:
        use_backend(config.keras_backend)
        load_plugins(config.plugins)
    except ValueError as e:
        raise ConfigError(str(e)) from None


def check_model_name(name: str):
    from harness.nets.plugins import model_spec

    try:
        return model_spec(name)
    except ValueError as e:
        message = str(e)
        raise ConfigError(message if name in message else f"unknown model {name!r}: {message}") \
            from None


def check_encoder(name: str):
    from harness.features import get_encoder

    try:
        return get_encoder(name)
    except (KeyError, ValueError) as e:
        raise ConfigError(f"unknown encoder {name!r} ({e})") from None


def resolve_against_world(config: TrainConfig) -> tuple[TrainConfig, Any]:
    """Model name, dataset, encoder, conventions checked; the config with defaults filled in.

    Returns the frozen config (encoder, value convention and loss weights
    made explicit) and the dataset's metadata.
    """
    from harness.train.dataset_source import read_dataset_meta
    from harness.train.family import with_family_defaults

    check_plugins(config)
    spec = check_model_name(config.model)
    config = with_family_defaults(config, config.model)
    meta = read_dataset_meta(config.data)  # missing / unreadable file: one line
    for split in filter(None, (config.train_split, config.val_split)):
        if split not in meta.splits:
            raise ConfigError(f"{config.data}: unknown split {split!r} "
                              f"(has {', '.join(meta.splits)})")
    if meta.splits.get(config.train_split, 0) == 0:
        raise ConfigError(f"{config.data}: split {config.train_split!r} has no positions")
    encoder = check_encoder(config.encoder or meta.encoder)
    value_loss = spec.value_loss if config.value_loss == "auto" else config.value_loss
    if config.init:
        from harness.train.checkpoints import check_compatible, load_checkpoint

        start = load_checkpoint(config.init, compile=False)
        check_compatible(start, meta.board_size, encoder.planes, encoder.name, config.init)
        value_loss = start.value_loss if config.value_loss == "auto" else value_loss
    heads = tuple(h for h in config.heads if h not in ("policy", "value"))
    aux = tuple(h for h in spec.heads if h not in ("policy", "value")) + heads
    weights = {"policy": 1.0, "value": float(spec.value_weight),
               **{h: 1.0 for h in aux}, **config.loss_weights}
    resolved = config.replace(encoder=encoder.name, value_loss=value_loss, loss_weights=weights)
    return resolved, meta


def make_plan(config: TrainConfig, *, resume: bool):
    """A :class:`harness.train.trainer.TrainingPlan` for the config; raises ConfigError."""
    from harness.train.dataset_source import open_split
    from harness.train.trainer import TrainingPlan

    if resume:
        meta = None
        from harness.train.dataset_source import read_dataset_meta

        check_plugins(config)
        check_model_name(config.model)
        meta = read_dataset_meta(config.data)
        check_encoder(config.encoder)
    else:
        if RunDir(config.run_dir).exists():
            raise ConfigError(f"{config.run_dir}: run already exists "
                              "(use --resume, or another --run)")
        config, meta = resolve_against_world(config)
    encoder = check_encoder(config.encoder)
    board_size = meta.board_size

    def described(model):
        """The model with the record every checkpoint of the run will carry."""
        from harness.nets import model_info

        model.model_info = model_info(model, encoder=encoder.name, rules=meta.rules)
        return model

    def build_model():
        if config.init:
            from harness.train.checkpoints import load_checkpoint

            return described(load_checkpoint(config.init, compile=False))
        with dtype_policy(config.precision):
            return described(fresh_network(config, board_size, encoder.planes))

    def load_model(path: Path):
        from harness.train.checkpoints import check_compatible, load_checkpoint

        model = load_checkpoint(path)
        check_compatible(model, board_size, encoder.planes, encoder.name, str(path))
        return described(model)

    train = open_split(config.data, config.train_split, encoder.name, config.seed,
                       config.window_parts)
    if len(train) < config.batch_size:
        train.close()
        raise ConfigError(f"{config.data}: split {config.train_split!r} has {len(train)} "
                          f"positions, fewer than one batch of {config.batch_size}")
    val = (open_split(config.data, config.val_split, encoder.name)
           if config.val_split and meta.splits.get(config.val_split) else None)
    return TrainingPlan(config, train, val, build_model, load_model)


def fresh_network(config: TrainConfig, board_size: int, planes: int):
    """The untrained network a resolved config builds (zoo name or plugin)."""
    from harness.nets import build_model

    return build_model(config.model, board_size, planes, heads=_heads(config),
                       value_loss=config.value_loss, seed=config.seed)


def network_cost(config: TrainConfig) -> tuple[int, int]:
    """Forward FLOPs per position and parameter count of the network a new run
    of ``config`` would train, from a copy built and thrown away: what a
    compute budget in FLOPs is converted with before any run starts."""
    from harness.nets.summary import flops_per_position

    resolved, meta = resolve_against_world(config)
    model = fresh_network(resolved, meta.board_size, check_encoder(resolved.encoder).planes)
    return flops_per_position(model), int(model.count_params())


@contextlib.contextmanager
def dtype_policy(name: str):
    """Build layers under the Keras dtype policy ``name`` (``auto``: the
    device's native one, :func:`harness.devices.resolve_precision`). Layers
    record their policy in the saved config, so checkpoints reload with the
    same precision."""
    import keras

    from harness.devices import resolve_precision

    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(resolve_precision(name))
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def _heads(config: TrainConfig) -> tuple[str, ...] | None:
    extra = tuple(h for h in config.heads if h not in ("policy", "value"))
    return ("policy", "value", *extra) if extra else None


def train_run(config: TrainConfig, *, resume: bool, progress: bool = True,
              log: Callable[[str], None] = print):
    """Plan ``config`` (:func:`make_plan`), train it and close its data
    sources whatever happens: what a suite or a frontier study does for each
    of its runs. Returns the :class:`harness.train.trainer.TrainResult`."""
    from harness.train.trainer import train

    plan = make_plan(config, resume=resume)
    try:
        return train(plan, resume=resume, progress=progress, log=log)
    finally:
        for source in (plan.train, plan.val):
            getattr(source, "close", lambda: None)()
