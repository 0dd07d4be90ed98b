"""Loading a trained network for play, and finding which encoder feeds it.

A ``.keras`` file knows its board size and input width but not which encoder
made its inputs, and two encoders share a width (``cazenave21`` and ``nogo``
both have 21 planes). The encoder is taken, in order, from the player spec
(``,encoder=NAME``), from the training run the checkpoint sits in
(``config.json`` beside it), or from the width when only one encoder fits
(``nogo`` for NoGo games, ``cazenave21`` for Go when the width is 21).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.game.position import Game


@dataclass
class Network:
    model: object  # keras.Model
    path: Path
    size: int
    planes: int
    run_encoder: str  # the training run's encoder, "" if unknown

    def encoder_for(self, rules: str, explicit: str | None = None) -> str:
        """The encoder name for this network in a game with ``rules``."""
        from harness.features import encoder_names, get_encoder

        name = explicit or self.run_encoder
        if not name:
            fitting = [n for n in encoder_names() if get_encoder(n).planes == self.planes]
            if len(fitting) > 1 and {"nogo", "cazenave21"} <= set(fitting):
                fitting = ["nogo"] if rules == "nogo" else ["cazenave21"]
            if len(fitting) != 1:
                raise ValueError(
                    f"{self.path}: cannot tell the encoder of a {self.planes}-plane network "
                    f"(candidates: {', '.join(fitting) or 'none'}); add ,encoder=NAME to the spec"
                )
            name = fitting[0]
        planes = get_encoder(name).planes
        if planes != self.planes:
            raise ValueError(
                f"{self.path}: the network takes {self.planes} planes, "
                f"encoder {name} gives {planes}"
            )
        return name

    def check_game(self, game: Game) -> None:
        if game.size != self.size:
            raise ValueError(
                f"{self.path}: the network plays {self.size}x{self.size}, "
                f"the game is {game.size}x{game.size}"
            )


def load_network(path: str | Path) -> Network:
    """Load ``path`` safely (``harness.nets.load_model``) and read its shape."""
    from harness.nets import load_model
    from harness.search.runtime import mark_frozen

    path = Path(path)
    model = load_model(path)
    mark_frozen(model, path)  # players never change weights: exported runtimes may run it
    shape = tuple(model.input_shape)
    if len(shape) != 4 or shape[1] != shape[2] or shape[1] is None:
        raise ValueError(f"{path}: expected square board inputs (N, B, B, C), got {shape}")
    return Network(model, path, int(shape[1]), int(shape[3]), _run_encoder(path))


def _run_encoder(path: Path) -> str:
    """The encoder recorded by the training run that wrote this checkpoint, if any."""
    config = path.parent / "config.json"
    if not config.is_file():
        return ""
    try:
        from harness.train.config import read_config

        return read_config(config).encoder or ""
    except Exception:  # a foreign or old config: fall back to the width
        return ""


def softmax_choice(policy: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """Greedy at temperature 0, else a draw from ``policy ** (1 / T)`` (renormalised)."""
    if temperature <= 0:
        return int(np.argmax(policy))
    logs = np.where(policy > 0, np.log(np.maximum(policy, 1e-30)) / temperature, -np.inf)
    weights = np.exp(logs - logs.max())
    return int(rng.choice(policy.size, p=weights / weights.sum()))
