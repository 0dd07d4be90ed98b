"""Model names in the papers' style (``a0.20.256``, ``mobile.conv.avg.bin.33.64.200``).

A name is ``FAMILY`` followed by dot-separated tokens: option words and the
family's size numbers, in any order (Cazenave writes ``a0.small.avg.conv.bin``
and ``mobile.conv.avg.bin.33.64.200``). Parsing gives a :class:`ModelSpec`; its
``name`` is the canonical spelling, which parses back to the same spec, so a
saved model's name is enough to rebuild it. This module imports no Keras: a
config can be validated without loading TensorFlow.

``docs/models.md`` is the user's table of the grammar; keep the two in step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# family -> the word that starts its names (the first is canonical).
FAMILY_WORDS: dict[str, tuple[str, ...]] = {
    "resnet": ("a0", "resnet"),
    "mobile": ("mobile", "mobilenet"),
    "mao": ("mao",),
    "garb": ("garb",),
    "resnet18": ("resnet18",),
    "qiqiao": ("qiqiao",),
    "nbt": ("nbt",),  # KataGo's style, b{blocks}c{channels}nbt, is its canonical spelling
    "transformer": ("transformer",),
}
_WORD_TO_FAMILY = {w: f for f, words in FAMILY_WORDS.items() for w in words}

# family -> meaning of its size numbers, in name order.
NUMBER_FIELDS: dict[str, tuple[str, ...]] = {
    "resnet": ("blocks", "width"),
    "mobile": ("blocks", "width", "expansion"),
    "mao": ("blocks", "width", "pieces"),
    "garb": ("blocks", "width"),
    "resnet18": ("width",),
    "qiqiao": ("conv1", "conv2", "conv3"),
    "nbt": ("blocks", "width"),
    "transformer": ("blocks", "width", "attention_heads"),
}
_NBT = re.compile(r"b(\d+)c(\d+)nbt")  # KataGo's name of a nested-bottleneck net
FORMS = (
    "a0.BLOCKS.FILTERS",
    "mobile.BLOCKS.TRUNK.EXPANSION",
    "mao.BLOCKS.WIDTH.PIECES",
    "garb.BLOCKS.CHANNELS",
    "resnet18.WIDTH",
    "qiqiao.C1.C2.C3",
    "bBLOCKScCHANNELSnbt",
    "transformer.BLOCKS.WIDTH.HEADS",
)
OPTIONS = (
    "conv", "avg", "az", "bin", "mse", "golois", "agz", "stem3", "stem1", "abs", "own", "noown",
    "score",
    "noscore", "reply", "soft", "valN", "dN", "sN", "paper", "small", "tiny",
)

# Every output a model can have. The auxiliary policies are KataGo's (Wu
# 2019, "Accelerating Self-Play Learning in Go", and its later soft-policy
# target): ``reply`` predicts the opponent's next move (the policy target of
# the position after this one), ``soft_policy`` the policy target raised to
# the power 1/4 and renormalised, which makes the trunk tell apart the moves
# the sharp target gives almost nothing. Both are B*B+1 logits like
# ``policy``; only training reads them.
HEADS = ("policy", "value", "ownership", "score", "reply", "soft_policy")
EXTRA_HEADS = HEADS[2:]  # policy and value are always built

POLICY_HEADS = ("az", "conv", "mao", "qiqiao")
VALUE_HEADS = ("az", "avg", "mao", "qiqiao")

# Each family's heads and value convention as its paper has them.
_DEFAULT_HEADS: dict[str, tuple[str, str]] = {
    "resnet": ("az", "az"),
    "mobile": ("az", "avg"),  # Cazenave uses the pooled value head for every MobileNet
    "mao": ("mao", "mao"),
    "garb": ("az", "az"),
    "resnet18": ("az", "az"),
    "qiqiao": ("qiqiao", "qiqiao"),
    "nbt": ("az", "az"),
    # Per-point tokens: per-token policy logits and a pooled value are natural.
    "transformer": ("conv", "avg"),
}
_DEFAULT_VALUE_LOSS = {"garb": "bce"}  # NoGoZero+ trains a win/loss cross-entropy
_DEFAULT_AUX = {"garb": (True, True)}  # NoGoZero+ multitask: dominion and score heads
DEFAULT_MAO_DROPOUT = 0.25

# Sizes behind the words ``small`` and ``tiny`` and the bare family name.
# Cazenave's small networks (section V.A) change size with the heads, to stay
# just under a million parameters: keyed by (policy head, value head).
_SIZES: dict[tuple[str, str], dict[object, tuple[int, ...]]] = {
    ("resnet", "small"): {("az", "az"): (8, 66), ("az", "avg"): (10, 63),
                          ("conv", "avg"): (13, 64), None: (8, 66)},
    ("resnet", "tiny"): {None: (2, 16)},
    ("mobile", "small"): {("az", "avg"): (25, 64, 200), ("conv", "avg"): (33, 64, 200),
                          None: (25, 64, 200)},
    ("mobile", "tiny"): {None: (2, 16, 48)},
    ("mao", ""): {None: (2, 40, 4)},
    ("mao", "small"): {None: (1, 24, 4)},
    ("mao", "tiny"): {None: (1, 12, 2)},
    ("garb", "small"): {None: (4, 24)},
    ("garb", "tiny"): {None: (2, 12)},
    ("resnet18", ""): {None: (64,)},
    ("resnet18", "small"): {None: (16,)},
    ("resnet18", "tiny"): {None: (8,)},
    ("qiqiao", ""): {None: (32, 64, 128)},
    ("qiqiao", "small"): {None: (16, 32, 64)},
    ("qiqiao", "tiny"): {None: (8, 16, 32)},
    ("nbt", "small"): {None: (4, 64)},
    ("nbt", "tiny"): {None: (2, 16)},
    ("transformer", "small"): {None: (4, 64, 4)},
    ("transformer", "tiny"): {None: (2, 16, 2)},
}


@dataclass(frozen=True)
class ModelSpec:
    """Everything that decides a model's architecture (and its value convention).

    Sizes: ``blocks`` residual/MAO blocks; ``width`` the trunk width (filters,
    MobileNet trunk, MAO block width, GARB channels, ResNet18 base width);
    ``expansion`` MobileNet's inner width; ``pieces`` convolutions per MAO unit;
    ``conv_widths`` Qiqiao's three convolutions.
    """

    family: str
    blocks: int = 0
    width: int = 0
    expansion: int = 0
    pieces: int = 0
    conv_widths: tuple[int, ...] = ()
    attention_heads: int = 0  # a transformer's heads per attention layer
    policy_head: str = "az"
    value_head: str = "az"
    value_loss: str = "mse"  # "mse": tanh in [-1, 1]; "bce": sigmoid in [0, 1]
    golois: bool = False  # Golois residual block (a0 only)
    stem3: bool = False  # 3x3 input convolution (a0 only; Cazenave uses 1x1)
    # A transformer's tokens: a linear embedding of each point's planes
    # instead of a 3x3 convolution (stem1), and learned absolute positions
    # alone instead of a relative bias in every attention layer (abs). Both
    # together are the plain design, which did not learn on a CPU budget.
    stem1: bool = False
    absolute_positions: bool = False
    ownership: bool = False
    score: bool = False
    reply: bool = False
    soft_policy: bool = False
    dropout: float = 0.0  # MAO channel-selector drop rate
    # MAO value piece as the paper writes it (channel selectors in its MAO
    # layers, plain mlpconv). Without ``paper``: no selectors there and batch
    # norm before each mlpconv ReLU; the paper's collapses to a constant
    # value at lr 0.006 (docs/results.md).
    paper_value: bool = False
    score_scale: float | None = None  # None: board points (B*B)
    value_weight: float = 1.0  # Cazenave's "valN": a training hint, not architecture

    @property
    def heads(self) -> tuple[str, ...]:
        return tuple(h for h in HEADS if h in ("policy", "value") or getattr(self, h))

    @property
    def name(self) -> str:
        return canonical_name(self)


def parse_model_name(name: str) -> ModelSpec:
    """Parse a model name; raise ``ValueError`` (one line) naming what is wrong."""
    if not isinstance(name, str) or not name.strip():
        _fail(name, "empty model name")
    tokens = name.strip().lower().split(".")
    if any(not t for t in tokens):
        _fail(name, "empty token (two dots in a row, or a dot at an end)")
    family = _WORD_TO_FAMILY.get(tokens[0])
    numbers: list[int] = []
    nbt = _NBT.fullmatch(tokens[0])
    if nbt:
        family, numbers = "nbt", [int(nbt.group(1)), int(nbt.group(2))]
    if family is None:
        _fail(name, f"unknown family {tokens[0]!r}")
    words: dict[str, str] = {}
    for token in tokens[1:]:
        if token.isdigit():
            numbers.append(int(token))
            continue
        key = _option_slot(name, token)
        if key in words:
            _fail(name, f"option {token!r} conflicts with {words[key]!r}")
        words[key] = token
    return _build_spec(name, family, numbers, words)


def _option_slot(name: str, token: str) -> str:
    """The slot an option word fills (two words for one slot conflict)."""
    simple = {
        "conv": "policy", "avg": "value", "az": "az", "bin": "loss", "mse": "loss",
        "golois": "block", "agz": "block", "stem3": "stem", "stem1": "stem", "abs": "position",
        "own": "own", "noown": "own",
        "score": "score", "noscore": "score", "small": "size", "tiny": "size",
        "paper": "paper", "reply": "reply", "soft": "soft",
    }
    if token in simple:
        return simple[token]
    match = re.fullmatch(r"(val|d|s)(\d+)", token)
    if match:
        return {"val": "valN", "d": "dN", "s": "sN"}[match.group(1)]
    _fail(name, f"unknown option {token!r}")
    raise AssertionError  # unreachable


def _build_spec(name: str, family: str, numbers: list[int], words: dict[str, str]) -> ModelSpec:
    policy, value = _DEFAULT_HEADS[family]
    if "az" in words:
        policy, value = "az", "az"
    if "policy" in words:
        policy = "conv"
    if "value" in words:
        value = "avg"
    value_loss = _DEFAULT_VALUE_LOSS.get(family, "mse")
    if "loss" in words:
        value_loss = "bce" if words["loss"] == "bin" else "mse"
    own, score = _DEFAULT_AUX.get(family, (False, False))
    if "own" in words:
        own = words["own"] == "own"
    if "score" in words:
        score = words["score"] == "score"

    size = words.get("size", "")
    if numbers and size:
        _fail(name, f"give either {size!r} or size numbers, not both")
    fields = NUMBER_FIELDS[family]
    if not numbers:
        table = _SIZES.get((family, size))
        if table is None:
            what = f"no {size!r} size" if size else "size numbers missing"
            _fail(name, f"{what} for {_word(family)} (form {_form(family)})")
        numbers = list(table.get((policy, value), table[None]))
    if len(numbers) != len(fields):
        _fail(name, f"{_word(family)} takes {len(fields)} size numbers ({_form(family)}), "
                    f"got {len(numbers)}")
    sizes = dict(zip(fields, numbers, strict=True))
    if min(numbers) <= 0 or max(numbers) > 4096 or sizes.get("blocks", 0) > 400:
        _fail(name, "size numbers must be from 1 to 4096 (blocks at most 400)")
    stem_family = "transformer" if words.get("stem") == "stem1" else "resnet"
    for key, fam in (("block", "resnet"), ("stem", stem_family), ("dN", "mao"), ("paper", "mao"),
                     ("position", "transformer")):
        if key in words and family != fam:
            _fail(name, f"option {words[key]!r} applies to {_word(fam)} models only")
    # Cazenave: the fully convolutional head needs the Golois block to train.
    golois = policy == "conv" if family == "resnet" else False
    if "block" in words:
        golois = words["block"] == "golois"
    if family == "garb" and numbers[1] < 3:
        _fail(name, "garb needs at least 3 channels (X and G take 2C/3 and C/3)")
    if family == "nbt" and numbers[1] < 6:
        _fail(name, "nbt needs at least 6 channels (inner blocks at C/2, a third of it pooled)")
    if family == "transformer" and numbers[1] % numbers[2]:
        _fail(name, f"transformer width {numbers[1]} must divide into {numbers[2]} heads")

    dropout = DEFAULT_MAO_DROPOUT if family == "mao" else 0.0
    if "dN" in words:
        dropout = int(words["dN"][1:]) / 100
        if not 0 <= dropout < 1:
            _fail(name, "MAO drop rate dN is a percentage from 0 to 99")
    paper_value = "paper" in words
    if paper_value and value != "mao":
        _fail(name, "option 'paper' (the paper's MAO value piece) needs the MAO value head "
                    "(drop 'avg' / 'az')")
    score_scale = None
    if "sN" in words:
        score_scale = float(words["sN"][1:])
        if score_scale <= 0:
            _fail(name, "score scale sN must be positive")
    value_weight = float(words["valN"][3:]) if "valN" in words else 1.0

    conv_widths = tuple(numbers) if family == "qiqiao" else ()
    return ModelSpec(
        family=family,
        blocks=sizes.get("blocks", 0),
        width=sizes.get("width", 0),
        expansion=sizes.get("expansion", 0),
        pieces=sizes.get("pieces", 0),
        conv_widths=conv_widths,
        attention_heads=sizes.get("attention_heads", 0),
        policy_head=policy,
        value_head=value,
        value_loss=value_loss,
        golois=golois,
        stem3=words.get("stem") == "stem3",
        stem1=words.get("stem") == "stem1",
        absolute_positions="position" in words,
        ownership=own,
        score=score,
        reply="reply" in words,
        soft_policy="soft" in words,
        dropout=dropout,
        paper_value=paper_value,
        score_scale=score_scale,
        value_weight=value_weight,
    )


def canonical_name(spec: ModelSpec) -> str:
    """The shortest paper-style name that parses back to ``spec``.

    ``conv``, ``avg`` and ``bin`` are written whenever they hold (as Cazenave
    does), so the value convention can be read off any canonical name: ``bin``
    means a sigmoid value trained with binary cross-entropy, otherwise tanh/MSE.
    """
    family = spec.family
    default_policy, default_value = _DEFAULT_HEADS[family]
    tokens: list[str] = [FAMILY_WORDS[family][0]]
    base = (default_policy, default_value)
    if not (spec.policy_head in (default_policy, "conv") and
            spec.value_head in (default_value, "avg")):
        # "az" resets both heads to AlphaZero; conv/avg then override one.
        tokens.append("az")
        base = ("az", "az")
    if spec.policy_head != base[0] and spec.policy_head != "conv":
        raise ValueError(f"policy head {spec.policy_head!r} cannot be named for {family}")
    if spec.value_head != base[1] and spec.value_head != "avg":
        raise ValueError(f"value head {spec.value_head!r} cannot be named for {family}")
    if spec.policy_head == "conv":
        tokens.append("conv")
    if spec.value_head == "avg":
        tokens.append("avg")
    if spec.value_loss == "bce":
        tokens.append("bin")
    elif _DEFAULT_VALUE_LOSS.get(family, "mse") == "bce":
        tokens.append("mse")
    if family == "resnet" and spec.golois != (spec.policy_head == "conv"):
        tokens.append("golois" if spec.golois else "agz")
    if spec.stem3:
        tokens.append("stem3")
    if spec.stem1:
        tokens.append("stem1")
    if spec.absolute_positions:
        tokens.append("abs")
    default_own, default_score = _DEFAULT_AUX.get(family, (False, False))
    if spec.ownership != default_own:
        tokens.append("own" if spec.ownership else "noown")
    if spec.score != default_score:
        tokens.append("score" if spec.score else "noscore")
    if spec.reply:
        tokens.append("reply")
    if spec.soft_policy:
        tokens.append("soft")
    if family == "mao" and spec.dropout != DEFAULT_MAO_DROPOUT:
        tokens.append(f"d{round(spec.dropout * 100)}")
    if spec.paper_value:
        if family != "mao" or spec.value_head != "mao":
            raise ValueError("the paper's value piece (paper) exists for the MAO value head only")
        tokens.append("paper")
    if spec.score_scale is not None:
        tokens.append(f"s{spec.score_scale:g}")
    if spec.value_weight != 1.0:
        tokens.append(f"val{spec.value_weight:g}")
    if family == "qiqiao":
        numbers = spec.conv_widths
    else:
        numbers = tuple(getattr(spec, f) for f in NUMBER_FIELDS[family])
    if family == "nbt":
        tokens[0] = f"b{spec.blocks}c{spec.width}nbt"
        return ".".join(tokens)
    tokens.extend(str(n) for n in numbers)
    return ".".join(tokens)


def with_overrides(spec: ModelSpec, *, heads=None, value_loss: str | None = None) -> ModelSpec:
    """``spec`` with a different set of output heads and/or value convention."""
    if heads is not None:
        heads = tuple(heads)
        unknown = sorted(set(heads) - set(HEADS))
        if unknown:
            raise ValueError(f"unknown heads {unknown} (choose from {', '.join(HEADS)}; policy "
                             f"and value are always built)")
        spec = replace(spec, **{h: h in heads for h in EXTRA_HEADS})
    if value_loss is not None:
        if value_loss not in ("mse", "bce"):
            raise ValueError(f"unknown value loss {value_loss!r} (choose mse for tanh or bce "
                             f"for sigmoid)")
        spec = replace(spec, value_loss=value_loss)
    return spec


def _word(family: str) -> str:
    return FAMILY_WORDS[family][0]


def _form(family: str) -> str:
    return FORMS[list(FAMILY_WORDS).index(family)]


def _fail(name: object, problem: str) -> None:
    raise ValueError(
        f"bad model name {name!r}: {problem}; accepted forms: {', '.join(FORMS)}, with options "
        f"{' '.join(OPTIONS)}; presets in `harness models` (see docs/models.md); a network "
        f"of your own: MODULE:FUNCTION or a plugin's name (docs/plugins.md)"
    )
