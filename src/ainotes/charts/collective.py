"""Pictures of a collective: hand-written SVG frames, an animated SVG, a stepper.

Every picture is built from a :class:`ainotes.core.collectives.CollectiveRun`:
each rank is a row (its name on the left, ``root`` under the root's name),
its chunk positions are boxes coloured by the rank the data came from, a
summed chunk is a neutral box with its parts spelled out and a stripe of the
contributing ranks' colours, a position outside the rank's defined input or
output is a dashed empty box, and a transfer is an arrow from a source chunk
that stays visible.

Colours live in CSS classes and custom properties (``assets/collectives.css``,
whose ``svg:begin``/``svg:end`` block is embedded in standalone SVGs), so one
SVG follows light and dark: ``prefers-color-scheme`` when standalone,
Material's ``data-md-color-scheme`` when inline in the site.

Every user-visible string (rank names, titles, captions) is escaped with
:func:`html.escape`.
"""

from __future__ import annotations

import copy
import html
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from ainotes.base import scripts
from ainotes.base.errors import InputError
from ainotes.charts.frame import HEIGHT_POSTER_JS
from ainotes.core.collectives import (
    MAX_RANKS,
    MIN_RANKS,
    RANK_LETTERS,
    RING_OPS,
    Chunk,
    CollectiveRun,
    Frame,
    Transfer,
    bus_factor_formula,
    bus_factor_fraction,
    simulate,
)

# Geometry, in SVG user units. A page draws every frame at its own size, one unit to one CSS
# pixel, so text keeps its 11 px or more: a 4-rank frame (326 units) fits a 360 px phone's
# column, an 8-rank ring (648) a desk's; a wider frame scrolls sideways in its box rather
# than shrink.
PAD = 8
LABEL_W = 50
BOX_W = 52
BOX_H = 34
ROW_PITCH = 44
HEADER_H = 16
TITLE_H = 22
CAPTION_LINE_H = 16
CAPTION_LINES = 2
CAPTION_CHARS = 56  # characters per caption line at 12.5 px in a 4-rank frame
NAME_CHARS = 7  # longer rank names are shortened in the picture (full in <desc>)
FULL_SUM_PARTS = 4  # sums of more parts are written "Σ a0…h0"
RING_W = 58  # the ring schedule's column: chunks each rank has sent to the next ("14 × S/8")
GAP_MAX = 14  # the widest gap right of a chunk column, where same-column arcs run

# Animation timing (seconds): each step holds, the final state holds longer.
STEP_S = 2.4
FINAL_S = 4.0
FADE_S = 0.3

_CHART_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


@cache
def _stylesheet() -> str:
    return resources.files("ainotes").joinpath("assets/collectives.css").read_text(encoding="utf-8")


@cache
def _javascript() -> str:
    return resources.files("ainotes").joinpath("assets/collectives.js").read_text(encoding="utf-8")


def _minify_css(css: str) -> str:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"\s+", " ", css)
    css = re.sub(r"\s*([{};,>+])\s*", r"\1", css)
    css = re.sub(r":\s+", ":", css)
    return css.replace(";}", "}").strip()


@cache
def svg_css() -> str:
    """The SVG block of collectives.css, minified, for standalone SVGs."""
    match = re.search(r"/\* svg:begin \*/(.*?)/\* svg:end \*/", _stylesheet(), flags=re.S)
    if match is None:  # pragma: no cover - guards the asset's markers
        raise RuntimeError("assets/collectives.css lacks its svg:begin/svg:end block")
    return _minify_css(match.group(1))


# --- layout ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    ranks: int
    ring: bool = False

    @property
    def col_gap(self) -> float:
        # Room right of each column for the arcs of same-column transfers.
        return min(10 + 4 * (self.ranks - 1), GAP_MAX)

    def arc_apex(self, span: int) -> float:
        """How far right of its column an arc over ``span`` rows reaches: 4 units a row up to 4
        ranks, closer together beyond, so the longest stays inside the gap."""
        step = min(4.0, (self.col_gap - 6) / max(1, self.ranks - 1))
        return 4 + step * span

    @property
    def width(self) -> float:
        return self.ring_x + (RING_W if self.ring else 0) + PAD - 4

    @property
    def ring_x(self) -> float:
        """Where the ring column starts: right of the last chunk column and its arcs."""
        return PAD + LABEL_W + self.ranks * (BOX_W + self.col_gap)

    @property
    def grid_height(self) -> float:
        return HEADER_H + self.ranks * ROW_PITCH - (ROW_PITCH - BOX_H)

    def box_x(self, chunk: int) -> float:
        return PAD + LABEL_W + chunk * (BOX_W + self.col_gap)

    def box_y(self, rank: int, top: float) -> float:
        return top + HEADER_H + rank * ROW_PITCH

    def center(self, rank: int, chunk: int, top: float) -> tuple[float, float]:
        return self.box_x(chunk) + BOX_W / 2, self.box_y(rank, top) + BOX_H / 2


def _layout(run: CollectiveRun) -> _Layout:
    return _Layout(run.ranks, ring=run.schedule == "ring")


def _n(value: float) -> str:
    """A coordinate, compactly: integers without a decimal point."""
    rounded = round(value, 1)
    return str(int(rounded)) if rounded == int(rounded) else str(rounded)


# --- labels and descriptions -------------------------------------------------------


def chunk_box_label(chunk: Chunk) -> tuple[str, ...]:
    """Text lines inside a chunk's box: ``a0``; ``a0+b0+`` / ``c0+d0``; ``Σ a0…h0``; ``Σ g0…c0`` for a
    ring's running sum that wrapped around from g0 through h0 to a0, b0 and c0."""
    if not chunk.is_sum:
        return (chunk.label,)
    parts = [f"{RANK_LETTERS[r]}{chunk.index}" for r in chunk.sources]
    if len(parts) > FULL_SUM_PARTS:
        contiguous = list(chunk.sources) == list(range(chunk.sources[0], chunk.sources[-1] + 1))
        if contiguous:
            return (f"Σ {parts[0]}…{parts[-1]}",)
        # A ring's running sum wraps around past the last rank: name it from where it started.
        gaps = [i for i in range(1, len(chunk.sources)) if chunk.sources[i] != chunk.sources[i - 1] + 1]
        if len(gaps) == 1 and chunk.sources[0] == 0:
            return (f"Σ {parts[gaps[0]]}…{parts[gaps[0] - 1]}",)
        return ("Σ " + "".join(RANK_LETTERS[r] for r in chunk.sources), f"chunk {chunk.index}")
    if len(parts) <= 2:
        return ("+".join(parts),)
    half = (len(parts) + 1) // 2
    return ("+".join(parts[:half]) + "+", "+".join(parts[half:]))


def _format_value(value: int | float) -> str:
    return str(value) if isinstance(value, int) else format(value, ".6g")


def _holdings_text(run: CollectiveRun, frame: Frame) -> str:
    sentences = []
    for rank, row in enumerate(frame.buffers):
        held = [f"{c.label} = {_format_value(c.value)}" for c in row if c is not None]
        who = run.rank_names[rank] + (" (root)" if rank == run.root else "")
        sentences.append(f"{who} holds {', '.join(held)}." if held else f"{who} holds nothing.")
    if frame.transfers:
        sends = [
            f"{t.label} from {run.rank_names[t.src]} to {run.rank_names[t.dst]}"
            + (" (added)" if t.combine == "sum" else "")
            for t in frame.transfers
        ]
        sentences.append("Sent: " + "; ".join(sends) + ".")
    return " ".join(sentences)


def frame_description(run: CollectiveRun, index: int) -> str:
    """Plain text for a frame's <desc>: its caption, what each rank holds, what is sent."""
    frame = run.frames[index]
    return f"{frame.caption} {_holdings_text(run, frame)}"


def _short_name(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def _wrap(text: str, width: int, lines: int) -> list[str]:
    words, out, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    out.append(line)
    if len(out) > lines:
        out = [*out[: lines - 1], " ".join(out[lines - 1 :])]
    return out


# --- SVG pieces --------------------------------------------------------------------


def _defs(run: CollectiveRun, pid: str) -> str:
    """Arrowhead marker and one stripe gradient per set of summed ranks."""
    parts = [
        f'<marker id="{pid}a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6"'
        f' orient="auto"><path class="ah" d="M0 1L10 5L0 9z"/></marker>'
    ]
    for sources in sorted(_sum_sets(run)):
        stops = []
        for i, rank in enumerate(sources):
            lo, hi = i / len(sources), (i + 1) / len(sources)
            stops.append(f'<stop offset="{lo:.3g}" class="c{rank}"/><stop offset="{hi:.3g}" class="c{rank}"/>')
        parts.append(f'<linearGradient id="{pid}g{_set_key(sources)}">{"".join(stops)}</linearGradient>')
    return "<defs>" + "".join(parts) + "</defs>"


def _set_key(sources: tuple[int, ...]) -> str:
    return "".join(str(r) for r in sources)


def _sum_sets(run: CollectiveRun) -> set[tuple[int, ...]]:
    return {
        chunk.sources
        for frame in run.frames
        for row in frame.buffers
        for chunk in row
        if chunk is not None and chunk.is_sum
    }


def _box(layout: _Layout, rank: int, position: int, chunk: Chunk | None, top: float, pid: str) -> str:
    x, y = layout.box_x(position), layout.box_y(rank, top)
    rect = f'x="{_n(x)}" y="{_n(y)}" width="{BOX_W}" height="{BOX_H}" rx="4"'
    if chunk is None:
        return f'<rect class="n" {rect}/>'
    lines = chunk_box_label(chunk)
    cx = _n(x + BOX_W / 2)
    lift = 2 if chunk.is_sum else 0
    if len(lines) == 1:
        text = f'<text x="{cx}" y="{_n(y + BOX_H / 2 + 4 - lift)}">{_esc(lines[0])}</text>'
    else:
        first = y + BOX_H / 2 - 2.5 - lift
        text = (
            f'<text x="{cx}" y="{_n(first)}">{_esc(lines[0])}'
            f'<tspan x="{cx}" dy="12">{_esc(lines[1])}</tspan></text>'
        )
    if not chunk.is_sum:
        return f'<rect class="k c{chunk.sources[0]}" {rect}/>{text}'
    stripe = (
        f'<rect x="{_n(x + 4)}" y="{_n(y + BOX_H - 6)}" width="{BOX_W - 8}" height="3"'
        f' fill="url(#{pid}g{_set_key(chunk.sources)})"/>'
    )
    return f'<rect class="k s" {rect}/>{text}{stripe}'


def _arrow(layout: _Layout, transfer: Transfer, top: float, pid: str) -> str:
    marker = f' marker-end="url(#{pid}a)"'
    if transfer.src_chunk == transfer.dst_chunk:
        # Same column: an arc in the gap right of the column, deeper for longer spans,
        # leaving from the lower (upper) half of the source when going down (up).
        down = transfer.dst > transfer.src
        span = abs(transfer.dst - transfer.src)
        right = layout.box_x(transfer.src_chunk) + BOX_W
        _, src_y = layout.center(transfer.src, transfer.src_chunk, top)
        _, dst_y = layout.center(transfer.dst, transfer.dst_chunk, top)
        # Endpoints move away from the box middle with the span, so that arrowheads
        # arriving from several ranks do not sit on top of each other.
        offset = min(4 + 3 * (span - 1), BOX_H / 2 - 4)
        sy, ey = (src_y + offset, dst_y - offset) if down else (src_y - offset, dst_y + offset)
        bulge = 2 * layout.arc_apex(span)  # control offset: the arc's apex sits at half of it
        d = f"M{_n(right)} {_n(sy)}Q{_n(right + bulge)} {_n((sy + ey) / 2)} {_n(right + 1)} {_n(ey)}"
        return f'<path class="t" d="{d}"{marker}/>'
    # Different columns (all-to-all): from box edge to box edge, bent to the right of travel
    # so that the two directions between a pair of boxes stay apart.
    sx, sy = layout.center(transfer.src, transfer.src_chunk, top)
    dx, dy = layout.center(transfer.dst, transfer.dst_chunk, top)
    vx, vy = dx - sx, dy - sy
    x0, y0 = _edge_point(sx, sy, vx, vy)
    x1, y1 = _edge_point(dx, dy, -vx, -vy)
    length = (vx * vx + vy * vy) ** 0.5
    bend = 0.16 * length
    qx, qy = (x0 + x1) / 2 - vy / length * bend, (y0 + y1) / 2 + vx / length * bend
    d = f"M{_n(x0)} {_n(y0)}Q{_n(qx)} {_n(qy)} {_n(x1)} {_n(y1)}"
    return f'<path class="t" d="{d}"{marker}/>'


def _edge_point(cx: float, cy: float, vx: float, vy: float) -> tuple[float, float]:
    """Where the ray from a box's centre along (vx, vy) leaves the box."""
    scale = min(
        (BOX_W / 2) / abs(vx) if vx else float("inf"),
        (BOX_H / 2) / abs(vy) if vy else float("inf"),
    )
    return cx + vx * scale, cy + vy * scale


def _header_and_names(run: CollectiveRun, layout: _Layout, top: float) -> str:
    parts = [f'<text class="m" x="{PAD}" y="{_n(top + 11)}">chunk</text>']
    for c in range(run.ranks):
        parts.append(
            f'<text class="m" x="{_n(layout.box_x(c) + BOX_W / 2)}" y="{_n(top + 11)}"'
            f' text-anchor="middle">{c}</text>'
        )
    if layout.ring:
        parts.append(f'<text class="m" x="{_n(layout.ring_x)}" y="{_n(top + 11)}">sent on</text>')
    for r, name in enumerate(run.rank_names):
        y = layout.box_y(r, top) + BOX_H / 2
        if r == run.root:
            parts.append(f'<text x="{PAD}" y="{_n(y - 2)}">{_esc(_short_name(name))}</text>')
            parts.append(f'<text class="rt" x="{PAD}" y="{_n(y + 11)}">root</text>')
        else:
            parts.append(f'<text x="{PAD}" y="{_n(y + 4)}">{_esc(_short_name(name))}</text>')
    return "".join(parts)


def _frame_body(run: CollectiveRun, frame: Frame, layout: _Layout, top: float, pid: str) -> str:
    boxes = [
        _box(layout, r, c, chunk, top, pid)
        for r, row in enumerate(frame.buffers)
        for c, chunk in enumerate(row)
    ]
    arrows = [_arrow(layout, t, top, pid) for t in frame.transfers]
    return "".join(boxes) + "".join(arrows) + _ring_counts(run, frame, layout, top)


def ring_count_label(chunks: int, ranks: int) -> str:
    """``"3 × S/4"``: chunks of S/n bytes a rank has sent to the next one."""
    return f"{chunks} × S/{ranks}"


def _ring_counts(run: CollectiveRun, frame: Frame, layout: _Layout, top: float) -> str:
    if not layout.ring or frame.link_chunks is None:
        return ""
    return "".join(
        f'<text class="lc" x="{_n(layout.ring_x)}" y="{_n(layout.box_y(r, top) + BOX_H / 2 + 4)}">'
        f"{_esc(ring_count_label(k, run.ranks))}</text>"
        for r, k in enumerate(frame.link_chunks)
    )


def _caption_text(lines: list[str], top: float) -> str:
    first, *rest = lines
    spans = "".join(f'<tspan x="{PAD}" dy="{CAPTION_LINE_H}">{_esc(line)}</tspan>' for line in rest)
    return f'<text class="cap" x="{PAD}" y="{_n(top + 12)}">{_esc(first)}{spans}</text>'


def _step_caption(run: CollectiveRun, index: int) -> str:
    return f"{index + 1}/{len(run.frames)} · {run.frames[index].caption}"


def _title(run: CollectiveRun, title: str | None) -> str:
    if title is None:
        return run.title
    if not isinstance(title, str) or not title.strip():
        raise InputError(f"'title' must be a non-empty string: {title!r}")
    return title


# --- public -----------------------------------------------------------------------


def frame_svg(run: CollectiveRun, index: int, *, id_prefix: str = "f", title: str | None = None,
              standalone: bool = True) -> str:
    """One frame as SVG, with <title> and <desc>.

    ``standalone`` embeds the colour stylesheet (for a file or an <img>);
    inline in a page that loads collectives.css, leave it out. ``id_prefix``
    keeps marker and gradient ids unique when several frames share a page.
    """
    frame = run.frames[index]
    layout = _layout(run)
    name = _title(run, title)
    pid = _check_id(id_prefix, "id_prefix")
    height = PAD + layout.grid_height + PAD
    style = f"<style>{svg_css()}</style>" if standalone else ""
    background = f'<rect class="bg" width="{_n(layout.width)}" height="{_n(height)}"/>' if standalone else ""
    size = f' width="{_n(layout.width)}" height="{_n(height)}"'  # drawn at its own size, in a page too
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ainotes-coll" viewBox="0 0 {_n(layout.width)} {_n(height)}"'
        f'{size} role="img" aria-labelledby="{pid}t {pid}d">'
        f'<title id="{pid}t">{_esc(f"{name}, step {index + 1} of {len(run.frames)}")}</title>'
        f'<desc id="{pid}d">{_esc(frame_description(run, index))}</desc>'
        f"{style}{_defs(run, pid)}{background}"
        f"{_header_and_names(run, layout, PAD)}{_frame_body(run, frame, layout, PAD, pid)}</svg>"
    )


def animated_svg(run: CollectiveRun, *, title: str | None = None) -> str:
    """One standalone SVG that plays the frames with CSS keyframes, no script.

    Top panel: the state before, always visible. Bottom panel: the remaining
    frames in turn, fading between them, holding the final state longer,
    looping. With ``prefers-reduced-motion: reduce`` nothing moves: the bottom
    panel shows the final state, so the picture reads before → after.
    Works opened alone and through <img> or <object>.
    """
    name = _title(run, title)
    layout = _layout(run)
    pid = "x"
    panel_h = CAPTION_LINES * CAPTION_LINE_H + 6 + layout.grid_height
    top_a = TITLE_H
    top_b = top_a + panel_h + 14
    height = top_b + panel_h + PAD
    width = layout.width
    chars = max(CAPTION_CHARS, int(CAPTION_CHARS * width / _Layout(4).width))
    grid_a = top_a + CAPTION_LINES * CAPTION_LINE_H + 6
    grid_b = top_b + CAPTION_LINES * CAPTION_LINE_H + 6

    animated = run.frames[1:]
    frames_b = []
    for offset, frame in enumerate(animated):
        index = offset + 1
        last = " fz" if index == len(run.frames) - 1 else ""
        frames_b.append(
            f'<g class="f f{index}{last}"><title>{_esc(f"Step {index + 1} of {len(run.frames)}")}</title>'
            f"<desc>{_esc(frame_description(run, index))}</desc>"
            f"{_caption_text(_wrap(_step_caption(run, index), chars, CAPTION_LINES), top_b)}"
            f"{_frame_body(run, frame, layout, grid_b, pid)}</g>"
        )
    overall = " ".join(
        f"Step {i + 1}: {frame_description(run, i)}" for i in range(len(run.frames))
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ainotes-coll" viewBox="0 0 {_n(width)} {_n(height)}"'
        f' width="{_n(width)}" height="{_n(height)}" role="img" aria-labelledby="{pid}t {pid}d">'
        f'<title id="{pid}t">{_esc(name)}</title><desc id="{pid}d">{_esc(overall)}</desc>'
        f"<style>{svg_css()}{_animation_css(len(animated))}</style>{_defs(run, pid)}"
        f'<rect class="bg" width="{_n(width)}" height="{_n(height)}"/>'
        f'<text class="rt" x="{PAD}" y="15" style="font-size:13px">{_esc(name)}</text>'
        f'<g class="f0"><title>Step 1 of {len(run.frames)}</title><desc>{_esc(frame_description(run, 0))}</desc>'
        f"{_caption_text(_wrap(_step_caption(run, 0), chars, CAPTION_LINES), top_a)}"
        f"{_header_and_names(run, layout, grid_a)}{_frame_body(run, run.frames[0], layout, grid_a, pid)}</g>"
        f'<line class="sep" x1="{PAD}" x2="{_n(width - PAD)}" y1="{_n(top_b - 8)}" y2="{_n(top_b - 8)}"/>'
        f"{_header_and_names(run, layout, grid_b)}{''.join(frames_b)}</svg>"
    )


def _animation_css(count: int) -> str:
    """Keyframes showing frame i (1-based in the bottom panel) in its window of the loop."""
    durations = [STEP_S] * (count - 1) + [FINAL_S]
    total = sum(durations)
    rules = [f".f{{opacity:0;animation:{total:g}s linear infinite}}.fz{{opacity:1}}"]
    start = 0.0
    for i, duration in enumerate(durations, start=1):
        end = start + duration
        last = i == count
        if i == 1:
            # Fully shown at t = 0 (first paint, snapshots); fades back in as the loop closes.
            points = [(0.0, 1), (end, 1), (end + FADE_S, 0), (total - FADE_S, 0), (total, 1)]
        else:
            fade_out = total - FADE_S if last else end
            points = [(0.0, 0), (start, 0), (start + FADE_S, 1), (fade_out, 1), (min(fade_out + FADE_S, total), 0)]
            if points[-1][0] < total:
                points.append((total, 0))
        steps = "".join(f"{100 * t / total:.4g}%{{opacity:{o}}}" for t, o in points)
        rules.append(f".f{i}{{animation-name:k{i}}}@keyframes k{i}{{{steps}}}")
        start = end
    rules.append("@media (prefers-reduced-motion:reduce){.f{animation:none}}")
    return "".join(rules)


def stepper_html(run: CollectiveRun, chart_id: str, *, title: str | None = None, controls: bool = True) -> str:
    """In-page fragment: an ordered list of figures, one per frame.

    Without JavaScript every frame is visible in order, each SVG followed by
    its caption. ``assets/collectives.js`` turns each ``.ainotes-stepper`` into
    a stepper (previous, play/pause, next, "frame k of n", arrow keys, an
    aria-live caption). Needs ``assets/collectives.css`` on the page.

    With ``controls``, the fragment also carries every rank count's frames (2 to 8)
    and, for all-reduce, reduce-scatter and all-gather, the ring schedule's, as
    compact data (:func:`stepper_data`) in an inert ``<template>``; the script then
    offers a rank-count select and a schedule select and draws the chosen frames
    with the same geometry and classes as :func:`frame_svg`. A second template holds
    :func:`table_html` at every rank count, which the script puts in place of the
    table beside the stepper, so the table always describes the picture.
    """
    cid = _check_id(chart_id, "chart_id")
    name = _title(run, title)
    count = len(run.frames)
    items = []
    for i, frame in enumerate(run.frames):
        svg = frame_svg(run, i, id_prefix=f"{cid}-{i}-", title=name, standalone=False)
        items.append(
            f'<li class="ainotes-stepper-frame"><figure class="ainotes-stepper-figure">{svg}'
            f'<figcaption><span class="ainotes-step-no">Frame {i + 1} of {count}.</span> '
            f'<span class="ainotes-step-caption">{_esc(frame.caption)}</span></figcaption></figure></li>'
        )
    data = ""
    # Other rank counts get default names, so a run with its own names keeps its one picture.
    if controls and run.rank_names == tuple(f"rank {r}" for r in range(run.ranks)):
        root = run.root if run.root is not None else 0
        data = _stepper_templates(run.op, root, title, f"{run.schedule}-{run.ranks}")
    return (
        f'<div class="ainotes-coll ainotes-stepper" id="{cid}" role="region" aria-label="{_esc(name)}"'
        f' data-frames="{count}"><ol class="ainotes-stepper-frames">{"".join(items)}</ol>{data}</div>'
    )


@lru_cache(maxsize=256)
def _stepper_templates(op: str, root: int, title: str | None, initial: str) -> str:
    """The stepper's inert templates: its data (:func:`stepper_data`) and :func:`table_html` at
    every rank count (the schedule changes how the data moves, not what each rank holds before
    and after). The same for every chart of one op, root, title and opening picture, so they
    are drawn once a process."""
    data = _with_initial(_stepper_data(op, root, title), initial)
    tables = "".join(
        table_html(simulate(op, ranks, min(root, ranks - 1)), title=title) for ranks in range(MIN_RANKS, MAX_RANKS + 1)
    )
    return (f'<template class="ainotes-stepper-data">{scripts.script_json(data)}</template>'
            f'<template class="ainotes-stepper-tables">{tables}</template>')


def _chunk_code(chunk: Chunk | None) -> int | None:
    """A chunk as one integer: index × 256 + a bit per contributing rank (8 ranks at most)."""
    if chunk is None:
        return None
    return chunk.index * 256 + sum(1 << r for r in chunk.sources)


def _variant(run: CollectiveRun, title: str | None) -> dict:
    return {
        "title": title if title is not None else run.title,
        "ranks": run.ranks,
        "root": run.root,
        "schedule": run.schedule,
        "frames": [
            {
                "kind": frame.kind,
                "caption": frame.caption,
                "chunks": [[_chunk_code(c) for c in row] for row in frame.buffers],
                "transfers": [[t.src, t.dst, t.src_chunk, t.dst_chunk] for t in frame.transfers],
                "sent": list(frame.link_chunks) if frame.link_chunks is not None else None,
            }
            for frame in run.frames
        ],
    }


def stepper_data(run: CollectiveRun, *, title: str | None = None) -> dict:
    """What the stepper's controls can switch to: the op at every rank count from 2 to 8, in
    the logical schedule and (all-reduce, reduce-scatter, all-gather) the ring schedule, plus
    the geometry :func:`frame_svg` uses. A root beyond the rank count becomes the last rank.
    A ``title`` given by the author names every variant; else each has its run's default title.

    Each frame: ``kind``, ``caption``, ``chunks`` (rank × position: :func:`_chunk_code` or
    null), ``transfers`` ([src, dst, src position, dst position]) and ``sent`` (ring only).
    """
    data = _stepper_data(run.op, run.root if run.root is not None else 0, title)
    return copy.deepcopy(_with_initial(data, f"{run.schedule}-{run.ranks}"))


def _with_initial(data: dict, initial: str) -> dict:
    return {"op": data["op"], "initial": initial, "variants": data["variants"], "geometry": data["geometry"]}


@lru_cache(maxsize=256)
def _stepper_data(op: str, root: int, title: str | None) -> dict:
    # Shared: callers copy it or only read it.
    schedules = ("logical", "ring") if op in RING_OPS else ("logical",)
    variants = {
        f"{schedule}-{ranks}": _variant(simulate(op, ranks, min(root, ranks - 1), schedule=schedule), title)
        for schedule in schedules
        for ranks in range(MIN_RANKS, MAX_RANKS + 1)
    }
    return {
        "op": op,
        "variants": variants,
        "geometry": {"pad": PAD, "label_w": LABEL_W, "box_w": BOX_W, "box_h": BOX_H, "row_pitch": ROW_PITCH,
                     "header_h": HEADER_H, "ring_w": RING_W, "gap_max": GAP_MAX, "full_sum_parts": FULL_SUM_PARTS,
                     "name_chars": NAME_CHARS, "letters": RANK_LETTERS},
    }


def table_html(run: CollectiveRun, *, title: str | None = None) -> str:
    """Each rank's holdings before and after, then the ring cost and bus factor."""
    name = _title(run, title)
    rows = []
    for r in range(run.ranks):
        who = _esc(run.rank_names[r]) + (" (root)" if r == run.root else "")
        rows.append(
            f'<tr><th scope="row">{who}</th><td>{_holdings_cell(run.frames[0].buffers[r])}</td>'
            f"<td>{_holdings_cell(run.frames[-1].buffers[r])}</td></tr>"
        )
    factor = bus_factor_fraction(run.op, run.ranks)
    decimal = f"{float(factor):.4g}"
    exact = decimal if factor.denominator == 1 else f"{factor.numerator}/{factor.denominator} ({decimal})"
    formula = bus_factor_formula(run.op)
    formula_text = decimal if formula == decimal else f"{formula} = {decimal} at n = {run.ranks}"
    sender = {
        "all-to-all": f"Pairwise exchange: each rank sends {exact} × the tensor's bytes",
        "scatter": f"The root sends each shard directly: it sends {exact} × the tensor's bytes, the others nothing",
        "broadcast": f"Pipelined chain: each rank but the last forwards the tensor once, {exact} × its bytes",
        "reduce": f"Pipelined chain: each rank but the root sends its running sum once, {exact} × the tensor's bytes",
    }.get(run.op, f"Ring algorithm: each rank sends {exact} × the tensor's bytes")
    cost = f'<p class="ainotes-coll-cost">{sender}; bus factor {formula_text}.</p>'
    return (
        f'<div class="ainotes-coll ainotes-coll-table-wrap" data-ranks="{run.ranks}"><table class="ainotes-coll-table">'
        f"<caption>{_esc(name)}: what each rank holds</caption>"
        f'<thead><tr><th scope="col">rank</th><th scope="col">before</th><th scope="col">after</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{cost}</div>"
    )


def _holdings_cell(row: tuple[Chunk | None, ...]) -> str:
    cells = []
    for chunk in row:
        if chunk is None:
            cells.append('<span class="ainotes-chunk ainotes-chunk-null" title="not part of this rank\'s'
                         ' input or output">—</span>')
        else:
            cells.append(f'<span class="ainotes-chunk">{_esc(chunk.label)} = {_format_value(chunk.value)}</span>')
    return " ".join(cells)


def standalone_html(run: CollectiveRun, *, title: str | None = None) -> str:
    """A self-contained page: stylesheet and script inline, nothing loaded from outside."""
    name = _title(run, title)
    page_css = (
        ":root{color-scheme:light dark}"
        "body{margin:0 auto;max-width:44rem;padding:1rem;font:16px/1.5 system-ui,-apple-system,"
        '"Segoe UI",Roboto,sans-serif;background:#fff;color:#1f2328}'
        "@media (prefers-color-scheme:dark){body{background:#1e2129;color:#e6e8eb}}"
        "h1{font-size:1.35rem;margin:.2em 0 .6em}"
    )
    script = _javascript().replace("</", "<\\/")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(name)}</title><style>{page_css}{_minify_css(_stylesheet())}</style></head>"
        f"<body><main><h1>{_esc(name)}</h1>"
        f"{stepper_html(run, 'collective', title=title)}{table_html(run, title=name)}</main>"
        f"<script>{script}\n{HEIGHT_POSTER_JS}</script></body></html>\n"
    )


def _check_id(value: str, field: str) -> str:
    if not isinstance(value, str) or not _CHART_ID.match(value):
        raise InputError(f"'{field}' must be letters, digits, '-' and '_', not starting with '-' or '_': {value!r}")
    return value
