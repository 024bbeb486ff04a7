"""Arrow arrays as numpy, read from their buffers: no pyarrow.compute, whose import is a fixed cost that a small
store's compare and history would otherwise pay in full (docs/dev/performance.md#small-store)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["filled_flags", "list_parts", "split_lists", "validity"]


def validity(array: pa.Array) -> np.ndarray:
    """Which entries of ``array`` are not NULL, from its validity bitmap (Arrow: bit i, least significant first,
    counted from the array's offset)."""
    if array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(array.buffers()[0], dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + len(array)].astype(bool)


def _as_lists(column: pa.ChunkedArray | pa.Array) -> pa.ListArray | pa.LargeListArray:
    """One list array (a column of no list type, e.g. all NULL, as a list of doubles)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if not isinstance(column, pa.ListArray | pa.LargeListArray):
        column = column.cast(pa.list_(pa.float64()))
    return column


def list_parts(column: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, np.ndarray]:
    """A list column as (the values of its lists one after another, as ``flatten()`` gives them; each list's length,
    a NULL list's 0)."""
    lists = _as_lists(column)
    offsets = np.asarray(lists.offsets, dtype=np.int64)  # into lists.values, the array's own offset counted
    lengths = np.diff(offsets) * validity(lists)
    if int(lengths.sum()) == int(offsets[-1] - offsets[0]):  # no NULL list holds values: one slice
        return lists.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0])), lengths
    kept = [(int(o), int(n)) for o, n in zip(offsets[:-1], lengths, strict=True) if n]
    return pa.concat_arrays([lists.values.slice(o, n) for o, n in kept] or [lists.values.slice(0, 0)]), lengths


def split_lists(column: pa.ChunkedArray | pa.Array) -> list[np.ndarray]:
    """A list column as one float array per row (a NULL list: empty)."""
    lists = _as_lists(column)
    values = lists.values.to_numpy(zero_copy_only=False).astype(float, copy=False)
    bounds = np.asarray(lists.offsets)  # indices into the child values
    valid = validity(lists)
    return [values[bounds[i] : bounds[i + 1]] if valid[i] else np.array([]) for i in range(len(lists))]


def filled_flags(values: pa.Array) -> np.ndarray:
    """A boolean array as numpy, NULL as False."""
    flags = values.to_numpy(zero_copy_only=False)
    if values.null_count:
        flags = np.where(validity(values), flags, False)
    return np.asarray(flags, dtype=bool)
