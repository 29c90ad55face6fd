"""Turn decoded qdf values (dicts, lists, scalars) into a requested Python type.

``convert(value, T)`` backs ``qdf.loads(buf, type=T)`` and ``StreamReader(..., type=T)``.
Supported targets: dataclasses, msgspec ``Struct`` types, ``typing.NamedTuple``,
``list[T]`` / ``tuple[...]`` / ``set[T]`` / ``frozenset[T]`` / ``dict[K, V]``,
``Optional[T]`` / ``T | None`` and other unions, ``Literal[...]``, ``Enum``
subclasses, ``int`` / ``float`` / ``str`` / ``bool`` / ``bytes`` / ``datetime``
and ``Any``. Annotations are resolved with :func:`typing.get_type_hints`, so
string annotations and ``from __future__ import annotations`` work (the names must
be resolvable from the class's module).

Conversion is strict, like msgspec's: a key the type does not declare, a missing
required field or a value of the wrong kind raises :class:`DecodeError` with the
path of the offending value (``.powers[2].name``) in the message and in
``err.path``. Two deliberate leniencies, both because of how the wire works:

* ``float`` fields accept ints (a whole float such as ``2.0`` written by another
  encoder as an int is still a float) and numpy scalars (QPack payloads and
  float32 values decode to numpy types).
* ``str`` and ``bytes`` fields accept each other (UTF-8): in the Dense dialect a
  ``bytes`` value equal to an earlier interned ``str`` is written as a reference
  and decodes with the type of the first occurrence (see :mod:`.values`).

Plans (field names, resolved hints, one converter per field) are built once per
type and cached, so converting many messages of one type is a dict walk plus the
constructor call. msgspec is imported only when a Struct type is first planned.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
import types
import typing
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any, TypeVar, overload

import numpy as np

from ..errors import DecodeError

__all__ = ["convert", "converter"]

T = TypeVar("T")

_Conv = Callable[[Any], Any]


class _Mismatch(Exception):
    """Internal: a value does not fit; ``path`` is filled innermost-first while unwinding."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


# ---------------------------------------------------------------------------------- public


@overload
def convert(value: object, type_: type[T]) -> T: ...
@overload
def convert(value: object, type_: Any) -> Any: ...
def convert(value: object, type_: Any) -> Any:
    """Return ``value`` (as decoded by ``loads``) converted to ``type_``.

    Raises :class:`DecodeError` when the value does not fit the type (with the path
    of the offending part) and :class:`TypeError` when ``type_`` itself is not a
    supported target.
    """
    return converter(type_)(value)


def converter(type_: Any) -> Callable[[object], Any]:
    """A cached function ``value -> type_`` raising :class:`DecodeError` like :func:`convert`.

    Building the plan up front means an unsupported ``type_`` fails here (with
    :class:`TypeError`), not on the first message.
    """
    conv = _converter(type_)
    name = _type_name(type_)

    def run(value: object) -> Any:
        try:
            return conv(value)
        except _Mismatch as m:
            raise _decode_error(m, name) from None

    return run


def _decode_error(m: _Mismatch, name: str) -> DecodeError:
    path = "".join(reversed(m.path))
    where = f" at {path}" if path else ""
    err = DecodeError(f"cannot convert the decoded value to {name}: {m.message}{where}")
    err.path = path  # type: ignore[attr-defined]
    return err


# ------------------------------------------------------------------------------ plan cache

# type -> converter. A class plan registers itself before its fields are planned so
# recursive types (a Node with children: list[Node]) terminate.
_PLANS: dict[Any, _Conv] = {}
_LOCK = threading.RLock()


def _converter(tp: Any) -> _Conv:
    try:
        return _PLANS[tp]
    except KeyError:
        pass
    except TypeError:  # unhashable typing construct (e.g. Annotated with a dict in it)
        return _build(tp)
    with _LOCK:
        conv = _PLANS.get(tp)
        if conv is None:
            conv = _build(tp)
            _PLANS[tp] = conv
        return conv


def _type_name(tp: Any) -> str:
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


def _kind(v: object) -> str:
    return type(v).__name__


def _identity(v: Any) -> Any:
    return v


# ------------------------------------------------------------------------------- scalars


def _to_int(v: Any) -> int:
    if type(v) is int:
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    raise _Mismatch(f"expected int, got {_kind(v)}")


def _to_float(v: Any) -> float:
    if type(v) is float:
        return v
    # float32 values decode as np.float32; float() widens them exactly.
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
        return float(v)
    raise _Mismatch(f"expected float, got {_kind(v)}")


def _to_bool(v: Any) -> bool:
    if v is True or v is False:
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    raise _Mismatch(f"expected bool, got {_kind(v)}")


def _to_str(v: Any) -> str:
    if type(v) is str:
        return v
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):  # Dense: shares an intern id with an earlier bytes value
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            raise _Mismatch("expected str, got bytes that are not UTF-8") from None
    raise _Mismatch(f"expected str, got {_kind(v)}")


def _to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):  # Dense: shares an intern id with an earlier str value
        return v.encode("utf-8")
    raise _Mismatch(f"expected bytes, got {_kind(v)}")


def _to_datetime(v: Any) -> datetime:
    # F3 timestamps decode as UTC datetimes (or pd.Timestamp, a datetime subclass, for nanoseconds).
    if isinstance(v, datetime):
        return v
    raise _Mismatch(f"expected datetime, got {_kind(v)}")


def _to_none(v: Any) -> None:
    if v is None:
        return None
    raise _Mismatch(f"expected None, got {_kind(v)}")


_SCALARS: dict[Any, _Conv] = {
    int: _to_int,
    float: _to_float,
    bool: _to_bool,
    str: _to_str,
    bytes: _to_bytes,
    datetime: _to_datetime,
    type(None): _to_none,
    None: _to_none,
    Any: _identity,
    object: _identity,
}


# -------------------------------------------------------------------------------- builder


def _build(tp: Any) -> _Conv:
    conv = _SCALARS.get(tp) if _hashable(tp) else None
    if conv is not None:
        return conv
    if isinstance(tp, TypeVar):  # an unparametrised generic field: anything goes
        return _identity
    if isinstance(tp, str) or isinstance(tp, typing.ForwardRef):
        raise TypeError(f"cannot decode into the unresolved annotation {tp!r}; pass the type itself")
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _converter(args[0])
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return _build_union(tp, args)
    if origin is typing.Literal:
        return _build_literal(args)
    if origin in (list, Sequence, MutableSequence) or tp in (list, Sequence, MutableSequence):
        return _build_list(args[0] if args else Any)
    if origin is tuple or tp is tuple:
        return _build_tuple(args)
    if origin in (set, frozenset, AbstractSet) or tp in (set, frozenset, AbstractSet):
        kind = frozenset if (origin or tp) is frozenset else set
        return _build_set(args[0] if args else Any, kind)
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        return _build_dict(*(args if args else (Any, Any)))
    cls = origin if origin is not None and isinstance(origin, type) else tp
    if isinstance(cls, type):
        if dataclasses.is_dataclass(cls):
            return _ClassPlan.for_dataclass(cls).convert
        if hasattr(cls, "__struct_fields__"):  # msgspec Struct (msgspec is imported only now)
            return _ClassPlan.for_struct(cls).convert
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            return _ClassPlan.for_namedtuple(cls).convert
        if issubclass(cls, enum.Enum):
            return _build_enum(cls)
    raise TypeError(f"cannot decode into {tp!r}: not a supported target type (see qdf_columnar.wire.typed)")


def _hashable(tp: Any) -> bool:
    try:
        hash(tp)
    except TypeError:
        return False
    return True


def _build_union(tp: Any, args: tuple) -> _Conv:
    optional = type(None) in args
    members = [a for a in args if a is not type(None)]
    if len(members) == 1:
        inner = _converter(members[0])

        def conv_optional(v: Any) -> Any:
            return None if v is None else inner(v)

        return conv_optional
    convs = [_converter(a) for a in members]
    # A value whose exact type is a member is kept as is: `float | int` must not turn 1 into 1.0.
    exact = {a for a in members if isinstance(a, type) and a in _SCALARS}
    name = _type_name(tp)

    def conv_union(v: Any) -> Any:
        if v is None and optional:
            return None
        if type(v) in exact:
            return v
        for c in convs:
            try:
                return c(v)
            except _Mismatch:
                continue
        raise _Mismatch(f"expected {name}, got {_kind(v)}")

    return conv_union


def _build_literal(args: tuple) -> _Conv:
    allowed = args

    def conv_literal(v: Any) -> Any:
        for a in allowed:
            if v == a and type(v) is type(a):
                return a
        raise _Mismatch(f"expected one of {list(allowed)!r}, got {v!r}")

    return conv_literal


def _build_enum(cls: type[enum.Enum]) -> _Conv:
    def conv_enum(v: Any) -> Any:
        if isinstance(v, cls):
            return v
        try:
            return cls(v)
        except ValueError:
            raise _Mismatch(f"{v!r} is not a valid {cls.__qualname__}") from None

    return conv_enum


def _as_sequence(v: Any, what: str) -> Sequence:
    if isinstance(v, (list, tuple)):
        return v
    if isinstance(v, np.ndarray):  # a QPack payload (numeric / bool slice) decodes to an array
        return v.tolist()
    if hasattr(v, "to_pylist") and callable(v.to_pylist):  # pyarrow Table / Array from a batch
        return v.to_pylist()
    raise _Mismatch(f"expected {what}, got {_kind(v)}")


def _build_list(elem: Any) -> _Conv:
    ec = _converter(elem)
    if ec is _identity:

        def conv_any_list(v: Any) -> list:
            return list(_as_sequence(v, "a list"))

        return conv_any_list

    def conv_list(v: Any) -> list:
        seq = _as_sequence(v, "a list")
        out = []
        for i, x in enumerate(seq):
            try:
                out.append(ec(x))
            except _Mismatch as m:
                m.path.append(f"[{i}]")
                raise
        return out

    return conv_list


def _build_set(elem: Any, kind: type) -> _Conv:
    lc = _build_list(elem)

    def conv_set(v: Any) -> Any:
        if isinstance(v, (set, frozenset)):
            v = list(v)
        try:
            return kind(lc(v))
        except TypeError as exc:  # unhashable elements (e.g. set[list])
            raise _Mismatch(f"cannot build a {kind.__name__}: {exc}") from None

    return conv_set


def _build_tuple(args: tuple) -> _Conv:
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        lc = _build_list(args[0] if args else Any)

        def conv_var_tuple(v: Any) -> tuple:
            return tuple(lc(v))

        return conv_var_tuple
    if args == ((),):  # tuple[()]
        args = ()
    convs = [_converter(a) for a in args]
    n = len(convs)

    def conv_tuple(v: Any) -> tuple:
        seq = _as_sequence(v, f"a {n}-element array")
        if len(seq) != n:
            raise _Mismatch(f"expected a {n}-element array, got {len(seq)} elements")
        out = []
        for i, (c, x) in enumerate(zip(convs, seq)):
            try:
                out.append(c(x))
            except _Mismatch as m:
                m.path.append(f"[{i}]")
                raise
        return tuple(out)

    return conv_tuple


def _build_dict(key: Any, val: Any) -> _Conv:
    kc = _converter(key)
    vc = _converter(val)

    def conv_dict(v: Any) -> dict:
        if not isinstance(v, Mapping):
            raise _Mismatch(f"expected a map, got {_kind(v)}")
        out = {}
        for k, x in v.items():
            try:
                out[kc(k)] = vc(x)
            except _Mismatch as m:
                m.path.append(f"[{k!r}]")
                raise
        return out

    return conv_dict


# ------------------------------------------------------------------------- class plans


class _Field:
    __slots__ = ("attr", "conv", "init", "type_name")

    def __init__(self, attr: str, conv: _Conv, init: bool, type_name: str) -> None:
        self.attr = attr
        self.conv = conv
        self.init = init
        self.type_name = type_name


class _ClassPlan:
    """How to build one class from a decoded map: wire key -> field, required fields."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.name = cls.__qualname__
        self.by_key: dict[Any, _Field] = {}
        self.required: list[tuple[str, str]] = []  # (key, type name)
        self.positional: list[_Field] | None = None  # array-shaped input (NamedTuple, array_like Struct)
        self.n_required_positional = 0
        self.tag: tuple[str, Any] | None = None  # msgspec tagged union: (tag field, tag value)
        self.has_late = False  # dataclass fields with init=False

    @staticmethod
    def _register(cls: type) -> _ClassPlan:
        plan = _ClassPlan(cls)
        # Registered before the fields are planned so a recursive type finds itself.
        _PLANS[cls] = plan.convert
        return plan

    @staticmethod
    def _hints(cls: type) -> dict[str, Any]:
        try:
            return typing.get_type_hints(cls)
        except Exception as exc:  # NameError for a forward reference that does not resolve, mostly
            raise TypeError(f"cannot resolve the type annotations of {cls.__qualname__}: {exc}") from exc

    @classmethod
    def for_dataclass(cls, dc: type) -> _ClassPlan:
        with _LOCK:
            plan = cls._register(dc)
            try:
                hints = cls._hints(dc)
                for f in dataclasses.fields(dc):
                    tp = hints.get(f.name, Any)
                    field = _Field(f.name, _converter(tp), f.init, _type_name(tp))
                    plan.by_key[f.name] = field
                    plan.has_late |= not f.init
                    if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                        plan.required.append((f.name, field.type_name))
            except BaseException:
                _PLANS.pop(dc, None)
                raise
            return plan

    @classmethod
    def for_struct(cls, st: type) -> _ClassPlan:
        import msgspec

        with _LOCK:
            plan = cls._register(st)
            try:
                try:
                    infos = msgspec.structs.fields(st)
                except Exception as exc:
                    raise TypeError(f"cannot resolve the type annotations of {st.__qualname__}: {exc}") from exc
                fields = []
                for info in infos:
                    field = _Field(info.name, _converter(info.type), True, _type_name(info.type))
                    fields.append(field)
                    # The wire key is the encode name (rename=...); the Python name is accepted too.
                    plan.by_key[info.encode_name] = field
                    plan.by_key.setdefault(info.name, field)
                    if info.required:
                        plan.required.append((info.encode_name, field.type_name))
                config = st.__struct_config__
                if config.tag_field is not None:
                    plan.tag = (config.tag_field, config.tag)
                if config.array_like:
                    plan.positional = fields
                    plan.n_required_positional = len(plan.required)
            except BaseException:
                _PLANS.pop(st, None)
                raise
            return plan

    @classmethod
    def for_namedtuple(cls, nt: type) -> _ClassPlan:
        with _LOCK:
            plan = cls._register(nt)
            try:
                hints = cls._hints(nt)
                defaults = getattr(nt, "_field_defaults", {})
                fields = []
                for name in nt._fields:  # type: ignore[attr-defined]
                    tp = hints.get(name, Any)
                    field = _Field(name, _converter(tp), True, _type_name(tp))
                    fields.append(field)
                    plan.by_key[name] = field
                    if name not in defaults:
                        plan.required.append((name, field.type_name))
                plan.positional = fields
                plan.n_required_positional = len(plan.required)
            except BaseException:
                _PLANS.pop(nt, None)
                raise
            return plan

    # ------------------------------------------------------------------------ convert
    def convert(self, v: Any) -> Any:
        if isinstance(v, self.cls):
            return v
        if isinstance(v, Mapping):
            return self._from_map(v)
        if self.positional is not None and isinstance(v, (list, tuple)):
            return self._from_array(v)
        raise _Mismatch(f"expected a map for {self.name}, got {_kind(v)}")

    def _from_map(self, v: Mapping) -> Any:
        kwargs: dict[str, Any] = {}
        late: list[tuple[str, Any]] = []
        by_key = self.by_key
        for key, x in v.items():
            field = by_key.get(key)
            if field is None:
                if self.tag is not None and key == self.tag[0]:
                    if x != self.tag[1]:
                        raise _Mismatch(f"tag {key!r} is {x!r}, expected {self.tag[1]!r} for {self.name}")
                    continue
                # Never drop data silently: a key the type lacks is most likely a schema mismatch.
                raise _Mismatch(f"unknown field {key!r}: {self.name} has no such field")
            try:
                value = field.conv(x)
            except _Mismatch as m:
                m.path.append(f".{field.attr}")
                raise
            if field.attr in kwargs:
                raise _Mismatch(f"field {field.attr!r} of {self.name} is given twice")
            if field.init:
                kwargs[field.attr] = value
            else:
                late.append((field.attr, value))
        for key, type_name in self.required:
            if by_key[key].attr not in kwargs:
                raise _Mismatch(f"missing required field {key!r} ({type_name}) of {self.name}")
        obj = self._construct(kwargs)
        for attr, value in late:
            # init=False fields were encoded with the instance; restore them as they were
            # (object.__setattr__ also works for frozen dataclasses).
            object.__setattr__(obj, attr, value)
        return obj

    def _from_array(self, v: Sequence) -> Any:
        fields = self.positional
        assert fields is not None
        if not self.n_required_positional <= len(v) <= len(fields):
            raise _Mismatch(
                f"expected {self.n_required_positional}..{len(fields)} elements for {self.name}, got {len(v)}"
            )
        kwargs: dict[str, Any] = {}
        for i, (field, x) in enumerate(zip(fields, v)):
            try:
                kwargs[field.attr] = field.conv(x)
            except _Mismatch as m:
                m.path.append(f"[{i}]")
                raise
        return self._construct(kwargs)

    def _construct(self, kwargs: dict[str, Any]) -> Any:
        try:
            return self.cls(**kwargs)
        except (TypeError, ValueError) as exc:  # e.g. validation in __post_init__
            raise _Mismatch(f"{self.name}(...) raised {type(exc).__name__}: {exc}") from exc
