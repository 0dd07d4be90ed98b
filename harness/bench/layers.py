"""``harness bench layers``: where a MobileNet block's training step goes, layer by layer.

Forward and backward (input and weight gradients) of each layer of an
inverted residual block at training shapes, next to a ResNet convolution of
the same trunk width and next to the depthwise alternatives tried for issue
19 (a grouped convolution, shifted multiply-adds over the taps), alternating
the candidates in rounds so a busy machine slows them alike. It is the
measurement behind two choices: the stock depthwise kernel stays (fastest),
and batch norm runs fused (the expanded maps' batch norm costs the most).
"""

from __future__ import annotations

import argparse
import re
import time

from harness.files import show_table

HELP = "forward+backward ms of a MobileNet block's layers and depthwise alternatives"
HEADER = ("layer", "input", "ms fwd+bwd", "vs keras depthwise")
NOT_MEASURED = "no kernel here"  # a step this TensorFlow build cannot run on this CPU


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--board-size", type=int, default=19)
    parser.add_argument("--trunk", type=int, default=64, help="block input width")
    parser.add_argument("--expansion", type=int, default=200, help="expanded width")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--save", metavar="STEM", default=None, help="also write STEM.csv/.md")


def _shifted_depthwise(kernel):
    """Depthwise 3x3 "same" convolution as nine shifted multiply-adds."""
    import tensorflow as tf

    def run(x):
        k = kernel.shape[0]
        pad = k // 2
        height, width = x.shape[1], x.shape[2]
        padded = tf.pad(x, [[0, 0], [pad, pad], [pad, pad], [0, 0]])
        taps = [padded[:, i:i + height, j:j + width, :] * kernel[i, j, :, 0]
                for i in range(k) for j in range(k)]
        return tf.add_n(taps)

    return run


def _grouped_depthwise(kernel):
    """Depthwise convolution as a grouped convolution (one group per channel)."""
    import tensorflow as tf

    k, _, channels, _ = kernel.shape
    return lambda x: tf.nn.conv2d(x, tf.reshape(kernel, (k, k, 1, channels)), 1, "SAME")


def candidates(args) -> dict:
    """name -> (layer or function of x, input tensor, the layer whose
    weights get gradients)."""
    import keras
    import numpy as np
    import tensorflow as tf

    from harness.nets.layers import FusedBatchNormalization

    rng = np.random.default_rng(0)
    board = args.board_size

    def tensor(channels):
        return tf.constant(rng.random((args.batch, board, board, channels), dtype=np.float32))

    narrow, wide = tensor(args.trunk), tensor(args.expansion)
    depthwise = keras.layers.DepthwiseConv2D(3, padding="same", use_bias=False)
    depthwise.build(wide.shape)
    kernel = depthwise.kernel

    def bn_relu(bn):
        return (lambda x: tf.nn.relu(bn(x, training=True))), wide, bn

    def layer(made, x):
        return made, x, made

    return {
        "depthwise 3x3 (keras)": layer(depthwise, wide),
        "depthwise as grouped conv": (_grouped_depthwise(kernel), wide, depthwise),
        "depthwise as shifted mul-adds": (_shifted_depthwise(kernel), wide, depthwise),
        "batch norm + ReLU (keras)": bn_relu(keras.layers.BatchNormalization()),
        "batch norm + ReLU (fused)": bn_relu(FusedBatchNormalization()),
        "conv 1x1 expand": layer(keras.layers.Conv2D(args.expansion, 1, use_bias=False), narrow),
        "conv 1x1 squeeze": layer(keras.layers.Conv2D(args.trunk, 1, use_bias=False), wide),
        "conv 3x3 (ResNet)": layer(keras.layers.Conv2D(args.trunk, 3, padding="same"), narrow),
    }


def step(fn, x, owner):
    """A compiled forward and backward pass (gradients for input and weights)."""
    import tensorflow as tf

    fn(x)  # builds a layer's weights
    weights = list(owner.trainable_variables)

    @tf.function
    def run():
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(fn(x))
        return tape.gradient(loss, [x, *weights])

    return run


def unsupported(run) -> str | None:
    """Why TensorFlow cannot run this step on this machine, or None where it
    can; the two calls are also the step's warm-up before it is timed.

    Its CPU kernels differ by build and instruction set: on an AVX2-only
    machine (TensorFlow 2.21) a grouped convolution has no gradient kernel,
    where AVX-512 machines have one.
    """
    import tensorflow as tf

    try:
        run()
    except tf.errors.InvalidArgumentError as error:
        sentences = re.findall(r"[A-Z][^.{}]*not supported[^.]*\.", str(error))
        return sentences[0] if sentences else str(error).strip().splitlines()[0][:120]
    run()
    return None


def measure(args: argparse.Namespace, log=print) -> list[tuple]:
    import numpy as np

    found = candidates(args)
    steps = {name: step(fn, x, owner) for name, (fn, x, owner) in found.items()}
    missing = {name: why for name, run in steps.items() if (why := unsupported(run))}
    for name, why in missing.items():
        log(f"  {name}: not measured: {why}")
        del steps[name]
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, run in steps.items():
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    base = float(np.median(times["depthwise 3x3 (keras)"]))
    rows = []
    for name, (_, x, _) in found.items():
        shape = "x".join(str(d) for d in x.shape)
        if name in missing:
            rows.append((name, shape, NOT_MEASURED, NOT_MEASURED))
            continue
        ms = float(np.median(times[name])) * 1e3
        rows.append((name, shape, ms, ms / 1e3 / base))
        log(f"  {name}: {ms:,.1f} ms")
    return rows


def run(args: argparse.Namespace) -> int:
    from harness.devices import backend_name

    if backend_name() != "tensorflow":  # it times TensorFlow's own kernels
        from harness.config_io import ConfigError

        raise ConfigError(f"measures TensorFlow's kernels; the Keras backend here is "
                          f"{backend_name()} (run it with --keras-backend tensorflow)")
    return show_table(HEADER, measure(args), args.save)
