"""Orders: lines of (unit price, quantity)."""


def order_total(lines, tax_rate):
    """The total of an order's lines (unit_price, quantity), with tax at tax_rate, rounded to
    cents the shop's way."""
    ...


def receipt_line(label, amount):
    """One receipt line: the label, a colon and a space, then the amount as the shop prints money."""
    ...
