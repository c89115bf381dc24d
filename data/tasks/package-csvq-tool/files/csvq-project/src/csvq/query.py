"""Row filtering and sorting."""


def parse_where(expr):
    for op in ("=", "!=", "<", ">"):
        if op in expr:
            col, value = expr.split(op, 1)
            return col.strip(), op, value.strip()
    raise ValueError("bad expression: %s" % expr)


def matches(row, col, op, value):
    if op == "=":
        return row[col] == value
    raise ValueError("operator not supported yet: %s" % op)


def sort_rows(rows, col, desc=False):
    return sorted(rows, key=lambda r: r[col], reverse=desc)
