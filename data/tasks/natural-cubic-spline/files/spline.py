"""Natural cubic spline interpolation (to be implemented).

class NaturalCubicSpline:
    __init__(self, x, y)        x strictly increasing (n >= 2 points), y same length
    __call__(self, xq)          spline values at xq (scalar -> float, array-like -> numpy array of xq's shape)
    derivative(self, xq)        first derivative S'(xq), same conventions
    integral(self, a, b)        integral of S from a to b (a > b gives the negative), float

The spline is the C2 piecewise cubic through every (x_i, y_i) with S''(x_0) = S''(x_{n-1}) = 0.
Outside [x_0, x_{n-1}] it continues with the first / last cubic piece.
"""
