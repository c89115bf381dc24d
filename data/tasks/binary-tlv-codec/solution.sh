#!/bin/bash
set -e
cat > /app/ptlv.py <<'PY'
import struct


class DecodeError(ValueError):
    pass


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _enc(v, out):
    if v is None:
        out.append(0)
    elif v is False:
        out.append(1)
    elif v is True:
        out.append(2)
    elif isinstance(v, int):
        out.append(3)
        out += _varint(2 * v if v >= 0 else -2 * v - 1)
    elif isinstance(v, float):
        out.append(4)
        out += struct.pack(">d", v)
    elif isinstance(v, str):
        b = v.encode("utf-8")
        out.append(5)
        out += _varint(len(b)) + b
    elif isinstance(v, (bytes, bytearray)):
        out.append(6)
        out += _varint(len(v)) + bytes(v)
    elif isinstance(v, (list, tuple)):
        out.append(7)
        out += _varint(len(v))
        for x in v:
            _enc(x, out)
    elif isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise TypeError("dict keys must be str")
        out.append(8)
        out += _varint(len(v))
        for k in sorted(v, key=lambda k: k.encode("utf-8")):
            _enc(k, out)
            _enc(v[k], out)
    else:
        raise TypeError("unsupported type %s" % type(v).__name__)


def encode(value):
    out = bytearray()
    _enc(value, out)
    return bytes(out)


class _Reader:
    def __init__(self, data):
        self.d, self.i = bytes(data), 0

    def take(self, n):
        if self.i + n > len(self.d):
            raise DecodeError("truncated")
        b = self.d[self.i:self.i + n]
        self.i += n
        return b

    def varint(self):
        n, shift, count = 0, 0, 0
        while True:
            b = self.take(1)[0]
            count += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                if count > 1 and b == 0:
                    raise DecodeError("non-shortest varint")
                return n

    def value(self):
        t = self.take(1)[0]
        if t == 0:
            return None
        if t in (1, 2):
            return t == 2
        if t == 3:
            z = self.varint()
            return z // 2 if z % 2 == 0 else -(z + 1) // 2
        if t == 4:
            return struct.unpack(">d", self.take(8))[0]
        if t in (5, 6):
            b = self.take(self.varint())
            if t == 6:
                return b
            try:
                return b.decode("utf-8")
            except UnicodeDecodeError:
                raise DecodeError("bad utf-8")
        if t == 7:
            return [self.value() for _ in range(self.varint())]
        if t == 8:
            d, prev = {}, None
            for _ in range(self.varint()):
                k = self.value()
                if not isinstance(k, str):
                    raise DecodeError("dict key not str")
                kb = k.encode("utf-8")
                if prev is not None and kb <= prev:
                    raise DecodeError("dict keys not ascending")
                prev = kb
                d[k] = self.value()
            return d
        raise DecodeError("unknown tag %d" % t)


def decode(data):
    r = _Reader(data)
    v = r.value()
    if r.i != len(r.d):
        raise DecodeError("trailing bytes")
    return v


def iter_decode(data):
    r = _Reader(data)
    while r.i < len(r.d):
        yield r.value()
PY
