def evaluate(expr, variables):
    """Evaluate a pricing formula like 'base * 1.2 + max(shipping, 4.99)'."""
    return eval(expr, {"min": min, "max": max, "abs": abs, "round": round}, dict(variables))
