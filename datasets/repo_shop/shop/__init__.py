"""A small shop: money, a catalogue and orders (rgd's demonstration project for solve --repo)."""
