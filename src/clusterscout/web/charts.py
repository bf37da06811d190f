"""Server-rendered SVG charts (pygal): scaling, cost vs time, step time by cause, price history.

Charts are served from their own GET routes and embedded with ``<img alt>`` (ADR 0007). pygal
always writes a configuration ``<script>`` into its SVG; :func:`_clean` removes it (and the
generator comments), so the SVG is static markup plus its own ``<style>``. Every label and
number goes through the page's Formatter, so a chart reads in the page's language.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Final

import pygal
from pygal.style import Style
from starlette.responses import Response

from clusterscout.web.i18n import Formatter

# pygal appends a legacy finder (for its map plugins) to sys.meta_path on import; every failed
# import afterwards then warns "find_spec() not found", an error under -W error. We draw no maps.
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "PluginImportFixer"]

SVG_MEDIA_TYPE: Final = "image/svg+xml"
# The SVG's own stylesheet is inline; nothing else may load or run inside it.
SVG_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'"
WIDTH: Final = 760
HEIGHT: Final = 400
COLORS: Final = ("#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207")
STYLE: Final = Style(
    background="#ffffff",
    plot_background="#ffffff",
    foreground="#1f2933",
    foreground_strong="#1f2933",
    foreground_subtle="#8a96a3",
    opacity="0.9",
    opacity_hover="1",
    colors=COLORS,
    font_family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    label_font_size=12,
    major_label_font_size=12,
    legend_font_size=13,
    title_font_size=15,
    value_font_size=12,
    tooltip_font_size=12,
)


def _clean(root: Any) -> Any:
    """Drop ``<script>`` elements and comments (an xml filter run by pygal before output)."""
    for parent in list(root.iter()):
        for child in list(parent):
            tag = child.tag
            if callable(tag) or str(tag).rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return root


def _base(title: str, **config: Any) -> dict[str, Any]:
    return {
        "title": title,
        "js": [],
        "style": STYLE,
        "width": WIDTH,
        "height": HEIGHT,
        "explicit_size": True,
        "legend_at_bottom": True,
        "truncate_legend": 60,
        "truncate_label": -1,
        "min_scale": 4,
        "max_scale": 6,
        "show_x_guides": False,
        "margin": 16,
        **config,
    }


def _render(chart: Any) -> str:
    chart.add_xml_filter(_clean)
    return str(chart.render(is_unicode=True))


@dataclass(frozen=True, slots=True)
class Line:
    """One named series: y values (None leaves a gap) over the chart's x labels."""

    label: str
    values: tuple[float | None, ...]


def scaling_svg(fmt: Formatter, node_counts: Sequence[int], lines: Sequence[Line]) -> str:
    """Scaling efficiency (0-100 %) vs node count, one line per fabric."""
    _ = fmt.gettext
    chart = pygal.Line(
        **_base(
            _("Scaling efficiency by number of nodes"),
            height=HEIGHT + 24 * max(0, len(lines) - 1),
            legend_at_bottom_columns=1,
            x_title=_("Nodes"),
            y_title=_("Scaling efficiency"),
            range=(0, 1),
            value_formatter=lambda v: fmt.percent(v) if v is not None else _("does not fit"),
            allow_interruptions=True,
            dots_size=4,
            no_data_text=_("No offer with a known fabric matches."),
        )
    )
    chart.x_labels = [fmt.number(n) for n in node_counts]
    for line in lines:
        chart.add(line.label, list(line.values))
    return _render(chart)


@dataclass(frozen=True, slots=True)
class Point:
    """One option on the cost/time plane."""

    time_hours: float
    cost_usd: float
    label: str


def _time_axis(fmt: Formatter, hours: Sequence[float]) -> tuple[float, Callable[[float], str]]:
    """Divisor and formatter: days when the longest run exceeds three days, else hours."""
    if max(hours, default=0.0) > 72:
        return 24.0, lambda v: fmt.fixed(v, 0)
    return 1.0, lambda v: fmt.fixed(v, 1)


def cost_time_svg(fmt: Formatter, front: Sequence[Point], others: Sequence[Point]) -> str:
    """Job cost vs job time per option; the Pareto front is a highlighted line."""
    _ = fmt.gettext
    hours = [p.time_hours for p in (*front, *others)]
    divisor, fmt_time = _time_axis(fmt, hours)
    x_title = _("Time to train (days)") if divisor > 1 else _("Time to train (hours)")

    def value(point: Point) -> dict[str, Any]:
        return {"value": (point.time_hours / divisor, point.cost_usd), "label": point.label}

    chart = pygal.XY(
        **_base(
            _("Job cost against time to train"),
            x_title=x_title,
            y_title=_("Job cost (USD)"),
            x_value_formatter=fmt_time,
            value_formatter=fmt.usd_whole,
            dots_size=5,
            include_x_axis=True,
            xrange=(0, max(hours, default=1.0) / divisor * 1.05),
            no_data_text=_("No option fits the constraints."),
        )
    )
    chart.add(_("Pareto front"), [value(p) for p in sorted(front, key=lambda p: p.time_hours)])
    chart.add(_("Other options"), [value(p) for p in others], stroke=False)
    return _render(chart)


def step_height(bars: int) -> int:
    """Pixel height of the step chart with ``bars`` bars (the page reserves the same)."""
    return max(HEIGHT // 2, 60 + 34 * bars)


def step_svg(fmt: Formatter, caption: str, parts: Sequence[tuple[str, float]]) -> str:
    """Seconds of one training step by cause (compute, communication, ...), one bar each."""
    _ = fmt.gettext
    chart = pygal.HorizontalBar(
        **_base(
            _("One training step by cause"),
            height=step_height(len(parts)),
            show_legend=False,
            x_title=_("Seconds per step"),
            value_formatter=lambda v: fmt.fixed(v, 2),
            no_data_text=_("No option fits the constraints."),
        )
    )
    # pygal draws the first label at the bottom: reverse so the list reads top-down
    chart.x_labels = [label for label, _s in reversed(parts)]
    chart.add(caption, [seconds for _l, seconds in reversed(parts)])
    return _render(chart)


@dataclass(frozen=True, slots=True)
class PriceSeries:
    """Observed prices of one tier (and term) in time order."""

    label: str
    points: tuple[tuple[date, float], ...]


def price_history_svg(fmt: Formatter, series: Sequence[PriceSeries]) -> str:
    """USD per GPU-hour over time, one line per price tier and term."""
    _ = fmt.gettext
    days = [d for s in series for d, _v in s.points]
    axis: dict[str, Any] = {}
    prices = [v for s in series for _d, v in s.points]
    if prices:
        axis["range"] = (0, max(prices) * 1.15)
    if days:
        low, high = min(days), max(days)
        pad = timedelta(days=max(3, (high - low).days // 20))
        axis["xrange"] = ((low - pad).toordinal(), (high + pad).toordinal())
    chart = pygal.XY(
        **_base(
            _("Price history (USD per GPU-hour)"),
            height=320,
            x_title=_("Date observed"),
            y_title=_("USD per GPU-hour"),
            x_value_formatter=lambda v: fmt.day(date.fromordinal(max(1, round(v)))),
            value_formatter=fmt.usd,
            x_label_rotation=0,
            x_labels_major_count=4,
            show_minor_x_labels=False,
            include_x_axis=True,
            dots_size=4,
            no_data_text=_("No price observed yet."),
            **axis,
        )
    )
    for s in series:
        chart.add(s.label, [(d.toordinal(), v) for d, v in s.points])
    return _render(chart)


def svg_response(body: str) -> Response:
    """An SVG image with a policy that lets its own inline stylesheet apply, nothing else."""
    return Response(body, media_type=SVG_MEDIA_TYPE, headers={"Content-Security-Policy": SVG_CSP})
