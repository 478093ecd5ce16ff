from shop.orders import order_total, receipt_line


def test_order_total_plain():
    assert order_total([(2.5, 2)], 0.0) == 5.0


def test_order_total_rounds_half_up():
    assert order_total([(2.5, 1)], 0.05) == 2.63


def test_receipt_line_small():
    assert receipt_line("Tea", 2.5) == "Tea: 2.50 EUR"


def test_receipt_line_thousands():
    assert receipt_line("Bike", 1250) == "Bike: 1,250.00 EUR"
