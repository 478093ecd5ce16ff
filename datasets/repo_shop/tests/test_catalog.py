from shop.catalog import price_of


def test_price_of_canonical():
    assert price_of("SKU-0002") == 19.99


def test_price_of_loose_spelling():
    assert price_of("sku-42") == 1250.0
