"""The catalogue: articles by SKU."""

SKU_PREFIX = "SKU-"

PRICES = {"SKU-0001": 2.5, "SKU-0002": 19.99, "SKU-0042": 1250.0}


def canonical_sku(code):
    """A SKU as the catalogue keys it: upper case, the SKU- prefix, four digits ("42" -> "SKU-0042")."""
    digits = "".join(ch for ch in str(code) if ch.isdigit())
    return SKU_PREFIX + digits.zfill(4)


def price_of(code):
    """The price of an article, whatever way its SKU is written; KeyError for an unknown one."""
    ...
