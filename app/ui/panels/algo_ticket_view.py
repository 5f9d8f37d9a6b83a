"""What the algo ticket writes: the preview as rich text, and the spec as its confirmation lists
it (every field that is not a default, in words and units: what Send submits, exactly)."""

from __future__ import annotations

import html
from datetime import datetime
from decimal import Decimal

from app.domain import format_timestamp
from app.domain.display import Precision
from app.services.algos.preview import AlgoPreview, touch_name
from app.services.algos.specs import AlgoSpec
from app.ui.palette import current_palette

_DEFAULTS = AlgoSpec("twap", "BTC/USD", "buy", Decimal(1))


#: Each field the confirmation lists: its label and how its value reads (the spec's own
#: value, with its unit; the quote asset for prices).
FIELD_WORDS: tuple[tuple[str, str, str], ...] = (
    ("price_limit", "Price limit", "price"),
    ("collar_bps", "Collar", "bps"),
    ("child_seconds", "A marketable child lasts", "s"),
    ("start_at", "Starts at", "time"),
    ("duration_seconds", "Duration", "s"),
    ("slices", "Slices", ""),
    ("randomise", "Randomise each interval by", "share"),
    ("participation", "At most, of the size shown", "share"),
    ("display", "Clip size", "amount"),
    ("trigger", "Trigger", "price"),
    ("trigger_ref", "Trigger watches", "ref"),
    ("trail_bps", "Trail", "bps"),
    ("limit_price", "Limit", "price"),
    ("rest_seconds", "A resting child lasts", "s"),
    ("take_profit", "Take-profit at", "price"),
    ("stop_loss", "Stop at", "price"),
    ("deadline", "Give up at", "time"),
    ("retry_seconds", "Try again every", "s"),
)


def spec_lines(spec: AlgoSpec) -> list[str]:
    """The spec as the confirmation shows it — every field that is not a default, in words
    and units: what Send submits, exactly."""
    lines = [
        f"Algo: {spec.info.label}",
        f"Pair: {spec.pair}",
        f"Side: {'Buy' if spec.side == 'buy' else 'Sell'}",
        f"Amount: {spec.amount} {spec.source} ({'to spend' if spec.side == 'buy' else 'to sell'})",
    ]
    for name, label, unit in FIELD_WORDS:
        value = getattr(spec, name)
        if name in ("collar_bps", "child_seconds") or value != getattr(_DEFAULTS, name):
            lines.append(f"{label}: {_reads(spec, value, unit)}")
    return lines


def _reads(spec: AlgoSpec, value: object, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "price":
        return f"{value} {spec.pair_side.pair.quote} per {spec.pair_side.pair.base}"
    if unit == "amount":
        return f"{value} {spec.source}"
    if unit == "share" and isinstance(value, Decimal):
        return f"{value * 100} %"
    if unit == "time" and isinstance(value, datetime):
        return f"{format_timestamp(value)} (server time)"
    if unit == "ref":
        return "the mid" if value == "mid" else f"the {touch_name(spec)}"
    return f"{value} {unit}".strip()


def describe(spec: AlgoSpec) -> str:
    verb = "Buy" if spec.side == "buy" else "Sell"
    base = spec.pair_side.pair.base
    return f"{spec.info.label}: {verb} {base} on {spec.pair} with {spec.amount} {spec.source}"


def preview_html(shown: AlgoPreview, precision: Precision) -> str:
    spec = shown.spec
    lines: list[str] = []
    if shown.received is not None and shown.touch is not None:
        received = shown.received
        line = (
            f"≈ {precision.amount(received.value, received.asset)} {received.asset} at the "
            f"{touch_name(spec)} {precision.price_text(shown.touch, spec.pair)}"
        )
        if shown.received_at_limit is not None:
            least = shown.received_at_limit
            line += f" (at least {precision.amount(least.value, least.asset)} within the collar)"
        lines.append(html.escape(line))
    else:
        lines.append(html.escape(f"No price for {spec.pair} yet"))
    lines += _slice_lines(shown, precision)
    if shown.trigger:
        lines.append(html.escape(shown.trigger))
    lines += _after_lines(shown, precision)
    return "<br>".join(lines)


def _slice_lines(shown: AlgoPreview, precision: Precision) -> list[str]:
    spec = shown.spec
    lines: list[str] = []
    if shown.slices:
        count = len(shown.slices)
        lines.append(f"<b>{count} {'child' if count == 1 else 'children'}</b>:")
        for item in shown.listed_slices():
            if item is None:
                lines.append("&nbsp;&nbsp;…")
                continue
            when = "" if item.at is None else f" at {item.at.astimezone().strftime('%H:%M:%S')}"
            size = precision.exact(item.size, spec.source)
            lines.append(html.escape(f"  #{item.number}: {size} {spec.source}{when}"))
        if spec.kind == "clip":
            lines.append(html.escape("each after the one before it has filled"))
    return lines


def _after_lines(shown: AlgoPreview, precision: Precision) -> list[str]:
    """The what-if of the whole parent as one order, and the checks' warnings."""
    lines: list[str] = []
    after = shown.what_if
    if after is not None:
        for asset in (after.source, after.destination):
            if asset.funds_after is not None:
                lines.append(
                    html.escape(
                        f"{asset.asset} free: {precision.amount(asset.funds, asset.asset)}"
                        f" → {precision.amount(asset.funds_after, asset.asset)}"
                    )
                )
        if after.refusal:
            colour = current_palette().error.name()
            lines.append(f"<span style='color:{colour}'>{html.escape(after.refusal)}</span>")
    warning = current_palette().warning.name()
    for check in shown.checks:
        lines.append(f"<span style='color:{warning}'>⚠ {html.escape(check.message)}</span>")
    return lines


# -- sending --------------------------------------------------------------------------------
