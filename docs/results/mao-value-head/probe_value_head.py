"""Watch a network's value branch while it trains (issue #37 item 4).

Trains one zoo model the way ``harness train`` does (same plan, optimizer,
loss weights, precision, batches), but for a fixed number of steps with the
cosine schedule over those steps, and every ``--every`` steps records on a
fixed set of validation positions:

- ``dead_<layer>``: the fraction of channels of each ReLU layer of the value
  branch that are zero at every point of every one of those positions;
- ``pre_mean`` / ``pre_std``: mean and spread over positions of the value
  before its activation (tanh or sigmoid);
- ``noise_std``: the spread of that value over training-mode passes of the
  same position (what the channel selectors' dropout adds);
- ``sat``: the fraction of positions with |pre-activation| > 3 (tanh' < 0.01);
- ``mse``: the value MSE on those positions;
- ``grad_value``: the norm of the value loss's gradient with respect to the
  value branch's weights, and ``grad_trunk``: with respect to the input the
  value branch reads (on one training batch, training mode).

    .venv/bin/python docs/results/mao-value-head/probe_value_head.py \\
        --model mao.conv.paper.tiny --lr 0.006 --steps 1200 --every 200 --out paper.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import tempfile
import time

import numpy as np


def branch_layers(model, head: str, other: str):
    """Layers that feed ``head`` but not ``other``, in the model's order."""
    def ancestors(name):
        seen, todo = set(), [model.get_layer(name)]
        while todo:
            layer = todo.pop()
            if layer.name in seen:
                continue
            seen.add(layer.name)
            for node in layer._inbound_nodes:
                for parent in node.parent_nodes:
                    todo.append(parent.operation)
        return seen
    own = ancestors(head) - ancestors(other)
    return [layer for layer in model.layers if layer.name in own]


def _mao_value_variant(*, dropout_scale=1.0, bn=False, pool_bn=False):
    """The paper's MAO value head with its channel selectors' rate scaled,
    and/or batch norm between each mlpconv convolution and its ReLU, and/or
    batch norm on the pooled value before its activation. The zoo's default
    (``mao.conv.tiny``) is ``dropout_scale=0, bn=True``; ``mao.conv.paper.tiny``
    the paper's."""
    from keras import layers

    from harness.nets import blocks, heads
    from harness.nets.layers import MaxAverageOut

    def mlpconv(x, width, make):
        if not bn:
            return blocks.mlpconv(x, width, make)
        x = make.bn_relu(make.conv(width, 3)(x))
        return make.bn_relu(make.conv(width, 1)(x))

    def head(x, value_loss, make, *, width, pieces, dropout, **_):
        dropout = dropout * dropout_scale
        v = MaxAverageOut(width, pieces, dropout, seed=make.next_seed(),
                          kernel_initializer=blocks._glorot(make))(x)
        v = mlpconv(mlpconv(v, width, make), width, make)
        v = layers.GlobalAveragePooling2D()(heads._mao_out(v, 1, pieces, dropout, make))
        if pool_bn:
            v = make.bn()(v)
        return layers.Activation(heads.VALUE_ACTIVATION[value_loss], name="value")(v)
    return head


VARIANTS = {
    "nodrop": _mao_value_variant(dropout_scale=0.0),
    "bn": _mao_value_variant(bn=True),
    "poolbn": _mao_value_variant(dropout_scale=0.0, pool_bn=True),
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="mao.conv.tiny")
    p.add_argument("--data", default="datasets/quick.h5")
    p.add_argument("--lr", type=float, default=0.006)
    p.add_argument("--lr-final", type=float, default=0.0002)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--every", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--val", type=int, default=2048, help="validation positions probed")
    p.add_argument("--value-weight", type=float, default=None)
    p.add_argument("--precision", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="CSV of the probes")
    p.add_argument("--variant", default="", choices=["", *VARIANTS],
                   help="replace the MAO value head by a candidate (diagnosis only)")
    args = p.parse_args(argv)

    import keras
    import tensorflow as tf

    from harness.train.distribute import train_batch
    from harness.train.preflight import make_plan, resolve_config
    from harness.train.sources import epoch_batches, to_head_targets
    from harness.train.trainer import compile_model

    overrides = {"model": args.model, "data": args.data, "lr": args.lr,
                 "lr_final": args.lr_final, "lr_schedule": "cosine", "optimizer": "adam",
                 "batch_size": args.batch_size, "epochs": 1,
                 "epoch_samples": args.steps * args.batch_size, "seed": args.seed,
                 "precision": args.precision, "tensorboard": False,
                 "runs_dir": tempfile.mkdtemp(prefix="probe-"), "run": "probe"}
    if args.value_weight is not None:
        overrides["loss_weights"] = {"value": args.value_weight}
    if args.variant:
        from harness.nets import heads

        heads.mao_value = VARIANTS[args.variant]
    config = resolve_config(None, overrides, resume=False)
    plan = make_plan(config, resume=False)
    config = plan.config
    model = plan.build_model()
    value_loss = model.value_loss
    peek = next(iter(plan.train.batches(config.batch_size, seed=config.seed, augment=True)))
    compile_model(model, config, config.pace.optimizer_rate(), value_loss,
                  soft_policy=np.ndim(peek[1]["policy"]) == 2)

    branch = branch_layers(model, "value", "policy")
    value_layer = model.get_layer("value")
    pre = value_layer._inbound_nodes[0].parent_nodes[0].operation  # the value's input
    relus = [layer for layer in branch
             if getattr(layer, "activation", None) is keras.activations.relu
             or type(layer).__name__ == "ReLU"]
    branch_input = branch[0]._inbound_nodes[0].parent_nodes[0].operation
    probe = keras.Model(model.input, {"pre": pre.output, "trunk": branch_input.output,
                                      **{layer.name: layer.output for layer in relus}})
    head_part = keras.Model(branch_input.output, value_layer.output)
    branch_weights = [w for layer in branch for w in layer.trainable_weights]
    print(f"{config.model}: value branch {[layer.name for layer in branch]}; "
          f"{sum(int(np.prod(w.shape)) for w in branch_weights):,} weights; "
          f"ReLU layers {[layer.name for layer in relus]}", file=sys.stderr)

    xs, zs = [], []
    for x, targets, _ in plan.val.batches(512, seed=0, augment=False):
        xs.append(x)
        zs.append(np.asarray(targets["value"], np.float32).reshape(-1))
        if sum(map(len, xs)) >= args.val:
            break
    vx, vz = np.concatenate(xs)[:args.val], np.concatenate(zs)[:args.val]

    batches = epoch_batches(plan.train, config.batch_size, args.steps, seed=config.seed, epoch=1)
    rows, started = [], time.perf_counter()
    for step, batch in enumerate(batches):
        x, targets, weights = to_head_targets(batch, value_loss)
        if step % args.every == 0 or step == args.steps - 1:
            rows.append(_probe(step, probe, head_part, model, relus, vx, vz, x, targets,
                               branch_weights, value_loss, tf))
            row = rows[-1]
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in row.items()), file=sys.stderr, flush=True)
        train_batch(model, x, targets, weights)
    print(f"{args.steps} steps in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.out:
        with open(args.out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    for source in (plan.train, plan.val):
        getattr(source, "close", lambda: None)()
    return 0


def _probe(step, probe, head_part, model, relus, vx, vz, x, targets, branch_weights,
           value_loss, tf):
    outs = {k: np.asarray(v, np.float32) for k, v in probe.predict(vx, batch_size=512,
                                                                   verbose=0).items()}
    pre = outs["pre"].reshape(-1)
    value = np.tanh(pre) if value_loss == "mse" else 1 / (1 + np.exp(-pre))
    z = vz if value_loss == "mse" else (vz + 1) / 2
    row = {"step": step, "lr": float(np.asarray(model.optimizer.learning_rate)),
           "mse": float(np.mean((value - z) ** 2)),
           "pre_mean": float(pre.mean()), "pre_std": float(pre.std()),
           "sat": float(np.mean(np.abs(pre) > 3))}
    # Training-mode noise of the same positions (the channel selectors' dropout):
    # the spread over 8 passes, averaged over 256 positions.
    passes = np.stack([np.asarray(probe(vx[:256], training=True)["pre"], np.float32).reshape(-1)
                       for _ in range(8)])
    row["noise_std"] = float(passes.std(axis=0).mean())
    for layer in relus:
        a = outs[layer.name]
        alive = (a > 0).reshape(-1, a.shape[-1]).any(axis=0)
        row[f"dead_{layer.name}"] = float(1 - alive.mean())
    xb = tf.convert_to_tensor(x)
    zb = tf.convert_to_tensor(np.asarray(targets["value"], np.float32).reshape(-1, 1))
    with tf.GradientTape() as tape:
        feats = probe(xb, training=True)["trunk"]
        tape.watch(feats)
        v = tf.cast(head_part(feats, training=True), tf.float32)
        loss = (tf.reduce_mean((v - zb) ** 2) if value_loss == "mse"
                else tf.reduce_mean(tf.keras.losses.binary_crossentropy(zb, v)))
    grads = tape.gradient(loss, [feats, *branch_weights])
    norm = lambda gs: math.sqrt(sum(float(tf.reduce_sum(tf.cast(g, tf.float32) ** 2))  # noqa: E731
                                    for g in gs if g is not None))
    row["grad_trunk"] = norm(grads[:1])
    row["grad_value"] = norm(grads[1:])
    return row


if __name__ == "__main__":
    sys.exit(main())
