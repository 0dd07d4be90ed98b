"""The search's utility: the win value, or the win value blended with the margin.

The tree backs up one number per leaf. With ``[evaluator] score_utility`` off
that number is the value head's output; on, it is the
:class:`harness.nets.layers.ScoreUtility` blend of the value and the score
head's expected margin. The blend is built into a Keras model that shares
the network's layers (and so its weights, as they train) and answers
``policy`` and ``utility``: every runtime (Keras, or an export to ONNX
Runtime or OpenVINO) then computes it inside the forward pass, and the tree
and the evaluator's cache see one value per position as before.
"""

from __future__ import annotations

UTILITY = "utility"  # the wrapped model's value output


def utility_scale(scale: float, board_size: int) -> float:
    """The margin, in points, at which the score term is half its maximum:
    ``scale``, or the board's side when 0 (9 points on 9x9, 19 on 19x19)."""
    return float(scale) if scale > 0 else float(board_size)


def utility_model(model, weight: float, scale: float, value_head: str = "value",
                  sigmoid: bool = False):
    """``model`` answering ``policy`` and ``utility`` (its value head blended
    with its ``score`` head; see ``ScoreUtility``), sharing its layers."""
    import keras

    from harness.nets.layers import ScoreUtility

    names = list(getattr(model, "output_names", None) or [])
    outputs = getattr(model, "outputs", None)
    if not outputs or len(outputs) != len(names):
        raise ValueError(f"score_utility needs a functional Keras model; "
                         f"{getattr(model, 'name', model)!r} is not one")
    if "score" not in names:
        raise ValueError(f"score_utility needs a score head; model {model.name} has only "
                         f"{names} (a zoo name with .score adds one)")
    out = dict(zip(names, outputs, strict=True))
    # float32 whatever the precision policy: a bfloat16 blend would round the
    # utility to about 0.004, coarser than the differences the tree compares.
    utility = ScoreUtility(weight, scale, sigmoid=sigmoid, name=UTILITY, dtype="float32")(
        [out[value_head], out["score"]])
    return keras.Model(model.inputs, {"policy": out["policy"], UTILITY: utility},
                       name=f"{model.name}_utility")
