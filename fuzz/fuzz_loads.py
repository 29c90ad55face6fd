"""Fuzz ``qdf.loads``: the whole input is the buffer (row-major values, QPack payloads, columnar roots).

Run: ``python -m fuzz.fuzz_loads [libFuzzer flags] CORPUS_DIR [SEED_DIR]``.
"""

from __future__ import annotations

from fuzz.harness import fuzz, import_qdf

qdf = import_qdf()


def test_one_input(data: bytes) -> None:
    try:
        qdf.loads(data)
    except qdf.QdfError:
        return


if __name__ == "__main__":
    fuzz(test_one_input)
