"""A line plot as PNG without plotting libraries: a raster canvas, a 5x7 bitmap font, zlib for the encoding.

The images carry neither matplotlib nor (without torchvision) Pillow; this draws what the DataLoader advisor
needs (axes, ticks, labelled series, markers) with the standard library only.
"""
from __future__ import annotations

import itertools
import math
import os
import struct
import tempfile
import zlib
from dataclasses import dataclass, field

Color = tuple[int, int, int]
WHITE, BLACK, GREY, LIGHT = (255, 255, 255), (0, 0, 0), (120, 120, 120), (225, 225, 225)
PALETTE: list[Color] = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (148, 103, 189), (140, 86, 75), (23, 190, 207)]
RED: Color = (214, 39, 40)

# 5x7 glyphs, one int per row, bit 4 = leftmost column. Lower case is drawn as upper case.
FONT: dict[str, tuple[int, ...]] = {
    " ": (0, 0, 0, 0, 0, 0, 0),
    "0": (14, 17, 19, 21, 25, 17, 14), "1": (4, 12, 4, 4, 4, 4, 14), "2": (14, 17, 1, 2, 4, 8, 31),
    "3": (31, 2, 4, 2, 1, 17, 14), "4": (2, 6, 10, 18, 31, 2, 2), "5": (31, 16, 30, 1, 1, 17, 14),
    "6": (6, 8, 16, 30, 17, 17, 14), "7": (31, 1, 2, 4, 8, 8, 8), "8": (14, 17, 17, 14, 17, 17, 14),
    "9": (14, 17, 17, 15, 1, 2, 12),
    "A": (14, 17, 17, 31, 17, 17, 17), "B": (30, 17, 17, 30, 17, 17, 30), "C": (14, 17, 16, 16, 16, 17, 14),
    "D": (28, 18, 17, 17, 17, 18, 28), "E": (31, 16, 16, 30, 16, 16, 31), "F": (31, 16, 16, 30, 16, 16, 16),
    "G": (14, 17, 16, 23, 17, 17, 15), "H": (17, 17, 17, 31, 17, 17, 17), "I": (14, 4, 4, 4, 4, 4, 14),
    "J": (7, 2, 2, 2, 2, 18, 12), "K": (17, 18, 20, 24, 20, 18, 17), "L": (16, 16, 16, 16, 16, 16, 31),
    "M": (17, 27, 21, 21, 17, 17, 17), "N": (17, 17, 25, 21, 19, 17, 17), "O": (14, 17, 17, 17, 17, 17, 14),
    "P": (30, 17, 17, 30, 16, 16, 16), "Q": (14, 17, 17, 17, 21, 18, 13), "R": (30, 17, 17, 30, 20, 18, 17),
    "S": (15, 16, 16, 14, 1, 1, 30), "T": (31, 4, 4, 4, 4, 4, 4), "U": (17, 17, 17, 17, 17, 17, 14),
    "V": (17, 17, 17, 17, 17, 10, 4), "W": (17, 17, 17, 21, 21, 21, 10), "X": (17, 17, 10, 4, 10, 17, 17),
    "Y": (17, 17, 17, 10, 4, 4, 4), "Z": (31, 1, 2, 4, 8, 16, 31),
    ".": (0, 0, 0, 0, 0, 12, 12), ",": (0, 0, 0, 0, 12, 4, 8), ":": (0, 12, 12, 0, 12, 12, 0),
    "/": (1, 1, 2, 4, 8, 16, 16), "=": (0, 0, 31, 0, 31, 0, 0), "-": (0, 0, 0, 31, 0, 0, 0),
    "+": (0, 4, 4, 31, 4, 4, 0), "(": (2, 4, 8, 8, 8, 4, 2), ")": (8, 4, 2, 2, 2, 4, 8),
    "%": (24, 25, 2, 4, 8, 19, 3), "*": (0, 4, 21, 14, 21, 4, 0), "_": (0, 0, 0, 0, 0, 0, 31),
    "?": (14, 17, 1, 2, 4, 0, 4), "'": (4, 4, 8, 0, 0, 0, 0), "<": (2, 4, 8, 16, 8, 4, 2),
    ">": (8, 4, 2, 1, 2, 4, 8), "[": (14, 8, 8, 8, 8, 8, 14), "]": (14, 2, 2, 2, 2, 2, 14),
}


class Canvas:
    def __init__(self, width: int, height: int, background: Color = WHITE) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def set(self, x: int, y: int, color: Color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            i = (y * self.width + x) * 3
            self.pixels[i:i + 3] = bytes(color)

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        for y in range(max(0, min(y0, y1)), min(self.height, max(y0, y1) + 1)):
            for x in range(max(0, min(x0, x1)), min(self.width, max(x0, x1) + 1)):
                self.set(x, y, color)

    def line(self, x0: int, y0: int, x1: int, y1: int, color: Color, width: int = 1) -> None:
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        half = width // 2
        for s in range(steps + 1):
            x = round(x0 + (x1 - x0) * s / steps)
            y = round(y0 + (y1 - y0) * s / steps)
            self.rect(x - half, y - half, x - half + width - 1, y - half + width - 1, color)

    def disc(self, cx: int, cy: int, r: int, color: Color, ring: bool = False) -> None:
        for y in range(cy - r, cy + r + 1):
            for x in range(cx - r, cx + r + 1):
                d = math.hypot(x - cx, y - cy)
                if (r - 1.5 <= d <= r) if ring else d <= r:
                    self.set(x, y, color)

    def cross(self, cx: int, cy: int, r: int, color: Color) -> None:
        self.line(cx - r, cy - r, cx + r, cy + r, color, 2)
        self.line(cx - r, cy + r, cx + r, cy - r, color, 2)

    def text(self, x: int, y: int, text: str, color: Color = BLACK, scale: int = 2, vertical: bool = False) -> None:
        """Draw text with its top-left corner at (x, y); vertical text reads bottom to top from (x, y)."""
        for n, char in enumerate(text):
            glyph = FONT.get(char.upper(), FONT["?"])
            for row, bits in enumerate(glyph):
                for col in range(5):
                    if bits & (1 << (4 - col)):
                        for dy in range(scale):
                            for dx in range(scale):
                                gx, gy = col * scale + dx, row * scale + dy
                                if vertical:
                                    self.set(x + gy, y - n * 6 * scale - gx, color)
                                else:
                                    self.set(x + n * 6 * scale + gx, y + gy, color)

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(self.pixels[y * self.width * 3:(y + 1) * self.width * 3])
                       for y in range(self.height))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def text_width(text: str, scale: int = 2) -> int:
    return len(text) * 6 * scale


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]
    line: bool = True
    color: Color | None = None


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


def _nice_step(span: float, ticks: int = 5) -> float:
    raw = span / max(ticks, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _fmt(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def render(plot: Plot, width: int = 900, height: int = 560) -> bytes:
    canvas = Canvas(width, height)
    left, right, top, bottom = 110, width - 30, 60, height - 150
    xs = [x for s in plot.series for x, _ in s.points] + plot.failed or [0.0, 1.0]
    ys = [y for s in plot.series for _, y in s.points] or [1.0]
    x_min, x_max = min(xs), max(max(xs), min(xs) + 1)
    pad = (x_max - x_min) * 0.04
    y_step = _nice_step(max(ys) * 1.1 or 1.0)
    y_max = y_step * math.ceil(max(ys) * 1.1 / y_step) if max(ys) > 0 else 1.0

    pad_px = round(pad / (x_max - x_min + 2 * pad) * (right - left)) if pad else 0

    def px(x: float) -> int:
        return round(left + pad_px + (x - x_min) / (x_max - x_min) * (right - left - 2 * pad_px))

    def py(y: float) -> int:
        return round(bottom - y / y_max * (bottom - top))

    canvas.text((width - text_width(plot.title)) // 2, 18, plot.title)
    y = 0.0
    while y <= y_max + 1e-9:
        canvas.line(left, py(y), right, py(y), LIGHT)
        label = _fmt(y)
        canvas.text(left - 10 - text_width(label), py(y) - 7, label, GREY)
        y += y_step
    x_step = max(1.0, _nice_step(x_max - x_min, 10)) if x_max - x_min > 10 else 1.0
    x = x_min
    while x <= x_max + 1e-9:
        canvas.line(px(x), bottom, px(x), bottom + 6, BLACK)
        label = _fmt(x)
        canvas.text(px(x) - text_width(label) // 2, bottom + 12, label, GREY)
        x += x_step
    canvas.line(left, bottom, right, bottom, BLACK, 2)
    canvas.line(left, top, left, bottom, BLACK, 2)
    canvas.text((left + right - text_width(plot.xlabel)) // 2, bottom + 36, plot.xlabel)
    canvas.text(20, (top + bottom + text_width(plot.ylabel)) // 2, plot.ylabel, vertical=True)

    legend_y = bottom + 64
    legend_x = left
    for n, s in enumerate(plot.series):
        color = s.color or PALETTE[n % len(PALETTE)]
        pts = sorted(s.points)
        if s.line:
            for (x0, y0), (x1, y1) in itertools.pairwise(pts):
                canvas.line(px(x0), py(y0), px(x1), py(y1), color, 3)
        for x0, y0 in pts:
            canvas.disc(px(x0), py(y0), 5, color)
        entry_w = 30 + text_width(s.label) + 24
        if legend_x + entry_w > right:
            legend_x, legend_y = left, legend_y + 22
        canvas.line(legend_x, legend_y + 7, legend_x + 20, legend_y + 7, color, 3)
        canvas.text(legend_x + 28, legend_y, s.label)
        legend_x += entry_w
    for x0 in plot.failed:
        canvas.cross(px(x0), py(0) - 8, 7, RED)
    if plot.failed:
        canvas.cross(legend_x + 8, legend_y + 7, 6, RED)
        canvas.text(legend_x + 28, legend_y, plot.failed_label, RED)
        legend_x += 30 + text_width(plot.failed_label) + 24
    if plot.highlight:
        hx, hy = px(plot.highlight[0]), py(plot.highlight[1])
        canvas.disc(hx, hy, 12, BLACK, ring=True)
        canvas.disc(hx, hy, 11, BLACK, ring=True)
        if plot.highlight_label:
            canvas.text(left, legend_y + 26, plot.highlight_label)
    return canvas.png()


def write_atomic(path: str, data: bytes) -> None:
    """Write through a temporary file in the same folder, then rename: readers never see half a file."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)     # mkstemp makes it 0600; a report is as readable as any new file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
