"""docs/FORMAT.md's tag tables and qdf_columnar/format/tags.py must say the same thing."""

from __future__ import annotations

import re
from pathlib import Path

from qdf_columnar.format import tags

DOC = Path(__file__).resolve().parents[1] / "docs" / "FORMAT.md"
ROW = re.compile(r"^\|\s*0x([0-9A-Fa-f]{2})\s*\|\s*(\w+)\.(\w+)\s*\|")


def _doc_rows() -> dict[tuple[str, str], int]:
    rows = {}
    for line in DOC.read_text().splitlines():
        m = ROW.match(line)
        if m:
            rows[(m.group(2), m.group(3))] = int(m.group(1), 16)
    return rows


def test_every_documented_tag_matches_the_constants() -> None:
    rows = _doc_rows()
    assert len(rows) > 60
    for (group, name), value in rows.items():
        assert int(getattr(getattr(tags, group), name)) == value, f"{group}.{name}"


def test_every_constant_is_documented() -> None:
    rows = _doc_rows()
    for group in ("Tag", "DenseTag", "QPackTag", "Kind", "ContainerTag", "ColKind", "StrColTag"):
        for member in getattr(tags, group):
            assert (group, member.name) in rows, f"{group}.{member.name} is missing from docs/FORMAT.md"
