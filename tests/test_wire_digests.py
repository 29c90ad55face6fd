"""The bytes we write do not change by accident.

``tests/golden/encoded-fixtures.json`` holds the sha256 of every bench fixture
(scale 1) encoded by ``encode(table, mode=)`` and ``dumps(root, mode=)`` in the speed,
balanced and compression modes, as written before the codecs became registered units.
A refactor must leave every digest as it is; a deliberate wire change updates the
file in the same commit, saying why (regenerate: ``python tests/test_wire_digests.py``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

import qdf_columnar as qdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `bench` lives at the repo root (run as a script)
from bench.fixtures import FIXTURES, get  # noqa: E402

GOLDEN = Path(__file__).with_name("golden") / "encoded-fixtures.json"
MODES = ("speed", "balanced", "compression")


def _digests(key: str) -> dict[str, str]:
    fx = get(key)
    out = {}
    for mode in MODES:
        out[f"{key}/{mode}"] = hashlib.sha256(qdf.encode(fx.table, mode=mode)).hexdigest()
        out[f"{key}/dumps-{mode}"] = hashlib.sha256(qdf.dumps(fx.root, mode=mode)).hexdigest()
    return out


def test_every_fixture_and_mode_is_pinned() -> None:
    pinned = json.loads(GOLDEN.read_text())
    assert set(pinned) == {f"{k}/{p}{m}" for k in FIXTURES for m in MODES for p in ("", "dumps-")}


@pytest.mark.parametrize("key", list(FIXTURES))
def test_encoded_bytes_match_the_pinned_digests(key: str) -> None:
    pinned = json.loads(GOLDEN.read_text())
    got = _digests(key)
    changed = [k for k, v in got.items() if pinned[k] != v]
    assert not changed, f"the wire output changed for {changed}"


if __name__ == "__main__":  # regenerate after a deliberate wire change
    all_digests = {k: v for key in FIXTURES for k, v in _digests(key).items()}
    GOLDEN.write_text(json.dumps(dict(sorted(all_digests.items())), indent=1) + "\n")
    print(f"wrote {len(all_digests)} digests to {GOLDEN}", file=sys.stderr)
