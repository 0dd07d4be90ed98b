"""Datasets: SGF archives -> HDF5 positions files -> training batches.

- :mod:`harness.data.ingest` — ``harness ingest`` (workers, dedupe, journal, report)
- :mod:`harness.data.layout` — the file format in one place
- :mod:`harness.data.dataset` — reading a file (``open_dataset``)
- :mod:`harness.data.pipeline` — the Keras input stream (``BatchStream``)
- :mod:`harness.data.writer` — writing games held in memory (self-play)

Names are loaded on first use so that ``import harness.data`` stays cheap.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "DatasetError": "harness.data.layout",
    "open_dataset": "harness.data.dataset",
    "PositionDataset": "harness.data.dataset",
    "BatchStream": "harness.data.pipeline",
    "PipelineConfig": "harness.data.pipeline",
    "open_stream": "harness.data.pipeline",
    "IngestConfig": "harness.data.ingest",
    "IngestError": "harness.data.ingest",
    "DatasetAttributes": "harness.data.assemble",
    "GameInfo": "harness.data.rows",
    "GamePositions": "harness.data.rows",
    "write_games": "harness.data.writer",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'harness.data' has no attribute {name!r}")
