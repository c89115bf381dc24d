"""FNV-1a 32-bit hashing."""

__version__ = "1.2.0"


def fnv1a_32(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def bucket(key: str, n: int) -> int:
    return fnv1a_32(key.encode("utf-8")) % n
