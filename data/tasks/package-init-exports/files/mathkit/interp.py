def lerp(a, b, t):
    """Linear interpolation between a (t=0) and b (t=1)."""
    return a + (b - a) * t
