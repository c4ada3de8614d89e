"""Small matplotlib charts, embedded in the HTML as SVG data URIs (no files, no scripts).

An `<img>` of an SVG cannot run code or inject markup, so chart labels taken from the data
(family names, configuration names) need no escaping of their own.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from vadar.report.drawing import data_uri
from vadar.report.questions import QuestionView
from vadar.report.summary import GroupRow

OUTCOME_COLORS = {"correct": "#2e8540", "wrong": "#d9822b", "error": "#c0392b", "answered": "#2b5c8a"}
"""Every outcome a question can have (`questions.outcome_of`), as the page's badges colour them."""
BAR_COLOR = "#4C72B0"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


@dataclass(frozen=True)
class Chart:
    """A chart as an `<img>` shows it: the SVG inlined, and its size in CSS pixels (so the page
    keeps its layout while it loads)."""

    src: str
    width: int
    height: int


def _svg(figure) -> Chart:
    plt = _pyplot()
    buffer = io.BytesIO()
    figure.tight_layout()
    inches = figure.get_size_inches()
    figure.savefig(buffer, format="svg")
    plt.close(figure)
    return Chart(data_uri(buffer.getvalue(), "image/svg+xml"), round(inches[0] * 96), round(inches[1] * 96))


def accuracy_chart(rows: Sequence[GroupRow], title: str) -> Chart:
    """Horizontal bars of mean score per group, with the question count beside each."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6.0, 0.35 * len(rows) + 1.2))
    names = [f"{r.name} (n={r.count})" for r in rows]
    bars = axis.barh(range(len(rows)), [r.accuracy for r in rows], color=BAR_COLOR)
    axis.bar_label(bars, labels=[f"{r.accuracy:.2f}" for r in rows], padding=2, fontsize=8)
    axis.set_yticks(range(len(rows)), names, fontsize=8)
    axis.invert_yaxis()
    axis.set_xlim(0, 1.1)
    axis.set_xlabel("accuracy")
    axis.set_title(title, fontsize=10)
    return _svg(figure)


def time_chart(views: Sequence[QuestionView]) -> Chart:
    """Seconds per question in answer order, coloured by outcome."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6.0, 2.6))
    axis.bar(range(len(views)), [v.seconds for v in views], width=0.85,
             color=[OUTCOME_COLORS[v.outcome] for v in views])
    from matplotlib.patches import Patch

    shown = {v.outcome for v in views}
    axis.legend(handles=[Patch(color=color, label=outcome) for outcome, color in OUTCOME_COLORS.items()
                         if outcome in shown], fontsize=8, frameon=False)
    axis.set_xlabel("question (answer order)")
    axis.set_ylabel("seconds")
    axis.set_title("time per question", fontsize=10)
    return _svg(figure)


def totals_chart(names: Sequence[str], totals: Sequence[float], title: str) -> Chart:
    """Vertical bars of the weighted total per configuration (ablation)."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(max(5.0, 0.9 * len(names)), 3.2))
    bars = axis.bar(range(len(names)), totals, color=BAR_COLOR)
    axis.bar_label(bars, labels=[f"{t:.2f}" for t in totals], padding=2, fontsize=8)
    axis.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    axis.set_ylim(0, 1.1)
    axis.set_ylabel("accuracy (weighted total)")
    axis.set_title(title, fontsize=10)
    return _svg(figure)
