"""Column tables in HDF5 groups: one dataset per column, all the same length.

One dataset per column (rather than a compound dataset) lets readers load
only the columns they need and lets optional columns come and go without a
format change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import h5py
import numpy as np

from harness.data.layout import STRING, Column, numpy_dtype

_STRING_DTYPE = h5py.string_dtype("utf-8")


def clean_text(value: object) -> str:
    """A string HDF5 can store: lone surrogates from undecodable bytes are replaced."""
    text = "" if value is None else str(value)
    return text.encode("utf-8", "replace").decode("utf-8")


def column_array(column: Column, values: Sequence | np.ndarray) -> np.ndarray:
    if column.dtype == STRING:
        return np.array([clean_text(v) for v in values], dtype=object)
    return np.asarray(values, dtype=numpy_dtype(column))


def create_columns(
    group: h5py.Group,
    columns: Iterable[Column],
    length: int,
    points: int = 0,
    chunk: int = 1024,
    compression: dict | None = None,
) -> None:
    """Empty fixed-length columns, to be filled slice by slice."""
    for column in columns:
        shape = (length, points) if column.per_point else (length,)
        dtype = _STRING_DTYPE if column.dtype == STRING else numpy_dtype(column)
        kwargs: dict = {}
        if length > 0:
            rows = max(1, min(chunk, length))
            kwargs["chunks"] = (rows, points) if column.per_point else (rows,)
            kwargs.update(compression or {})
        group.create_dataset(column.name, shape=shape, dtype=dtype, **kwargs)


def write_columns(
    group: h5py.Group,
    columns: Iterable[Column],
    data: dict[str, np.ndarray],
    points: int = 0,
    chunk: int = 1024,
    compression: dict | None = None,
) -> None:
    """Columns written in one go from arrays (missing optional columns skipped)."""
    for column in columns:
        if column.name not in data:
            continue
        values = data[column.name]
        if column.dtype == STRING:
            values = column_array(column, values)
            dtype = _STRING_DTYPE
        else:
            values = np.asarray(values, numpy_dtype(column))
            dtype = values.dtype
        length = len(values)
        kwargs: dict = {}
        if length > 0:
            rows = max(1, min(chunk, length))
            kwargs["chunks"] = (rows, points) if column.per_point else (rows,)
            kwargs.update(compression or {})
        group.create_dataset(column.name, data=values, dtype=dtype, **kwargs)


def read_columns(group: h5py.Group, names: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """Whole columns as numpy arrays (strings decoded to ``str``)."""
    out = {}
    for name in names if names is not None else group.keys():
        if name not in group:
            continue
        dataset = group[name]
        if h5py.check_string_dtype(dataset.dtype) is not None:
            out[name] = np.array(dataset.asstr()[...], dtype=object)
        else:
            out[name] = dataset[...]
    return out
