"""A line plot as SVG text: axes, ticks, labelled series, markers, with the standard library only.

The images carry no plotting library; SVG is text that every browser shows, so the viewer renders the fonts
and the lines. This draws what the DataLoader advisor needs and nothing more.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

BLACK, GREY, LIGHT, RED = "#000000", "#787878", "#e1e1e1", "#d62728"
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf"]
FONT = 'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14"'
CHAR_W = 8.5        # the width of one character of FONT, for laying out the legend


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]
    line: bool = True
    color: str | None = None        # a CSS colour; None: the next of PALETTE


@dataclass
class Plot:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    highlight: tuple[float, float] | None = None       # ringed point (the recommendation)
    highlight_label: str = ""
    failed: list[float] = field(default_factory=list)  # x positions of failed runs, drawn as red crosses at y=0
    failed_label: str = "failed"


def text_width(text: str) -> int:
    return round(len(text) * CHAR_W)


def _nice_step(span: float, ticks: int = 5) -> float:
    raw = span / max(ticks, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _fmt(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


class Svg:
    """The elements of one drawing, in painting order."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.parts: list[str] = [f'<rect width="{width}" height="{height}" fill="#ffffff"/>']

    def line(self, x0: float, y0: float, x1: float, y1: float, color: str, width: int = 1) -> None:
        self.parts.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="{color}" stroke-width="{width}"/>')

    def polyline(self, points: list[tuple[int, int]], color: str) -> None:
        coords = " ".join(f"{x},{y}" for x, y in points)
        self.parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="3"/>')

    def circle(self, cx: float, cy: float, r: int, color: str, ring: bool = False) -> None:
        paint = f'fill="none" stroke="{color}" stroke-width="2"' if ring else f'fill="{color}"'
        self.parts.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" {paint}/>')

    def cross(self, cx: float, cy: float, r: int, color: str) -> None:
        self.line(cx - r, cy - r, cx + r, cy + r, color, 2)
        self.line(cx - r, cy + r, cx + r, cy - r, color, 2)

    def text(self, x: float, y: float, text: str, color: str = BLACK, anchor: str = "start",
             vertical: bool = False) -> None:
        """Text with its baseline at y; vertical text reads bottom to top, centred on (x, y)."""
        turn = f' transform="rotate(-90 {x} {y})"' if vertical else ""
        self.parts.append(f'<text x="{x}" y="{y}" fill="{color}" text-anchor="{anchor}" {FONT}{turn}>'
                          f'{escape(text)}</text>')

    def document(self, title: str) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}">')
        return "\n".join([head, f"<title>{escape(title)}</title>", *self.parts, "</svg>"]) + "\n"


@dataclass
class _Frame:
    """Data coordinates to pixels: the plot area and the ranges it shows."""

    left: int
    right: int
    top: int
    bottom: int
    x_min: float
    x_max: float
    y_max: float
    pad_px: int

    def px(self, x: float) -> int:
        span = self.right - self.left - 2 * self.pad_px
        return round(self.left + self.pad_px + (x - self.x_min) / (self.x_max - self.x_min) * span)

    def py(self, y: float) -> int:
        return round(self.bottom - y / self.y_max * (self.bottom - self.top))


def _frame(plot: Plot, width: int, height: int) -> tuple[_Frame, float]:
    left, right, top, bottom = 110, width - 30, 60, height - 150
    xs = [x for s in plot.series for x, _ in s.points] + plot.failed or [0.0, 1.0]
    ys = [y for s in plot.series for _, y in s.points] or [1.0]
    x_min, x_max = min(xs), max(max(xs), min(xs) + 1)
    pad = (x_max - x_min) * 0.04
    y_step = _nice_step(max(ys) * 1.1 or 1.0)
    y_max = y_step * math.ceil(max(ys) * 1.1 / y_step) if max(ys) > 0 else 1.0
    pad_px = round(pad / (x_max - x_min + 2 * pad) * (right - left)) if pad else 0
    return _Frame(left, right, top, bottom, x_min, x_max, y_max, pad_px), y_step


def _axes(svg: Svg, plot: Plot, f: _Frame, y_step: float) -> None:
    svg.text(svg.width / 2, 32, plot.title, anchor="middle")
    y = 0.0
    while y <= f.y_max + 1e-9:
        svg.line(f.left, f.py(y), f.right, f.py(y), LIGHT)
        svg.text(f.left - 10, f.py(y) + 5, _fmt(y), GREY, anchor="end")
        y += y_step
    x_step = max(1.0, _nice_step(f.x_max - f.x_min, 10)) if f.x_max - f.x_min > 10 else 1.0
    x = f.x_min
    while x <= f.x_max + 1e-9:
        svg.line(f.px(x), f.bottom, f.px(x), f.bottom + 6, BLACK)
        svg.text(f.px(x), f.bottom + 24, _fmt(x), GREY, anchor="middle")
        x += x_step
    svg.line(f.left, f.bottom, f.right, f.bottom, BLACK, 2)
    svg.line(f.left, f.top, f.left, f.bottom, BLACK, 2)
    svg.text((f.left + f.right) / 2, f.bottom + 48, plot.xlabel, anchor="middle")
    svg.text(32, (f.top + f.bottom) / 2, plot.ylabel, anchor="middle", vertical=True)


def _series_and_legend(svg: Svg, plot: Plot, f: _Frame) -> tuple[float, float]:
    """Draw each series and its legend entry; returns where the next legend entry goes."""
    legend_x, legend_y = float(f.left), float(f.bottom + 64)
    for n, s in enumerate(plot.series):
        color = s.color or PALETTE[n % len(PALETTE)]
        pts = [(f.px(x), f.py(y)) for x, y in sorted(s.points)]
        if s.line and len(pts) > 1:
            svg.polyline(pts, color)
        for x, y in pts:
            svg.circle(x, y, 5, color)
        entry_w = 30 + text_width(s.label) + 24
        if legend_x + entry_w > f.right:
            legend_x, legend_y = f.left, legend_y + 22
        svg.line(legend_x, legend_y + 7, legend_x + 20, legend_y + 7, color, 3)
        svg.text(legend_x + 28, legend_y + 12, s.label)
        legend_x += entry_w
    return legend_x, legend_y


def render(plot: Plot, width: int = 900, height: int = 560) -> str:
    svg = Svg(width, height)
    f, y_step = _frame(plot, width, height)
    _axes(svg, plot, f, y_step)
    legend_x, legend_y = _series_and_legend(svg, plot, f)
    for x0 in plot.failed:
        svg.cross(f.px(x0), f.py(0) - 8, 7, RED)
    if plot.failed:
        svg.cross(legend_x + 8, legend_y + 7, 6, RED)
        svg.text(legend_x + 28, legend_y + 12, plot.failed_label, RED)
    if plot.highlight:
        svg.circle(f.px(plot.highlight[0]), f.py(plot.highlight[1]), 12, BLACK, ring=True)
        if plot.highlight_label:
            svg.text(f.left, legend_y + 38, plot.highlight_label)
    return svg.document(plot.title)
