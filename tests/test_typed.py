"""Typed decoding (qdf_columnar.wire.typed.convert): dataclasses, msgspec Structs, errors.

The annotations in this module are strings (``from __future__ import annotations``)
on purpose: the converter must resolve them with ``typing.get_type_hints``.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, NamedTuple, Optional

import msgspec
import numpy as np
import pytest

import qdf_columnar as qdf
from qdf_columnar.errors import DecodeError
from qdf_columnar.wire import typed
from qdf_columnar.wire.typed import convert

MODES = ["speed", "balanced", "compression"]
UTC = timezone.utc


# ------------------------------------------------------------------------------ types


@dataclass
class Power:
    name: str
    level: int


@dataclass
class Hero:
    name: str
    age: int
    powers: list[Power]
    born: datetime
    avatar: bytes
    stats: dict[str, float]
    nickname: Optional[str] = None  # noqa: UP045 - typing.Optional must work too
    sidekick: Power | None = None
    coords: tuple[float, float] = (0.0, 0.0)
    extra: Any = None
    active: bool = True
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Frozen:
    a: int
    b: tuple[int, ...] = ()


@dataclass
class Node:
    value: int
    children: list[Node] = field(default_factory=list)


@dataclass
class WithLate:
    a: int
    doubled: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.doubled = self.a * 2


@dataclass
class Validated:
    n: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must be >= 0")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(NamedTuple):
    x: int
    y: int = 0


class PowerS(msgspec.Struct):
    name: str
    level: int


class HeroS(msgspec.Struct):
    name: str
    powers: list[PowerS]
    born: datetime
    avatar: bytes
    home: PowerS | None = None
    scores: dict[str, int] = {}
    ratio: float = 1.0


class Camel(msgspec.Struct, rename="camel"):
    first_name: str
    last_seen: int = 0


class Pair(msgspec.Struct, array_like=True):
    left: int
    right: str = ""


class Tagged(msgspec.Struct, tag=True):
    x: int


def _hero() -> Hero:
    return Hero(
        name="Ada",
        age=36,
        powers=[Power("math", 9), Power("engines", 7), Power("poetry", 3)],
        born=datetime(1815, 12, 10, 8, 30, tzinfo=UTC),
        avatar=b"\x00\x01\xffpng",
        stats={"speed": 1.5, "wit": -0.0, "luck": float("inf")},
        nickname="Countess",
        sidekick=Power("babbage", 8),
        coords=(51.5, -0.12),
        extra={"any": [1, "two", None]},
        tags=["analyst", "first"],
    )


def _hero_s() -> HeroS:
    return HeroS(
        name="Grace",
        powers=[PowerS("cobol", 10), PowerS("debugging", 9)],
        born=datetime(1906, 12, 9, tzinfo=UTC),
        avatar=b"\x10\x20",
        home=PowerS("navy", 5),
        scores={"a": 1, "b": -2},
    )


def _plain(obj: Any) -> Any:
    """A dataclass / Struct / NamedTuple as the plain dict-and-list value the encoder produces."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, msgspec.Struct):
        return {f.encode_name: _plain(getattr(obj, f.name)) for f in msgspec.structs.fields(obj)}
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _dumps(obj: Any, mode: str) -> bytes:
    # qdf.dumps(dataclass / Struct) is the lead's part (values_write.py); the plain form
    # is what it writes (fields as a map in declaration order), so tests go through it.
    return qdf.dumps(_plain(obj), mode=mode)


# ------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("mode", MODES)
def test_dataclass_round_trip(mode: str) -> None:
    hero = _hero()
    assert convert(qdf.loads(_dumps(hero, mode)), Hero) == hero


@pytest.mark.parametrize("mode", MODES)
def test_struct_round_trip(mode: str) -> None:
    hero = _hero_s()
    assert convert(qdf.loads(_dumps(hero, mode)), HeroS) == hero


@pytest.mark.parametrize("obj", [_hero(), _hero_s()], ids=["dataclass", "struct"])
def test_direct_dumps_of_instances(obj: Any) -> None:
    try:
        buf = qdf.dumps(obj, mode="balanced")
    except qdf.UnsupportedTypeError:
        pytest.skip("qdf.dumps of dataclass / Struct instances is not implemented yet")
    assert convert(qdf.loads(buf), type(obj)) == obj


@pytest.mark.parametrize("mode", MODES)
def test_top_level_list_of_dataclasses_from_columnar_batch(mode: str) -> None:
    powers = [Power(f"power-{i % 5}", i) for i in range(40)]  # >= 16 same-keyed maps: columnar
    got = convert(qdf.loads(_dumps(powers, mode)), list[Power])
    assert got == powers
    structs = [PowerS(p.name, p.level) for p in powers]
    assert convert(qdf.loads(_dumps(structs, mode)), list[PowerS]) == structs


def test_defaults_fill_missing_optional_fields() -> None:
    got = convert(
        {"name": "x", "age": 1, "powers": [], "born": datetime(2000, 1, 1, tzinfo=UTC), "avatar": b"", "stats": {}},
        Hero,
    )
    assert got.nickname is None and got.coords == (0.0, 0.0) and got.tags == [] and got.active is True
    s = convert({"name": "g", "powers": [], "born": datetime(2000, 1, 1, tzinfo=UTC), "avatar": b""}, HeroS)
    assert s.scores == {} and s.ratio == 1.0 and s.home is None


def test_recursive_and_frozen_and_late_fields() -> None:
    tree = Node(1, [Node(2), Node(3, [Node(4)])])
    assert convert(qdf.loads(_dumps(tree, "balanced")), Node) == tree
    assert convert({"a": 1, "b": [2, 3]}, Frozen) == Frozen(1, (2, 3))
    late = convert({"a": 4, "doubled": 8}, WithLate)
    assert late.a == 4 and late.doubled == 8


def test_scalars_and_containers() -> None:
    assert convert(3, float) == 3.0 and type(convert(3, float)) is float
    assert convert(np.float32(1.5), float) == 1.5
    assert convert(np.int64(7), int) == 7 and type(convert(np.int64(7), int)) is int
    assert convert(np.array([1, 2, 3]), list[int]) == [1, 2, 3]
    assert convert(np.array([True, False]), list[bool]) == [True, False]
    assert convert([1, 2, 2], set[int]) == {1, 2}
    assert convert([1, 2], frozenset[int]) == frozenset({1, 2})
    assert convert([1, "a"], tuple[int, str]) == (1, "a")
    assert convert({"k": [1]}, dict[str, list[int]]) == {"k": [1]}
    assert convert(None, Optional[int]) is None  # noqa: UP045
    assert convert(1, float | int) == 1 and type(convert(1, float | int)) is int
    assert convert("x", int | str) == "x"
    assert convert("red", Color) is Color.RED
    assert convert("b", Literal["a", "b"]) == "b"
    assert convert([1, 2], Point) == Point(1, 2)
    assert convert({"x": 5}, Point) == Point(5, 0)
    assert convert({"anything": [1]}, Any) == {"anything": [1]}
    # Dense: bytes equal to an earlier interned str decode as str (and vice versa).
    assert convert("abcd", bytes) == b"abcd"
    assert convert(b"abcd", str) == "abcd"


def test_dense_str_bytes_sharing_still_converts() -> None:
    @dataclass
    class Blob:
        label: str
        data: bytes

    raw = qdf.loads(qdf.dumps([{"label": "same-text", "data": b"same-text"}], mode="balanced"))
    assert convert(raw, list[Blob]) == [Blob("same-text", b"same-text")]


def test_struct_rename_array_like_and_tag() -> None:
    assert convert({"firstName": "Ada", "lastSeen": 3}, Camel) == Camel("Ada", 3)
    assert convert({"first_name": "Ada"}, Camel) == Camel("Ada", 0)
    assert convert([1, "r"], Pair) == Pair(1, "r")
    assert convert([1], Pair) == Pair(1, "")
    assert convert({"type": "Tagged", "x": 1}, Tagged) == Tagged(1)
    with pytest.raises(DecodeError, match="tag 'type'"):
        convert({"type": "Other", "x": 1}, Tagged)


def test_plans_are_cached() -> None:
    assert typed._converter(Hero) is typed._converter(Hero)
    assert typed._converter(list[Power]) is typed._converter(list[Power])
    assert typed._converter(HeroS) is typed._converter(HeroS)


# ------------------------------------------------------------------------------- errors


def test_type_mismatch_names_the_path() -> None:
    raw = _plain(_hero())
    raw["powers"][2]["name"] = 42
    with pytest.raises(DecodeError, match=r"expected str, got int at \.powers\[2\]\.name") as info:
        convert(raw, Hero)
    assert info.value.path == ".powers[2].name"


def test_mismatch_paths_in_lists_dicts_and_optional() -> None:
    with pytest.raises(DecodeError, match=r"at \[1\]\.level"):
        convert([{"name": "a", "level": 1}, {"name": "b", "level": "high"}], list[Power])
    raw = _plain(_hero())
    raw["stats"]["wit"] = "sharp"
    with pytest.raises(DecodeError, match=r"expected float, got str at \.stats\['wit'\]"):
        convert(raw, Hero)
    raw = _plain(_hero())
    raw["sidekick"] = {"name": "x", "level": None}
    with pytest.raises(DecodeError, match=r"expected int, got NoneType at \.sidekick\.level"):
        convert(raw, Hero)
    with pytest.raises(DecodeError, match=r"at \.powers\[0\]\.level"):
        convert({"name": "g", "powers": [{"name": "p", "level": 1.5}], "born": datetime.now(UTC), "avatar": b""}, HeroS)


def test_bool_is_not_an_int_and_int_is_not_a_str() -> None:
    with pytest.raises(DecodeError, match="expected int, got bool"):
        convert(True, int)
    with pytest.raises(DecodeError, match="expected str, got int"):
        convert(1, str)
    with pytest.raises(DecodeError, match="expected bool, got int"):
        convert(1, bool)
    with pytest.raises(DecodeError, match="expected datetime, got str"):
        convert("2020-01-01", datetime)


def test_unknown_key_is_an_error() -> None:
    with pytest.raises(DecodeError, match="unknown field 'colour': Power has no such field"):
        convert({"name": "a", "level": 1, "colour": "red"}, Power)
    with pytest.raises(DecodeError, match=r"unknown field 'x'.*at \[0\]"):
        convert([{"name": "a", "level": 1, "x": 0}], list[PowerS])


def test_missing_required_field_names_field_and_type() -> None:
    with pytest.raises(DecodeError, match=r"missing required field 'level' \(int\) of Power"):
        convert({"name": "a"}, Power)
    with pytest.raises(DecodeError, match=r"missing required field 'born' \(datetime\) of HeroS"):
        convert({"name": "g", "powers": [], "avatar": b""}, HeroS)


def test_other_errors() -> None:
    with pytest.raises(DecodeError, match="expected a map for Power, got list"):
        convert([1, 2], Power)
    with pytest.raises(DecodeError, match="2-element array, got 3"):
        convert([1, 2, 3], tuple[int, int])
    with pytest.raises(DecodeError, match="not a valid Color"):
        convert("green", Color)
    with pytest.raises(DecodeError, match="expected one of"):
        convert("c", Literal["a", "b"])
    with pytest.raises(DecodeError, match=re.escape("expected int | str, got list")):
        convert([1], int | str)
    with pytest.raises(DecodeError, match="raised ValueError: n must be >= 0"):
        convert({"n": -1}, Validated)
    with pytest.raises(DecodeError, match="not UTF-8"):
        convert(b"\xff\xfe", str)
    with pytest.raises(DecodeError, match="elements for Pair"):
        convert([1, "a", 3], Pair)


def test_unsupported_target_type_is_a_type_error() -> None:
    class Plain:
        pass

    with pytest.raises(TypeError, match="not a supported target"):
        convert({}, Plain)
    with pytest.raises(TypeError, match="unresolved annotation"):
        convert({}, "Power")


def test_unresolvable_annotation_is_a_type_error() -> None:
    @dataclass
    class Broken:
        x: DoesNotExist  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="cannot resolve the type annotations of"):
        convert({"x": 1}, Broken)
    with pytest.raises(TypeError):  # not cached half-built: fails the same way again
        convert({"x": 1}, Broken)
