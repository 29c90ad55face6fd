"""The dictionary expansion kernels (kernels/strings.py) against a numpy reference.

Entries of every width class (one word, the fixed-width copy of 2-4 words, wider),
codes packed at every width including 0 bits, from codes or straight from the packed
body, and the status codes for a code outside the table and a short body.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from qdf_kernels import bitpack
from qdf_kernels import strings as sk
from qdf_kernels._status import ERR_CORRUPT, ERR_TRUNCATED


def _table(entries: list[bytes]) -> tuple[np.ndarray, np.ndarray, int]:
    """(words, lens, words per entry) as strcol_arrow.expand_entries builds them."""
    lens = np.array([len(e) for e in entries], dtype=np.int64)
    words = max(1, (int(lens.max(initial=0)) + 7) >> 3)
    table = np.zeros(len(entries) * words, dtype=np.uint64)
    raw = table.view(np.uint8)
    for k, e in enumerate(entries):
        raw[k * words * 8:k * words * 8 + len(e)] = np.frombuffer(e, np.uint8)
    return table, lens, words


def _pack(codes: np.ndarray, bits: int) -> np.ndarray:
    out = np.zeros((len(codes) * bits + 7) // 8, dtype=np.uint8)
    bitpack.pack_for(codes.astype(np.uint64), np.uint64(0), np.int64(bits), out)
    return np.frombuffer(out.tobytes(), dtype=np.uint8)  # read-only, as a body inside the input


@settings(max_examples=150, deadline=None)
@given(d=st.integers(1, 40), n=st.integers(0, 400), max_len=st.sampled_from([0, 3, 8, 9, 16, 31, 32, 33, 80]),
       extra_bits=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_gathers_equal_the_reference(d: int, n: int, max_len: int, extra_bits: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    entries = [bytes(rng.integers(0, 256, rng.integers(0, max_len + 1), dtype=np.uint8)) for _ in range(d)]
    codes = rng.integers(0, d, n).astype(np.uint64)
    want_off = np.concatenate([[0], np.cumsum([len(entries[c]) for c in codes])]).astype(np.int64)
    want = b"".join(entries[c] for c in codes)
    table, lens, words = _table(entries)
    bits = (int(d - 1).bit_length() + extra_bits) if d > 1 or extra_bits else 0
    body = _pack(codes, bits)
    assert sk.dict_total_len_packed(lens, body, np.int64(bits), np.int64(n)) == len(want)
    assert sk.dict_total_len(lens, codes) == len(want)
    for odt in (np.int32, np.int64):
        for packed in (True, False):
            off = np.empty(n + 1, odt)
            data = np.empty(len(want) + sk.gather_slack(words), np.uint8)
            if packed:
                total = sk.dict_gather_packed_into(table, np.int64(words), lens, body, np.int64(bits), off, data)
            else:
                total = sk.dict_gather_into(table, np.int64(words), lens, codes, off, data)
            assert total == len(want)
            assert np.array_equal(off, want_off) and data[:total].tobytes() == want


def test_a_code_outside_the_table_and_a_short_body_are_statuses() -> None:
    lens = np.array([1, 2, 3], dtype=np.int64)
    body = _pack(np.array([0, 1, 3, 2]), 2)  # code 3 of a 3-entry table
    assert sk.dict_total_len_packed(lens, body, np.int64(2), np.int64(4)) == ERR_CORRUPT
    assert sk.dict_total_len_packed(lens, body, np.int64(2), np.int64(5)) == ERR_TRUNCATED
    assert sk.dict_total_len_packed(np.zeros(0, np.int64), body[:0], np.int64(0), np.int64(3)) == ERR_CORRUPT
    assert sk.dict_total_len_packed(lens, body[:0], np.int64(0), np.int64(3)) == 3  # zero bits: code 0


@settings(max_examples=80, deadline=None)
@given(n=st.integers(0, 200), d=st.integers(1, 20), p=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2**32 - 1))
def test_dictionary_spread_equals_scatter_then_take(n: int, d: int, p: float, seed: int) -> None:
    from qdf_kernels import columns as ck

    rng = np.random.default_rng(seed)
    valid = rng.random(n) >= p
    codes = rng.integers(0, d, int(valid.sum())).astype(np.uint64)
    table = np.frombuffer(rng.integers(1, 2**63, d).astype(np.uint64).tobytes(), np.uint64)
    mask = np.packbits(valid, bitorder="little")
    out = np.empty(n, np.uint64)
    assert ck.dictionary_spread_into(codes, mask, table, out, np.uint64(9)) == len(codes)
    want = np.full(n, 9, np.uint64)
    want[valid] = table[codes]
    assert np.array_equal(out, want)
    if len(codes):
        bad = codes.copy()
        bad[-1] = d  # outside the table
        assert ck.dictionary_spread_into(bad, mask, table, out, np.uint64(0)) == ERR_CORRUPT
        # more rows than codes
        assert ck.dictionary_spread_into(codes[:-1], mask, table, out, np.uint64(0)) == ERR_CORRUPT
