"""Money as the shop handles it: amounts in euros, rounded half up to cents."""

from decimal import ROUND_HALF_UP, Decimal


def round_cents(amount):
    """Round an amount of money to whole cents, halves away from zero (never to even)."""
    return float(Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def format_money(amount):
    """The shop's way to print an amount: two decimals, a comma between thousands, then " EUR"."""
    return "{:,.2f} EUR".format(round_cents(amount))
