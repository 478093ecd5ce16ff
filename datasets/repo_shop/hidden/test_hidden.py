import pytest

from shop.catalog import price_of
from shop.orders import order_total, receipt_line


def test_price_of_bare_number():
    assert price_of(1) == 2.5


def test_price_of_unknown():
    with pytest.raises(KeyError):
        price_of("SKU-9999")


def test_order_total_many_lines():
    assert order_total([(0.5, 3), (1.25, 1)], 0.1) == 3.03


def test_receipt_line_rounding():
    assert receipt_line("Gum", 0.125) == "Gum: 0.13 EUR"
