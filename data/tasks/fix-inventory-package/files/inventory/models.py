from dataclasses import dataclass


@dataclass
class Item:
    sku: str
    name: str
    price_cents: int
    quantity: int = 0
    tags: list = None

    def value_cents(self):
        return self.price_cents * self.quantity
