"""What an ingest keeps and how it splits it, declared once.

``harness ingest`` builds its flags from these fields and a suite's
``[data]`` section inherits :class:`IngestSettings`, so the two cannot
disagree on a default. Light on imports: every command's parser is built at
start-up.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from pathlib import Path

from harness.config_io import setting
from harness.distributed import BackendSettings
from harness.sgf.sources import DEFAULT_MAX_MEMBER_BYTES

NO_RESULT_CHOICES = ("policy-only", "skip")
REPLAY_RULES = ("superko", "simple-ko")


# Spellings of RU[] seen in archives -> one name per rule set.
_RULE_ALIASES = {
    "chinese": "chinese",
    "cn": "chinese",
    "china": "chinese",
    "japanese": "japanese",
    "jp": "japanese",
    "japan": "japanese",
    "korean": "korean",
    "kr": "korean",
    "aga": "aga",
    "nz": "nz",
    "new zealand": "nz",
    "tromp-taylor": "tromp-taylor",
    "tromp taylor": "tromp-taylor",
    "tt": "tromp-taylor",
    "ing": "ing",
    "goe": "ing",
}


def normalise_rules(text: str | None) -> str:
    """A rule-set name for filtering: ``chinese``, ``japanese``, ... or ``unknown``."""
    if text is None or not text.strip():
        return "unknown"
    low = " ".join(text.strip().lower().split())
    if low in _RULE_ALIASES:
        return _RULE_ALIASES[low]
    if "scorearea" in low.replace(" ", ""):  # KataGo rule strings
        return "area"
    if "scoreterritory" in low.replace(" ", ""):
        return "territory"
    return low


def split_size(text: str) -> int | float:
    """A flag's count of games (``500``) or fraction of them (``0.05``)."""
    from harness.data.splits import parse_split_size

    try:
        return parse_split_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def byte_count(text: str) -> int:
    """``512M``, ``1G``, ``4096``: a size in bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r} (e.g. 512M)") from None


def parse_rules(text: str) -> tuple[str, ...]:
    """``"any"`` -> no filter; ``"chinese,japanese"`` -> those rule sets."""
    names = tuple(normalise_rules(t) for t in text.split(",") if t.strip())
    return () if "any" in names else names


@dataclass(frozen=True)
class IngestSettings:
    """Which games are kept and how they are split: shared by ``harness ingest``
    and a suite's ``[data]`` section."""

    encoder: str = setting("cazenave21", "default encoder recorded in the file")
    min_moves: int = setting(1, "shorter games are rejected")
    val_games: int | float = setting(0.05, "validation games: a count or a fraction",
                                     parse=split_size)
    test_games: int | float = setting(0.0, "test games: a count or a fraction",
                                      parse=split_size)
    test_sources: tuple[str, ...] = setting(
        (), "games whose source matches (a glob found anywhere in it, e.g. 2011-06) are the "
        "test split; repeatable", flag="--test-source", metavar="PATTERN", repeatable=True)
    workers: int = setting(0, "replay processes (0: all cores)")

    def __post_init__(self) -> None:
        for name in ("val_games", "test_games"):
            size = getattr(self, name)
            if size < 0 or (isinstance(size, float) and size >= 1):
                raise ValueError(f"{name} must be a count of games or a fraction below 1, "
                                 f"got {size!r}")
        getattr(super(), "__post_init__", lambda: None)()  # the next settings base, if any


@dataclass(frozen=True)
class ConvertSettings(IngestSettings):
    """Which records an ingest keeps and how it replays them: what
    :func:`harness.data.convert.convert_record` reads (an ingest worker gets
    :attr:`IngestConfig.convert_settings`, this part of its config)."""

    # The archives' size, not the size games are played on (GameSettings):
    # the public collections are 19x19.
    board_size: int = setting(19, "board size of the games kept; other sizes are rejected")
    rules: tuple[str, ...] = setting(
        (), "accepted rule sets, comma-separated (chinese,japanese,unknown,...) or 'any'",
        parse=parse_rules, metavar="RULES")
    replay_rules: str = setting("superko", "ko rule the moves are checked with",
                                choices=REPLAY_RULES)
    no_result: str = setting(
        "policy-only", "games without a result: keep with the value masked, or reject",
        choices=NO_RESULT_CHOICES)


@dataclass(frozen=True, kw_only=True)
class IngestConfig(ConvertSettings, BackendSettings):
    """An ingest; ``backend = "ray"`` converts the shards on Ray (harness.distributed.shards)."""

    sources: list[str] = setting(cli=False)
    output: Path = setting(cli=False)
    cazenave_val: bool = setting(False, "validation = one random position per validation game")
    seed: int = setting(0, "split seed")
    resume: bool = setting(False, "continue an interrupted ingest of the same output")
    overwrite: bool = setting(False, "replace an existing output")
    max_member_bytes: int = setting(
        DEFAULT_MAX_MEMBER_BYTES, "reject archive members / files that decompress beyond this "
        "(e.g. 512M)", parse=byte_count, metavar="BYTES")
    commit_games: int = setting(5000, "commit a shard after this many records (or "
                                "commit_positions positions)")
    commit_positions: int = setting(200_000, cli=False)
    progress: bool = setting(True, cli=False)  # the command's --quiet
    limit: int | None = setting(None, "read only the first N games")
    stop_after_records: int | None = setting(None, cli=False)  # testing aid: stop uncommitted

    @property
    def convert_settings(self) -> ConvertSettings:
        """The part of this config a worker converts records with."""
        return ConvertSettings(**{f.name: getattr(self, f.name) for f in fields(ConvertSettings)})
