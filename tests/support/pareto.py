"""Cost-score points for the Pareto tests: ties, dominated points and a missing cost."""

from __future__ import annotations

import math

from evals.pareto import Point

POINTS = [
    Point("A", 100, 0.50),
    Point("B", 100, 0.40),  # same cost as A, less accurate: dominated by A
    Point("C", 200, 0.50),  # same accuracy as A, dearer: dominated by A
    Point("D", 300, 0.70),
    Point("E", 300, 0.70),  # identical to D: neither dominates, both on the front
    Point("F", 400, 0.65),  # dearer and worse than D: the negative region
    Point("G", 50, 0.30),  # cheapest
    Point("H", math.nan, 0.90),  # no cost: on no front, dominating nothing
]
