"""go-harness: which network architecture learns Go best per unit of compute."""

import hashlib
import os
from pathlib import Path

__version__ = "0.1.0"


def _numba_cache_dir() -> None:
    """Key numba's on-disk cache on the package source.

    numba's ``cache=True`` checks only the file that holds a function, so a
    change to a kernel in ``harness/game`` would leave compiled callers in
    other files running the old code. One cache folder per source hash makes
    every change to compiled code start clean.
    """
    if "NUMBA_CACHE_DIR" in os.environ:
        return
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        source = path.read_bytes()
        if b"numba" in source:  # only compiled code decides what the cache holds
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(source)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    os.environ["NUMBA_CACHE_DIR"] = str(base / "go-harness" / "numba" / digest.hexdigest()[:16])


_numba_cache_dir()


def register_model(name: str):
    """Decorator for a plugin's network factory: ``name`` then works wherever a
    zoo name does (see :mod:`harness.nets.plugins`, docs/plugins.md)."""
    from harness.nets.plugins import register_model as register

    return register(name)
