"""tasks/store/arrays.py against pyarrow.compute, the reference it avoids importing."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tcobench.tasks.store.arrays import filled_flags, list_parts, split_lists, validity

LISTS = pa.array([[1.0, 2.0], None, [], [3.0, None, 4.0], None, [5.0]], type=pa.list_(pa.float64()))


def _null_list_holding_values() -> pa.ListArray:
    """A NULL list whose offsets still span values (allowed by the Arrow format, unusual in practice)."""
    offsets = pa.array([0, 2, 3, 4], type=pa.int32())
    values = pa.array([1.0, 2.0, 9.0, 3.0])
    mask = pa.array([False, True, False])
    return pa.ListArray.from_arrays(offsets, values, mask=mask)


@pytest.mark.parametrize(
    "lists",
    [
        LISTS,
        LISTS.slice(1, 4),
        LISTS.slice(3),
        pa.chunked_array([LISTS.slice(0, 2), LISTS.slice(2)]),
        _null_list_holding_values(),
    ],
    ids=["whole", "sliced", "tail", "chunked", "null-with-values"],
)
def test_list_parts_are_flatten_and_the_lengths(lists: pa.Array | pa.ChunkedArray) -> None:
    whole = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    values, lengths = list_parts(lists)
    assert values.to_pylist() == whole.flatten().to_pylist()
    assert lengths.tolist() == pc.list_value_length(whole).fill_null(0).to_pylist()


def test_split_lists_gives_each_row_and_an_empty_array_for_null() -> None:
    got = [a.tolist() for a in split_lists(pa.chunked_array([LISTS.slice(1)]))]
    assert [[x if x == x else None for x in row] for row in got] == [[], [], [3.0, None, 4.0], [], [5.0]]


def test_validity_counts_from_the_arrays_offset() -> None:
    array = pa.array([1, None, 3, None, None, 6, 7, None, 9, None]).slice(3)
    assert validity(array).tolist() == pc.is_valid(array).to_pylist()


def test_filled_flags_turn_null_into_false() -> None:
    flags = pa.array([True, None, False, True, None]).slice(1)
    assert filled_flags(flags).tolist() == [False, False, True, False]
    assert filled_flags(pa.array([True, False])).dtype == np.bool_
