#!/bin/bash
set -e
cat > /app/inventory/models.py <<'PY'
from dataclasses import dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    price_cents: int
    quantity: int = 0
    tags: list = field(default_factory=list)

    def value_cents(self):
        return self.price_cents * self.quantity
PY
python3 - <<'PY'
p = "/app/inventory/store.py"
s = open(p).read()
s = s.replace("def __init__(self, items=[]):\n        self.items = items",
              "def __init__(self, items=None):\n        self.items = list(items) if items is not None else []")
s = s.replace("item.quantity =+ amount", "item.quantity += amount")
s = s.replace("sum(i.price_cents for i in self.items) // len(self.items) / 100",
              "sum(i.price_cents for i in self.items) / len(self.items) / 100")
s = s.replace("key=lambda i: i.sku)\n        start = number * size", "key=lambda i: i.name)\n        start = (number - 1) * size")
s = s.replace("if tag in i.tags]", "if tag in (i.tags or [])]")
open(p, "w").write(s)
PY
