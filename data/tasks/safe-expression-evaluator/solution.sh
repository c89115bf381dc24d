#!/bin/bash
cat > /app/pricing/calc.py <<'PY'
import ast
import operator

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UN = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCS = {"min": min, "max": max, "abs": abs, "round": round}


def _lim(v):
    if abs(v) > 10 ** 100:
        raise ValueError("result too large")
    return v


def _ev(n, vs):
    if isinstance(n, ast.Constant) and type(n.value) in (int, float):
        return _lim(n.value)
    if isinstance(n, ast.Name) and type(n.ctx) is ast.Load and n.id in vs:
        v = vs[n.id]
        if type(v) not in (int, float):
            raise ValueError(f"variable {n.id} is not a number")
        return v
    if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
        a, b = _ev(n.left, vs), _ev(n.right, vs)
        if isinstance(n.op, ast.Pow) and abs(b) > 100:
            raise ValueError("exponent too large")
        try:
            r = _BIN[type(n.op)](a, b)
        except (ZeroDivisionError, OverflowError) as e:
            raise ValueError(str(e))
        if isinstance(r, complex):
            raise ValueError("complex result")
        return _lim(r)
    if isinstance(n, ast.UnaryOp) and type(n.op) in _UN:
        return _lim(_UN[type(n.op)](_ev(n.operand, vs)))
    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _FUNCS and not n.keywords
            and not any(isinstance(a, ast.Starred) for a in n.args)):
        args = [_ev(a, vs) for a in n.args]
        if n.func.id == "round" and len(args) not in (1, 2):
            raise ValueError("round takes 1 or 2 arguments")
        if n.func.id == "round" and len(args) == 2 and type(args[1]) is not int:
            raise ValueError("round digits must be int")
        if n.func.id in ("min", "max") and not args or n.func.id == "abs" and len(args) != 1:
            raise ValueError("bad arguments")
        return _FUNCS[n.func.id](*args)
    raise ValueError(f"unsupported expression: {type(n).__name__}")


def evaluate(expr, variables):
    """Evaluate a pricing formula like 'base * 1.2 + max(shipping, 4.99)' safely (ValueError on anything else)."""
    if not isinstance(expr, str) or len(expr) > 500:
        raise ValueError("expression too long")
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError) as e:
        raise ValueError(str(e))
    try:
        return _ev(tree.body, dict(variables))
    except RecursionError:
        raise ValueError("too deep")
PY
