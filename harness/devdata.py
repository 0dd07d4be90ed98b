"""Where the development games live: ``$HARNESS_DEV_DATA`` or ``../shared/data`` beside the repo.

Benchmarks and tests read real games from there when it exists and fall
back (or skip, saying why) when it does not; nothing else depends on it.
"""

from __future__ import annotations

import os
from pathlib import Path


def dev_data_dir() -> Path:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    return Path(os.environ.get("HARNESS_DEV_DATA", default))


def dev_sgf_dir() -> Path:
    return dev_data_dir() / "dev-sgf"


def dev_archive() -> Path:
    """The whole development set as one concatenated xz archive."""
    return dev_data_dir() / "archives" / "dev-all.sgf.xz"
