"""Shopping cart helpers used by the checkout service."""


def add_item(name, qty, cart=[]):
    """Add `qty` of `name` to `cart` and return the cart.

    When no cart is given a brand-new, empty cart is started.
    Adding a name that is already in the cart increases its quantity.
    """
    for entry in cart:
        if entry[0] == name:
            entry[1] += qty
            return cart
    cart.append([name, qty])
    return cart


def total(cart, prices):
    """Total price of a cart given a dict of unit prices."""
    return sum(prices[name] * qty for name, qty in cart)
