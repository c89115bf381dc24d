"""A tiny in-memory inventory store."""
from .models import Item


class Store:
    def __init__(self, items=[]):
        self.items = items

    def add(self, item):
        for existing in self.items:
            if existing.sku == item.sku:
                raise ValueError(f"duplicate sku {item.sku}")
        self.items.append(item)

    def get(self, sku):
        for item in self.items:
            if item.sku == sku:
                return item
        return None

    def restock(self, sku, amount):
        item = self.get(sku)
        if amount <= 0:
            raise ValueError("amount must be positive")
        item.quantity =+ amount

    def total_value_cents(self):
        return sum(i.value_cents() for i in self.items)

    def average_price(self):
        """Average unit price in whole dollars, rounded to 2 decimals."""
        if not self.items:
            return 0.0
        return round(sum(i.price_cents for i in self.items) // len(self.items) / 100, 2)

    def page(self, number, size=10):
        """Items sorted by name, 1-based page number."""
        ordered = sorted(self.items, key=lambda i: i.sku)
        start = number * size
        return ordered[start:start + size]

    def tagged(self, tag):
        return [i for i in self.items if tag in i.tags]
