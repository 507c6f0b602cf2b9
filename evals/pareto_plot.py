"""The cost-score Pareto PNG, its point labels clear of each other and the points, unclipped.

Label placement is deterministic and measured, not guessed. The layout is fixed first
(constrained layout, legend below the axes); each label's size is read from the renderer;
then labels are placed one by one, the most crowded point first, at the first candidate
around their point (:data:`DIRECTIONS` by :data:`DISTANCES_PT`) that stays inside the axes,
keeps :data:`GAP_PX` from every marker, the front line and every label and leader already
placed, and lies nearer its own point than any other. A label placed away from its point
gets a thin leader that crosses no other marker or label; labels left without a place are
tried again first. When a label finds room only outside the axes, the axis limits grow on
that side by what its box lacks and the placement starts over (at most
:data:`MAX_EXPANSIONS` times). Only in a crowd of touching markers can a label find no free
place: it then takes the place with the fewest conflicts and a warning is logged. Tied
points share one label.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.path import Path as MplPath
from matplotlib.transforms import Bbox

from evals.pareto import Point, metric_name, pareto_front

log = logging.getLogger(__name__)

LABEL_GID = "pareto-label"
"""``gid`` of every point label, so tests and callers can find them among the axes' texts."""
DIRECTIONS = (
    *((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1)),
    *((2, 1), (2, -1), (-2, 1), (-2, -1), (1, 2), (1, -2), (-1, 2), (-1, -2)),
)
"""Candidate sides of a label around its point, tried in this order (right/up first)."""
DISTANCES_PT = (6, 12, 20, 30, 42, 58, 78, 102, 130)
"""Candidate distances, in points, from the point's centre to the label's nearest corner."""
LEADER_FROM_PT = 12
"""Labels at least this far from their point get a leader line."""
GAP_PX = 2.0
"""Least clearance, in pixels, between a label and any marker, other label or leader."""
CROWD_PX = 40.0
"""Labels of points with more neighbours within this many pixels are placed first."""
MAX_EXPANSIONS = 8
"""Most times the axis limits grow to make room for labels at the edges."""
MARKER_SIZE = 36.0  # scatter size in points squared (matplotlib's default, 6 pt across)


@dataclass(frozen=True)
class Placement:
    """Where one label goes: its offset from the point (points), alignment and pixel box."""

    offset_pt: tuple[float, float]
    ha: str
    va: str
    box: Bbox
    leader: tuple[tuple[float, float], tuple[float, float]] | None  # pixels, point to box
    conflicts: int = 0  # labels, markers, lines it touches: 0 unless there was no free place


def plot(points: Sequence[Point], path: str | Path, **labels: str | None) -> Path:
    """Write the PNG of :func:`figure` (``labels``: its title, xlabel, ylabel) to ``path``."""
    fig = figure(points, **labels)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", dpi=fig.dpi)
    return out


def figure(
    points: Sequence[Point],
    *,
    title: str = "Cost-score Pareto front",
    xlabel: str = "cost (tokens per sample, vision counted)",
    ylabel: str | None = None,
) -> Figure:
    """Front points filled, dominated points as crosses, the front as a step line (held to
    the right edge), every point labelled by name; the y axis is named by the points' metric
    (``ylabel`` overrides). Uses the Agg canvas, no pyplot."""
    valid = [p for p in points if p.valid]
    front = pareto_front(valid)
    on_front = {id(p) for p in front}
    fig = Figure(figsize=(6.4, 4.6), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if front:
        xs = [p.cost for p in front] + [max(p.cost for p in valid)]
        ys = [p.accuracy for p in front] + [front[-1].accuracy]
        ax.step(xs, ys, where="post", color="tab:blue", linewidth=1.5, label="Pareto front")
        ax.scatter(xs[:-1], ys[:-1], s=MARKER_SIZE, color="tab:blue", zorder=3, label="on front")
    worse = [p for p in valid if id(p) not in on_front]
    if worse:
        ax.scatter(
            [p.cost for p in worse],
            [p.accuracy for p in worse],
            s=MARKER_SIZE,
            marker="x",
            color="tab:red",
            zorder=3,
            label="dominated",
        )
    fig.suptitle(title)
    ax.set(xlabel=xlabel, ylabel=ylabel or metric_name(points))
    ax.grid(alpha=0.3)
    if valid:
        fig.legend(loc="outside lower center", ncol=3, frameon=False)
    groups: dict[tuple[float, float], list[str]] = {}
    for p in sorted(valid, key=lambda p: (p.cost, p.accuracy, p.name)):
        groups.setdefault((p.cost, p.accuracy), []).append(p.name)
    _label_points(fig, ax, groups)
    return fig


def _label_points(fig: Figure, ax, groups: dict[tuple[float, float], list[str]]) -> None:
    """Add one label per group and place them all (module docstring)."""
    texts = []
    for xy, names in groups.items():
        text = ax.annotate(", ".join(names), xy, xytext=(0, 0), textcoords="offset points")
        text.set_in_layout(False)  # the layout is for axes and ticks; labels fit inside
        text.set_gid(LABEL_GID)
        texts.append(text)
    if not texts:
        return
    ax.set(xlim=ax.get_xlim(), ylim=ax.get_ylim())  # no autoscale once labels are placed
    renderer = fig.canvas.get_renderer()
    sizes = [t.get_window_extent(renderer).size for t in texts]
    marker_px = math.sqrt(MARKER_SIZE) / 2 * fig.dpi / 72
    for attempt in range(MAX_EXPANSIONS + 1):
        fig.draw_without_rendering()  # lay out for the current limits, ticks included
        anchors = [tuple(ax.transData.transform(xy)) for xy in groups]
        markers = [_box_around(a, marker_px) for a in anchors]
        lines = [ax.transData.transform_path(line.get_path()) for line in ax.lines]
        placements, overflow = place_labels(anchors, sizes, markers, ax.bbox, fig.dpi / 72, lines)
        crowded = [p for p in placements if p.conflicts]
        if not crowded or not overflow or attempt == MAX_EXPANSIONS:
            break
        _expand(ax, overflow)
    fig.set_layout_engine("none")  # freeze the layout the labels were placed in
    for text, place in zip(texts, placements, strict=True):
        if place.conflicts:
            log.warning("no free place for the label %r; it touches something", text.get_text())
        text.xyann = place.offset_pt
        text.set_horizontalalignment(place.ha)
        text.set_verticalalignment(place.va)
        if place.leader:
            start, end = ax.transData.inverted().transform(place.leader)
            xs, ys = zip(start, end, strict=True)
            ax.plot(xs, ys, color="0.55", linewidth=0.7, zorder=2, scalex=False, scaley=False)


def place_labels(
    anchors: Sequence[tuple[float, float]],
    sizes: Sequence[tuple[float, float]],
    markers: Sequence[Bbox],
    area: Bbox,
    px_per_pt: float,
    lines: Sequence[MplPath] = (),
) -> tuple[list[Placement], list[Placement]]:
    """Greedy placement in pixels. For each anchor, most crowded first (most other anchors
    within :data:`CROWD_PX`, then in the order given), the first candidate (side by
    :data:`DIRECTIONS`, distance by :data:`DISTANCES_PT`) inside ``area`` and clear of the
    ``lines``, every marker and the labels and leaders placed so far, its own leader
    crossing no other marker or label, and (without a leader) nearer its own point than any
    other; where none is clear, the inside candidate with the
    fewest conflicts (``Placement.conflicts`` > 0). When some label has none clear, the
    placement is tried once more with those labels first, and the better one is kept.
    Also returns, for labels left in conflict, their first clear candidate outside
    ``area``: what the axes must grow to hold."""
    args = (anchors, sizes, markers, area, px_per_pt, lines)
    order = sorted(range(len(anchors)), key=lambda i: (-_crowd(anchors, i), i))
    first = _place_in_order(order, *args)
    failed = [i for i in order if first[0][i].conflicts]
    if not failed:
        return first
    second = _place_in_order(failed + [i for i in order if i not in failed], *args)
    return min(first, second, key=lambda tried: sum(p.conflicts > 0 for p in tried[0]))


def _place_in_order(order, anchors, sizes, markers, area, px_per_pt, lines):
    placed: list[Bbox] = []
    leaders: list[MplPath] = []
    chosen: dict[int, Placement] = {}
    overflow: list[Placement] = []
    for index in order:
        candidates = [
            _candidate(anchors[index], sizes[index], direction, distance, px_per_pt)
            for distance in DISTANCES_PT
            for direction in DIRECTIONS
        ]
        crossed = [m for i, m in enumerate(markers) if i != index] + placed
        others = [a for i, a in enumerate(anchors) if i != index]
        counts = [
            _conflicts(c, [*markers, *placed], crossed, leaders, lines)
            + _nearer_elsewhere(c, anchors[index], others)
            for c in candidates
        ]
        inside = [_inside(c.box, area) for c in candidates]
        best = min(range(len(candidates)), key=lambda k: (not inside[k], counts[k], k))
        choice = chosen[index] = dataclasses.replace(candidates[best], conflicts=counts[best])
        if choice.conflicts:
            overflow += [c for c, n in zip(candidates, counts, strict=True) if n == 0][:1]
        placed.append(choice.box)
        if choice.leader:
            leaders.append(MplPath(choice.leader))
    return [chosen[i] for i in range(len(anchors))], overflow


def _crowd(anchors: Sequence[tuple[float, float]], index: int) -> int:
    x, y = anchors[index]
    near = [math.hypot(x - ax, y - ay) < CROWD_PX for ax, ay in anchors]
    return sum(near) - 1


def _candidate(anchor, size, direction, distance_pt, px_per_pt) -> Placement:
    (x, y), (w, h), (dx, dy) = anchor, size, direction
    ox, oy = dx * distance_pt, dy * distance_pt
    px, py = x + ox * px_per_pt, y + oy * px_per_pt
    x0 = px if dx > 0 else px - w if dx < 0 else px - w / 2
    y0 = py if dy > 0 else py - h if dy < 0 else py - h / 2
    box = Bbox.from_bounds(x0, y0, w, h)
    ha = "left" if dx > 0 else "right" if dx < 0 else "center"
    va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
    leader = None
    if distance_pt >= LEADER_FROM_PT:
        near = (min(max(x, box.x0), box.x1), min(max(y, box.y0), box.y1))
        start_pt = math.sqrt(MARKER_SIZE) / 2 + 1  # start just outside the marker
        length = math.hypot(near[0] - x, near[1] - y)
        shrink = min(1.0, start_pt * px_per_pt / length) if length else 1.0
        start = (x + (near[0] - x) * shrink, y + (near[1] - y) * shrink)
        leader = (start, near)
    return Placement((ox, oy), ha, va, box, leader)


def _inside(box: Bbox, area: Bbox) -> bool:
    return (
        area.x0 + GAP_PX <= box.x0
        and box.x1 <= area.x1 - GAP_PX
        and area.y0 + GAP_PX <= box.y0
        and box.y1 <= area.y1 - GAP_PX
    )


def _conflicts(place: Placement, boxes, leader_blocks, leaders, lines) -> int:
    """How many of ``boxes``, earlier ``leaders`` and ``lines`` the label touches, plus how
    many of ``leader_blocks`` (other markers, labels placed so far) its own leader crosses."""
    box, padded = place.box, place.box.padded(GAP_PX)
    count = sum(_near(box, other) for other in boxes)
    count += sum(path.intersects_bbox(padded, filled=False) for path in [*leaders, *lines])
    if place.leader is not None:
        own = MplPath(place.leader)
        count += sum(own.intersects_bbox(b.padded(GAP_PX), filled=False) for b in leader_blocks)
    return count


def _nearer_elsewhere(place: Placement, own, others) -> bool:
    """Whether a label without a leader lies nearer some other point than its own, so a
    reader would pair it with the wrong one."""
    if place.leader is not None:
        return False
    mine = _distance(place.box, own)
    return any(_distance(place.box, other) < mine for other in others)


def _distance(box: Bbox, point: tuple[float, float]) -> float:
    x, y = point
    return math.hypot(max(box.x0 - x, 0.0, x - box.x1), max(box.y0 - y, 0.0, y - box.y1))


def _near(a: Bbox, b: Bbox) -> bool:
    """Whether two boxes come closer than :data:`GAP_PX`."""
    return (
        a.x0 < b.x1 + GAP_PX
        and b.x0 < a.x1 + GAP_PX
        and a.y0 < b.y1 + GAP_PX
        and b.y0 < a.y1 + GAP_PX
    )


def _box_around(centre: tuple[float, float], half: float) -> Bbox:
    x, y = centre
    return Bbox.from_extents(x - half, y - half, x + half, y + half)


def _expand(ax, overflow: Sequence[Placement]) -> None:
    """Grow the axis limits on each side by what the overflowing boxes lack, plus a gap, in
    data units at the current scale plus a fifth (the scale shrinks as the span grows)."""
    area = ax.bbox
    for axis, (low_px, high_px) in (("x", (area.x0, area.x1)), ("y", (area.y0, area.y1))):
        get, set_ = getattr(ax, f"get_{axis}lim"), getattr(ax, f"set_{axis}lim")
        low, high = get()
        lack_low = max(low_px + GAP_PX - getattr(p.box, f"{axis}0") for p in overflow)
        lack_high = max(getattr(p.box, f"{axis}1") - high_px + GAP_PX for p in overflow)
        grow = [1.2 * (lack + GAP_PX) if lack > 0 else 0.0 for lack in (lack_low, lack_high)]
        per_px = (high - low) / (high_px - low_px)
        set_(low - grow[0] * per_px, high + grow[1] * per_px)
