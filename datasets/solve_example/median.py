def median(values):
    """The median of a non-empty list of numbers: the middle value once sorted, or the mean of
    the two middle values when there is an even number of them."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
