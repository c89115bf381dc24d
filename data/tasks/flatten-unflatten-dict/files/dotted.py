"""Convert between nested dicts and flat dicts with dotted keys."""


def flatten(data, sep="."):
    raise NotImplementedError


def unflatten(flat, sep="."):
    raise NotImplementedError
