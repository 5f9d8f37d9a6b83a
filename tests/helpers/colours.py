"""Colour arithmetic for theme tests: WCAG luminance and contrast ratios, alpha compositing."""

from __future__ import annotations

from PySide6.QtGui import QColor

Rgb = tuple[float, float, float]


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def over(top: QColor, bottom: QColor) -> QColor:
    """``top`` (translucent) painted over opaque ``bottom``, as QPainter blends (in sRGB)."""
    alpha = top.alphaF()
    return QColor.fromRgbF(
        *(t * alpha + b * (1 - alpha) for t, b in zip(rgb(top), rgb(bottom), strict=True))
    )


def rgb(colour: QColor) -> Rgb:
    """The sRGB channels of ``colour``, 0 to 1."""
    return (colour.redF(), colour.greenF(), colour.blueF())


def luminance(colour: QColor) -> float:
    """WCAG 2 relative luminance of an opaque sRGB colour."""
    r, g, b = (to_linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def to_linear(channel: float) -> float:
    """An sRGB channel (0 to 1) made linear, as WCAG and the colour-vision matrices want it."""
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4
