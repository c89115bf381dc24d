import importlib.util
import math
import random
import struct

import pytest


def load():
    spec = importlib.util.spec_from_file_location("ptlv", "/app/ptlv.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ref(v):
    if v is None:
        return b"\x00"
    if v is False or v is True:
        return b"\x02" if v else b"\x01"
    if isinstance(v, int):
        return b"\x03" + varint(2 * v if v >= 0 else -2 * v - 1)
    if isinstance(v, float):
        return b"\x04" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return b"\x05" + varint(len(b)) + b
    if isinstance(v, bytes):
        return b"\x06" + varint(len(v)) + v
    if isinstance(v, (list, tuple)):
        return b"\x07" + varint(len(v)) + b"".join(ref(x) for x in v)
    ks = sorted(v, key=lambda k: k.encode())
    return b"\x08" + varint(len(v)) + b"".join(ref(k) + ref(v[k]) for k in ks)


def test_exact_bytes():
    m = load()
    assert m.encode(None) == b"\x00" and m.encode(False) == b"\x01" and m.encode(True) == b"\x02"
    assert m.encode(0) == b"\x03\x00" and m.encode(-1) == b"\x03\x01" and m.encode(1) == b"\x03\x02"
    assert m.encode(64) == b"\x03\x80\x01" and m.encode(-65) == b"\x03\x81\x01"
    assert m.encode(1.5) == b"\x04" + struct.pack(">d", 1.5)
    assert m.encode("hé") == b"\x05\x03h\xc3\xa9" and m.encode(b"\x00\xff") == b"\x06\x02\x00\xff"
    assert m.encode([1, [True]]) == b"\x07\x02\x03\x02\x07\x01\x02"
    assert m.encode((None,)) == b"\x07\x01\x00"
    assert m.encode({"b": 1, "a": None, "é": 0, "Z": 2}) == b"\x08\x04\x05\x01Z\x03\x04\x05\x01a\x00\x05\x01b\x03\x02\x05\x02\xc3\xa9\x03\x00"
    assert m.encode(2**100) == ref(2**100) and m.encode(-(2**70) - 3) == ref(-(2**70) - 3)
    for bad in [{1: "x"}, {"a": {(1,): 2}}, object(), {1, 2}]:
        with pytest.raises(TypeError):
            m.encode(bad)


def rand_value(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.5:
        return rng.choice([None, True, False, rng.randint(-10**6, 10**6), rng.randint(-2**80, 2**80), rng.uniform(-1e9, 1e9),
                           "".join(rng.choice("aé€😀z ") for _ in range(rng.randint(0, 6))), bytes(rng.randrange(256) for _ in range(rng.randint(0, 5)))])
    if r < 0.75:
        return [rand_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {"".join(rng.choice("abcé") for _ in range(rng.randint(0, 3))): rand_value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def test_round_trip_random():
    m = load()
    rng = random.Random(61)
    for _ in range(400):
        v = rand_value(rng)
        b = m.encode(v)
        assert b == ref(v)
        assert m.decode(b) == v
    big = list(range(300))
    assert m.decode(m.encode(big)) == big
    assert math.isnan(m.decode(m.encode(float("nan"))))


def test_sequence_decode():
    m = load()
    rng = random.Random(62)
    vals = [rand_value(rng) for _ in range(50)]
    data = b"".join(ref(v) for v in vals)
    assert list(m.iter_decode(data)) == vals
    assert list(m.iter_decode(b"")) == []


def test_decode_errors():
    m = load()
    assert issubclass(m.DecodeError, ValueError)
    bad = [b"", b"\x09", b"\x03", b"\x03\x80", b"\x03\x80\x00", b"\x04\x00\x00", b"\x05\x05abc", b"\x05\x02\xc3\x28",
           b"\x00\x00", b"\x07\x02\x00", b"\x08\x01\x03\x00\x00", b"\x08\x02\x05\x01b\x00\x05\x01a\x00",
           b"\x08\x02\x05\x01a\x00\x05\x01a\x00", b"\x06\x81\x00"]
    for b in bad:
        with pytest.raises(m.DecodeError):
            m.decode(b)
    with pytest.raises(m.DecodeError):
        list(m.iter_decode(b"\x00\x03"))
    assert m.decode(b"\x08\x02\x05\x01a\x00\x05\x01b\x00") == {"a": None, "b": None}
