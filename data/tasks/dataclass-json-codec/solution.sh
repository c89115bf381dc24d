#!/bin/bash
set -e
cat > /app/codec.py <<'PY'
"""Typed JSON codec for dataclasses."""
import dataclasses
import datetime
import decimal
import enum
import json
import types
import typing


class CodecError(ValueError):
    pass


def _enc(v):
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _enc(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_enc(x) for x in v]
    if isinstance(v, dict):
        return {k: _enc(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError("cannot encode %r" % type(v).__name__)


def to_json(obj):
    return json.dumps(_enc(obj), sort_keys=True)


def _fail(path, msg):
    raise CodecError("%s: %s" % (path or "<root>", msg))


def _join(path, name):
    return name if not path else path + "." + name


def _dec(tp, v, path):
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if v is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            _fail(path, "unsupported union")
        return _dec(rest[0], v, path)
    if v is None:
        _fail(path, "null not allowed")
    if dataclasses.is_dataclass(tp):
        if not isinstance(v, dict):
            _fail(path, "expected object")
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        for k in v:
            if k not in names:
                _fail(_join(path, k), "unknown member")
        kw = {}
        for f in dataclasses.fields(tp):
            if f.name in v:
                kw[f.name] = _dec(hints[f.name], v[f.name], _join(path, f.name))
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                _fail(_join(path, f.name), "missing member")
        return tp(**kw)
    if origin in (list, tuple):
        if not isinstance(v, list):
            _fail(path, "expected array")
        inner = args[0] if args else typing.Any
        out = [_dec(inner, x, "%s[%d]" % (path, i)) for i, x in enumerate(v)]
        return out if origin is list else tuple(out)
    if origin is dict:
        if not isinstance(v, dict):
            _fail(path, "expected object")
        return {k: _dec(args[1], x, "%s[%s]" % (path, k)) for k, x in v.items()}
    if tp is typing.Any:
        return v
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(v)
        except ValueError:
            _fail(path, "bad enum value %r" % (v,))
    if tp is bool:
        if not isinstance(v, bool):
            _fail(path, "expected bool")
        return v
    if tp is int:
        if isinstance(v, bool) or not isinstance(v, int):
            _fail(path, "expected int")
        return v
    if tp is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            _fail(path, "expected number")
        return float(v)
    if tp is str:
        if not isinstance(v, str):
            _fail(path, "expected string")
        return v
    if tp is decimal.Decimal:
        if not isinstance(v, str):
            _fail(path, "expected decimal string")
        try:
            return decimal.Decimal(v)
        except decimal.InvalidOperation:
            _fail(path, "bad decimal")
    if tp in (datetime.datetime, datetime.date):
        if not isinstance(v, str):
            _fail(path, "expected date string")
        try:
            return tp.fromisoformat(v)
        except ValueError:
            _fail(path, "bad date")
    _fail(path, "unsupported type %r" % (tp,))


def from_json(cls, text):
    return _dec(cls, json.loads(text), "")
PY
