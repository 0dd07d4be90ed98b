"""Value warm-up: train only the value head until the window holds enough games.

A supervised network's value head was fitted to one kind of game; its first
self-play windows are a few dozen games of another. Training the whole
network on them moves the trunk (and with it the policy) to fit a handful of
outcomes. Until the window is large enough the trunk and the policy stay
frozen and only the layers that lead to the value output alone learn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


def _operations(tensor, seen: dict) -> None:
    """Every operation ``tensor`` depends on, into ``seen`` (by id)."""
    stack = [tensor]
    while stack:
        operation, node_index, _ = stack.pop()._keras_history
        if id(operation) in seen:
            continue
        seen[id(operation)] = operation
        stack.extend(operation._inbound_nodes[node_index].input_tensors)


def value_only_layers(model) -> list:
    """The layers on the way to the value output that the policy does not use."""
    outputs = dict(zip(model.output_names, model.outputs, strict=True))
    if "value" not in outputs or "policy" not in outputs:
        raise ValueError(f"{model.name}: value warm-up needs policy and value outputs")
    policy: dict = {}
    value: dict = {}
    try:
        _operations(outputs["policy"], policy)
        _operations(outputs["value"], value)
    except AttributeError as exc:
        raise ValueError(f"{model.name}: value warm-up needs a functional Keras model "
                         f"(its layers' graph is read): {exc}") from None
    return [op for key, op in value.items() if key not in policy and op.weights]


@contextlib.contextmanager
def value_head_only(model) -> Iterator[None]:
    """Within the block only the value head's own layers train; the flags are
    restored after it, so a checkpoint saved later is a normal one."""
    keep = {id(layer) for layer in value_only_layers(model)}
    if not model.optimizer.built:  # built on the warm-up's variables, it would refuse the rest
        model.optimizer.build(model.trainable_variables)
    frozen = [layer for layer in model.layers
              if layer.trainable and layer.weights and id(layer) not in keep]
    for layer in frozen:
        layer.trainable = False
    model.make_train_function(force=True)
    try:
        yield
    finally:
        for layer in frozen:
            layer.trainable = True
        model.make_train_function(force=True)
