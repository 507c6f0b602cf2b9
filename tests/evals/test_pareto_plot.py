"""The Pareto PNG: labels measured from the renderer never overlap, cover points or clip."""

from __future__ import annotations

import math

import pytest

from evals import pareto
from evals.pareto import Point
from evals.pareto_plot import plot
from tests.support.pareto import POINTS

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# The board study's arms (evals/study.py) at close costs and scores, as reported: two_agent
# on vote5, verified on verified_length, single beside both verified arms, and the dearest
# point at the right edge. HEAD's plot overlapped two_agent/vote5 and verified/
# verified_length and hid `shared` under the legend.
STUDY_ARMS = [
    Point("single", 1200, 0.139, metric="mean_score", run="chartqapro-0a1b2c3d4e5f"),
    Point("isolated", 2300, 0.125, metric="mean_score", run="chartqapro-1b2c3d4e5f6a"),
    Point("shared", 2500, 0.081, metric="mean_score", run="chartqapro-2c3d4e5f6a7b"),
    Point("two_agent", 1390, 0.149, metric="mean_score", run="chartqapro-3d4e5f6a7b8c"),
    Point("vote5", 1400, 0.151, metric="mean_score", run="chartqapro-4e5f6a7b8c9d"),
    Point("verified", 1225, 0.131, metric="mean_score", run="chartqapro-5f6a7b8c9d0e"),
    Point("verified_length", 1235, 0.133, metric="mean_score", run="chartqapro-6a7b8c9d0e1f"),
]
LAYOUTS = {
    "study_arms": STUDY_ARMS,
    # the dearest, most accurate point has the longest name: its label must turn left
    "long_name_at_the_right_edge": [
        Point("single", 1200, 0.139),
        Point("two_agent", 1390, 0.149),
        Point("verified_length", 2600, 0.152),
    ],
    # every arm within a few tokens and a point of each other
    "tight_cluster": [
        Point(p.name, 1200 + 3 * i, 0.130 + 0.001 * (i % 3)) for i, p in enumerate(STUDY_ARMS)
    ],
    # the arms within a few tokens of each other and one run far dearer: a crowd in pixels
    "cluster_and_outlier": [
        *(Point(p.name, 1200 + 150 * i, 0.13 + 0.002 * (i % 3)) for i, p in enumerate(STUDY_ARMS)),
        Point("isolated_64_frames", 9000, 0.16),
    ],
    "ties_and_invalid": POINTS,
    "one_point": [Point("single", 1200, 0.139)],
}


def label_problems(fig) -> list[str]:
    """Every way the rendered labels fail: two labels intersecting, a label on a marker,
    a label outside the figure or the axes, or on the legend (boxes from the renderer)."""
    from matplotlib.transforms import Bbox

    from evals.pareto_plot import LABEL_GID

    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_gid() == LABEL_GID]
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in labels}
    problems = []
    names = list(boxes)
    for i, a in enumerate(names):
        problems += [f"{a!r} overlaps {b!r}" for b in names[i + 1 :] if boxes[a].overlaps(boxes[b])]
    markers = []
    for collection in ax.collections:
        radius = math.sqrt(collection.get_sizes()[0]) / 2 * fig.dpi / 72
        for x, y in ax.transData.transform(collection.get_offsets()):
            markers.append(Bbox.from_extents(x - radius, y - radius, x + radius, y + radius))
    legends = [legend.get_window_extent(renderer) for legend in fig.legends]
    titles = [t.get_window_extent(renderer) for t in [*fig.texts, ax.title] if t.get_text()]
    problems += ["the legend overlaps the title" for g in legends for t in titles if g.overlaps(t)]
    for name, box in boxes.items():
        problems += [f"{name!r} covers a point" for m in markers if box.overlaps(m)]
        problems += [f"{name!r} covers the legend" for g in legends if box.overlaps(g)]
        for frame, where in ((fig.bbox, "figure"), (ax.bbox, "axes")):
            if not (frame.x0 <= box.x0 and box.x1 <= frame.x1):
                problems.append(f"{name!r} leaves the {where} sideways")
            if not (frame.y0 <= box.y0 and box.y1 <= frame.y1):
                problems.append(f"{name!r} leaves the {where} vertically")
    return problems


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_labels_never_overlap_cover_points_or_clip(layout):
    from evals.pareto_plot import LABEL_GID, figure

    points = LAYOUTS[layout]
    fig = figure(points)
    fig.canvas.draw()  # the boxes of what savefig writes
    assert label_problems(fig) == []
    shown = {t.get_text() for t in fig.axes[0].texts if t.get_gid() == LABEL_GID}
    tied = {(p.cost, p.accuracy) for p in points if p.valid}
    assert len(shown) == len(tied), "one label per distinct point"
    assert all(p.name in ", ".join(shown) for p in points if p.valid)


def test_the_checker_catches_the_reported_overlap():
    """The label check fails on labels placed as before (4 pt up-right of every point)."""
    from evals.pareto_plot import LABEL_GID, figure

    fig = figure(STUDY_ARMS)
    for text in fig.axes[0].texts:
        if text.get_gid() == LABEL_GID:
            text.xyann = (4, 4)
            text.set_horizontalalignment("left")
            text.set_verticalalignment("baseline")
    fig.canvas.draw()
    problems = label_problems(fig)
    assert "'two_agent' overlaps 'vote5'" in problems
    assert "'verified' overlaps 'verified_length'" in problems


def test_y_axis_names_the_metric_plotted():
    from evals.pareto_plot import figure

    assert figure(STUDY_ARMS).axes[0].get_ylabel() == "mean_score"
    assert figure(POINTS).axes[0].get_ylabel() == "score"  # no metric named
    mixed = [STUDY_ARMS[0], Point("v", 900, 0.6, metric="accuracy")]
    assert figure(mixed).axes[0].get_ylabel() == "mean_score / accuracy"
    assert "| mean_score |" in pareto.markdown_table(STUDY_ARMS).splitlines()[0]


def test_plot_writes_a_png(tmp_path):
    path = plot(STUDY_ARMS, tmp_path / "plots" / "front.png")
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 0
    empty = plot([Point("H", math.nan, 0.5)], tmp_path / "empty.png")
    assert empty.read_bytes()[:8] == PNG_SIGNATURE
