assert median([10, 2, 38, 23, 38, 23, 21]) == 23
assert median([1, 2]) == 1.5
assert median([-1.5, 0.5]) == -0.5
assert median([7, 7, 7, 7]) == 7
