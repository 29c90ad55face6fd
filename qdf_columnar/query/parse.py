"""``parse_where(text)``: a SQL-like WHERE clause as a filter expression.

The grammar (keywords are case-insensitive; ``--where`` of the CLI uses it)::

    expr      := and_expr ("or" and_expr)*
    and_expr  := not_expr ("and" not_expr)*
    not_expr  := "not" not_expr | "(" expr ")" | predicate
    predicate := operand CMP operand            -- one side a column, the other a literal
               | column                         -- a bool column: column == true
               | column ["not"] "in" "(" literal ("," literal)* [","] ")"
               | column "is" ["not"] "null"
    CMP       := "==" | "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
    column    := identifier | `any name in backticks`
    literal   := ["-" | "+"] number | 'string' | "string" | true | false | timestamp 'ISO 8601'

``timestamp`` is a keyword only right before a string, so a column may be called
``timestamp`` (``timestamp >= timestamp '2026-01-01'``).

A hand-written tokenizer and recursive-descent parser (never ``eval``) build the same
:class:`Expr` as the operator API (``500 <= code`` becomes ``col("code") >= 500``).
Strings take backslash escapes (``\\'``, ``\\\\``, ``\\n``, ``\\t``) or a doubled quote
(``'it''s'``). Every error is a :class:`QueryError` naming the position (0-based
character offset, also in ``err.position``).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from qdf_columnar.errors import QueryError
from qdf_columnar.query.expr import Cmp, Expr, IsIn, IsNull

__all__ = ["parse_where"]

_KEYWORDS = frozenset({"and", "or", "not", "in", "is", "null", "true", "false"})
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_OPS = {"==": "==", "=": "==", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OP = re.compile(r"==|!=|<>|<=|>=|=|<|>")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}
#: Deepest nesting of parentheses / ``not`` accepted (recursion stays far from Python's limit).
MAX_DEPTH = 100


@dataclass(frozen=True)
class _Tok:
    kind: str  # "ident", "kw", "num", "str", "op", "(", ")", ",", "-", "+", "end"
    value: Any
    pos: int
    text: str


def _error(text: str, pos: int, what: str) -> QueryError:
    snippet = text if len(text) <= 60 else (
        ("..." if pos > 30 else "") + text[max(0, pos - 30):pos + 30] + ("..." if pos + 30 < len(text) else ""))
    err = QueryError(f"{what} - at position {pos} of the where clause {snippet!r}")
    err.position = pos  # type: ignore[attr-defined]
    return err


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        start = i
        if c in "'\"":
            value, i = _string(text, i)
            toks.append(_Tok("str", value, start, text[start:i]))
        elif c == "`":
            end = text.find("`", i + 1)
            if end < 0:
                raise _error(text, i, "unterminated `quoted column name`")
            if end == i + 1:
                raise _error(text, i, "empty `quoted column name`")
            toks.append(_Tok("ident", text[i + 1:end], start, text[start:end + 1]))
            i = end + 1
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            m = _NUMBER.match(text, i)
            assert m is not None
            i = m.end()
            if i < n and (text[i].isalnum() or text[i] in "_."):
                raise _error(text, start, f"malformed number {text[start:i + 1]!r}")
            raw = m.group()
            value: Any = int(raw, 16) if raw[:2].lower() == "0x" else (
                float(raw) if any(ch in raw for ch in ".eE") else int(raw))
            toks.append(_Tok("num", value, start, raw))
        elif c.isalpha() or c == "_":
            m = _IDENT.match(text, i)
            assert m is not None
            i = m.end()
            word = m.group()
            low = word.lower()
            if low in _KEYWORDS:
                toks.append(_Tok("kw", low, start, word))
            else:
                toks.append(_Tok("ident", word, start, word))
        elif c in "(),-+":
            i += 1
            toks.append(_Tok(c, c, start, c))
        else:
            m = _OP.match(text, i)
            if m is None:
                raise _error(text, i, f"unexpected character {c!r}")
            i = m.end()
            toks.append(_Tok("op", _OPS[m.group()], start, m.group()))
    toks.append(_Tok("end", None, n, "end of input"))
    return toks


def _string(text: str, i: int) -> tuple[str, int]:
    """The quoted string starting at ``text[i]`` and the index just past its closing quote."""
    quote, start, out = text[i], i, []
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text):
                break
            esc = text[i + 1]
            if esc not in _ESCAPES:
                raise _error(text, i, f"unknown escape \\{esc} in a string (use \\\\ for a backslash)")
            out.append(_ESCAPES[esc])
            i += 2
        elif c == quote:
            if i + 1 < len(text) and text[i + 1] == quote:  # SQL style: 'it''s'
                out.append(quote)
                i += 2
            else:
                return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    raise _error(text, start, "unterminated string")


def _timestamp(text: str, tok: _Tok) -> Any:
    """``timestamp '...'``: a datetime (aware when the string has an offset or Z).

    Naive strings with more than microsecond precision become ``numpy.datetime64[ns]``.
    """
    s = tok.value.strip()
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?)?\s*(Z|[+-]\d{2}:?\d{2})?", s)
    if m is None:
        raise _error(text, tok.pos,
                     f"timestamp {tok.value!r} is not ISO 8601 (YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|+HH:MM])")
    date, clock, frac, tz = m.groups()
    frac = frac or ""
    try:
        if len(frac) > 6 and frac[6:].strip("0"):
            if tz is not None:
                raise _error(text, tok.pos, "a timestamp with an offset is limited to microseconds")
            return np.datetime64(f"{date}T{clock}.{frac[:9]}", "ns")
        iso = date + (f"T{clock}" if clock else "") + (f".{frac[:6].ljust(6, '0')}" if frac else "")
        if tz is not None:
            tz = "+00:00" if tz == "Z" else (tz if ":" in tz else f"{tz[:3]}:{tz[3:]}")
            iso += tz
        return _dt.datetime.fromisoformat(iso)
    except ValueError as exc:
        raise _error(text, tok.pos, f"bad timestamp {tok.value!r}: {exc}") from None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at_kw(self, *words: str) -> bool:
        return self.tok.kind == "kw" and self.tok.value in words

    def at_timestamp(self) -> bool:
        """``timestamp '...'``: "timestamp" is a keyword only before a string (else a column)."""
        t = self.tok
        return t.kind == "ident" and t.text.lower() == "timestamp" and self.toks[self.i + 1].kind == "str"

    def fail(self, what: str, tok: _Tok | None = None) -> QueryError:
        tok = tok or self.tok
        found = f"{tok.text!r}" if tok.kind != "end" else "the end"
        return _error(self.text, tok.pos, f"{what}, found {found}")

    def expect(self, kind: str, what: str) -> _Tok:
        if self.tok.kind != kind:
            raise self.fail(f"expected {what}")
        return self.next()

    # -------------------------------------------------------------- boolean structure

    def parse(self) -> Expr:
        if self.tok.kind == "end":
            raise _error(self.text, 0, "empty where clause")
        e = self.or_expr()
        if self.tok.kind != "end":
            raise self.fail("expected 'and', 'or' or the end of the clause")
        return e

    def or_expr(self) -> Expr:
        e = self.and_expr()
        while self.at_kw("or"):
            self.next()
            e = e | self.and_expr()
        return e

    def and_expr(self) -> Expr:
        e = self.not_expr()
        while self.at_kw("and"):
            self.next()
            e = e & self.not_expr()
        return e

    def not_expr(self) -> Expr:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels")
        try:
            if self.at_kw("not"):
                self.next()
                return ~self.not_expr()
            if self.tok.kind == "(":
                self.next()
                e = self.or_expr()
                self.expect(")", "')'")
                return e
            return self.predicate()
        finally:
            self.depth -= 1

    # -------------------------------------------------------------- predicates

    def predicate(self) -> Expr:
        start = self.tok
        if start.kind == "ident" and not self.at_timestamp():
            name = self.next().value
            if self.at_kw("is"):
                return self.is_null(name)
            if self.at_kw("in", "not"):
                return self.in_list(name, start)
            if self.tok.kind in ("end", ")") or self.at_kw("and", "or"):
                return Cmp(name, "==", True)  # a bare (bool) column, as in SQL: WHERE flag
            if self.tok.kind != "op":
                raise self.fail(f"expected a comparison, 'in' or 'is' after column {name!r}")
            op = self.next().value
            if self.tok.kind == "ident" and not self.at_timestamp():
                raise self.fail("comparing two columns is not supported; the other side must be a literal")
            value = self.literal()
            return self.leaf(start, lambda: Cmp(name, op, value))
        if start.kind in ("num", "str", "-", "+") or self.at_kw("true", "false", "null") or self.at_timestamp():
            value = self.literal()
            if self.tok.kind != "op":
                raise self.fail("expected a comparison operator after the literal")
            op = self.next().value
            if self.tok.kind != "ident":
                raise self.fail("expected a column name (one side of a comparison must be a column)")
            name = self.next().value
            return self.leaf(start, lambda: Cmp(name, _FLIP[op], value))
        if start.kind == "kw":
            raise _error(self.text, start.pos,
                         f"{start.text!r} is a keyword; quote a column of that name in `backticks`")
        raise self.fail("expected a column name, 'not' or '('")

    def is_null(self, name: str) -> Expr:
        self.next()  # "is"
        negated = self.at_kw("not")
        if negated:
            self.next()
        if not self.at_kw("null"):
            raise self.fail("expected 'null' after 'is'" + ("" if negated else " (or 'is not null')"))
        self.next()
        return IsNull(name, negated=negated)

    def in_list(self, name: str, start: _Tok) -> Expr:
        negated = self.at_kw("not")
        if negated:
            self.next()
            if not self.at_kw("in"):
                raise self.fail("expected 'in' after 'not'")
        self.next()  # "in"
        self.expect("(", "'(' to start the value list")
        values: list[Any] = []
        while self.tok.kind != ")":
            values.append(self.literal())
            if self.tok.kind == ",":
                self.next()
            elif self.tok.kind != ")":
                raise self.fail("expected ',' or ')' in the value list")
        self.next()
        e = self.leaf(start, lambda: IsIn(name, tuple(values)))
        return ~e if negated else e

    def literal(self) -> Any:
        t = self.next()
        if t.kind in ("-", "+"):
            num = self.tok
            if num.kind != "num":
                raise self.fail(f"expected a number after {t.value!r}")
            self.next()
            return -num.value if t.kind == "-" else num.value
        if t.kind in ("num", "str"):
            return t.value
        if t.kind == "kw" and t.value in ("true", "false"):
            return t.value == "true"
        if t.kind == "kw" and t.value == "null":
            return None
        if t.kind == "ident" and t.text.lower() == "timestamp" and self.tok.kind == "str":
            return _timestamp(self.text, self.next())
        self.i -= 1
        raise self.fail("expected a literal (number, 'string', true, false, null or timestamp '...')")

    def leaf(self, start: _Tok, build: Any) -> Expr:
        """Build a leaf; its own QueryError (e.g. ``x == null``) gets the position."""
        try:
            return build()  # type: ignore[no-any-return]
        except QueryError as err:
            raise _error(self.text, start.pos, err.reason) from None


def parse_where(text: str) -> Expr:
    """Parse a SQL-like WHERE clause into a filter expression.

    Parameters
    ----------
    text : str
        For example ``"code >= 500 and level == 'ERROR'"``, ``"not (a < 3 or b != 'x')"``,
        ``"level in ('ERROR', 'WARN')"``, ``"user_id is not null"``,
        ``"ts >= timestamp '2026-01-01T00:00:00Z'"``. ``and`` binds tighter than ``or``.

    Returns
    -------
    Expr
        The same tree ``col(...)`` operators would build.

    Raises
    ------
    QueryError
        Malformed text; the message names the 0-based character position (also
        ``err.position``).

    Examples
    --------
    >>> parse_where("code >= 500 and level == 'ERROR'")
    (col('code') >= 500) & (col('level') == 'ERROR')
    >>> parse_where("500 <= code or level not in ('DEBUG', 'INFO')")
    (col('code') >= 500) | ~col('level').isin(['DEBUG', 'INFO'])
    >>> parse_where("user_id is null")
    col('user_id').is_null()
    """
    if not isinstance(text, str):
        raise QueryError(f"a where clause must be a str, not {type(text).__name__}")
    return _Parser(text).parse()
