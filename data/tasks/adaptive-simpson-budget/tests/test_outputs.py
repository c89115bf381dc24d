import importlib.util
import math


def load():
    spec = importlib.util.spec_from_file_location("quad", "/app/quad.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.integrate


def counted(f):
    n = [0]

    def g(x):
        n[0] += 1
        return f(x)
    return g, n


def check(integrate, f, a, b, exact, tol, budget=20000):
    g, n = counted(f)
    value, evals = integrate(g, a, b, tol)
    assert evals == n[0], (evals, n[0])
    assert n[0] <= budget, n[0]
    assert abs(value - exact) < tol, (value, exact, tol)


def test_smooth_integrals():
    integrate = load()
    check(integrate, math.sin, 0.0, math.pi, 2.0, 1e-10)
    check(integrate, math.exp, -1.0, 2.0, math.e ** 2 - math.e ** -1, 1e-10)
    check(integrate, lambda x: x ** 4 - 3 * x, 0.0, 2.0, 32 / 5 - 6, 1e-9)
    check(integrate, lambda x: 1 / (1 + x * x), 0.0, 1.0, math.pi / 4, 1e-10)
    check(integrate, math.sqrt, 0.0, 1.0, 2 / 3, 1e-8)


def test_peaked_within_budget():
    integrate = load()
    s = 1e-3
    spike = lambda x: math.exp(-((x - 0.3721) / s) ** 2)  # noqa: E731
    check(integrate, spike, 0.0, 1.0, s * math.sqrt(math.pi), 1e-10)
    lorentz = lambda x: 1e-4 / ((x - 2.5) ** 2 + 1e-8)  # noqa: E731
    exact = 1e-4 / 1e-4 * (math.atan((5 - 2.5) / 1e-4) - math.atan((0 - 2.5) / 1e-4))
    check(integrate, lorentz, 0.0, 5.0, exact, 1e-7)
    check(integrate, lambda x: math.sin(1 / x) if x > 0 else 0.0, 0.05, 1.0,
          0.5028396202158796, 1e-6)
