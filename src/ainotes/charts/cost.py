"""What a collective costs, as a chart: time against message size, one line per algorithm (altair → Vega-Lite).

Log-log axes from 1 kB to 10 GB. Every number in the data comes from the core
(:mod:`ainotes.core.collective_cost`): each algorithm's terms at each rank count the select offers
(latency rounds a and bandwidth multiple b, :func:`~ainotes.core.collective_cost.coefficients`), the links' α and B,
the marks (diamonds where the fastest algorithm changes, circles where the first algorithm (ring,
chain, pairwise, direct) takes as long as another), and the size where the first algorithm's latency
and bandwidth terms are equal (the shaded latency-bound regime lies left of it). The browser
only re-evaluates the formula the core states,

    t = a·α + b·S/B,    and for a pipelined chain  t = min over k of (p−2+k)·(α + S/(k·B)),

along a grid of sizes, as the reader switches primitive, rank count or link
(Vega-Lite params bound to three selects; the tests check the expression
against the core). The title follows the primitive select (an expression over the core's
titles); the caption below the chart follows all three, from sentences and figures the core
computed here for every state (:func:`caption_states`), which ``vega-charts.js`` puts in place.

The marks' labels go where :mod:`ainotes.charts.cost_labels` placed them at build time, per state and
plot size, so that no two texts meet; the y axis spans the whole decades it chose.

Themes are config only: the spec's body names no colour. Marks take theirs
from ``config`` (``range.category`` for the lines, named ``style`` entries for
the rest), so the light and dark specs differ in ``config`` alone.

The layers, transforms and controls are one :class:`~ainotes.charts.grammar.Grammar`
(:data:`GRAMMAR`), built with altair once per version of this code; a chart is that
structure with its datasets, the controls' initial values, the link select's choices,
its title and its description put in by plain Python.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Hashable
from typing import Any

from ainotes.base import cache, scripts, units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.charts import cost_labels, textsize
from ainotes.charts.figure import VegaFigure
from ainotes.charts.grammar import Grammar, code_fingerprint
from ainotes.charts.theme import COST_COLOURS, COST_PALETTES, ChartTheme, Colours, Theme
from ainotes.core import collective_cost as cc
from ainotes.core import collectives
from ainotes.core.collectives import OP_TITLES, OPS
from ainotes.core.links import Link

STATIC_WIDTH_PX = 720
STATIC_HEIGHT_PX = 480
# The picture a phone shows before (or without) the script: drawn at a 360 px screen's column.
NARROW_STATIC_WIDTH_PX = 328
NARROW_STATIC_HEIGHT_PX = 500
MIN_BYTES = 1e3
MAX_BYTES = 1e10
#: Rank counts the chart's control offers: powers of two from 2 to 1024 (and a fence's own, :func:`rank_choices`).
RANK_CHOICES = tuple(2**i for i in range(1, 11))
# Grid of log10(size) the browser evaluates each line on: 16 points per decade.
GRID_STEP_DECADES = 1 / 16
# Where a size sits on the plot, in px from its left edge (the x scale: log, MIN_BYTES to MAX_BYTES, not niced).
_PIXEL_X = (f"width * (log(datum.bytes) / LN10 - {math.log10(MIN_BYTES):g}) / "
            f"{math.log10(MAX_BYTES) - math.log10(MIN_BYTES):g}")
# Room a regime label needs beside the balance rule, in px (the longer, "bandwidth-bound", at 12 px italic).
REGIME_LABEL_PX = 100
# Below this chart width (px) the title takes two lines.
NARROW_TITLE_PX = 420
# Words, not symbols: the PNG's renderer draws a line with a glyph its font lacks in another font.
SUBTITLE = ["α–β model, one line per algorithm; shaded: the first",
            "line is latency-bound; diamonds: the fastest changes;", "circles: the first line meets another"]


def _paint(c: Colours) -> dict[str, Any]:
    return {
        "title": {"subtitleColor": c["muted"]},
        "style": {
            # "color", not fill/stroke: a mark's default colour would win over those.
            "regime-band": {"color": c["band"]},
            # 12 px at least: a still drawn at 720 px shows at 688 px in the page's column.
            "regime-label": {"color": c["muted"], "fontSize": 12, "fontStyle": "italic"},
            "cross-point": {"color": c["text"], "stroke": c["marker_stroke"], "strokeWidth": 1.5},
            "meet-point": {"color": c["text"], "strokeWidth": 2},
            "cross-label": {"color": c["text"], "fontSize": 12},
            "balance-rule": {"color": c["muted"], "strokeDash": [3, 3]},
        },
    }


#: The chart's look per scheme (:class:`ainotes.charts.theme.ChartTheme`).
THEME = ChartTheme(
    "cost",
    layout={"axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
            "legend": {"labelFontSize": 12, "symbolStrokeWidth": 3},
            "title": {"fontSize": 16, "fontWeight": 600, "anchor": "start", "offset": 12, "subtitleFontSize": 12,
                      "subtitleLineHeight": 16}},
    palettes=COST_PALETTES, colours=COST_COLOURS, paint=_paint,
)


def size_label(message_bytes: float) -> str:
    """``"1.61 MB"``: decimal prefixes, as link bandwidths are quoted."""
    return units.si(message_bytes, "B", 3)


def time_label(seconds: float) -> str:
    """``"3.92 ms"``."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale:
            return f"{units.significant(seconds / scale, 3)} {unit}"
    return f"{units.significant(seconds / 1e-9, 3)} ns"


def rank_choices(ranks: int = RANK_CHOICES[0]) -> tuple[int, ...]:
    """The rank select's options: the powers of two from 2 to 1024, with ``ranks`` among them where a fence
    opens on another count (the model takes any: :func:`ainotes.core.collective_cost.check_ranks`)."""
    return tuple(sorted({*RANK_CHOICES, cc.check_ranks(ranks)}))


@functools.cache
def algorithm_rows(choices: tuple[int, ...] = RANK_CHOICES) -> list[dict[str, Any]]:
    """Per primitive and algorithm, its coefficients at each rank count in ``choices``, from
    :func:`ainotes.core.collective_cost.coefficients`: ``a_at[p]`` rounds of α and ``b_at[p]`` multiples of S/B
    (none for a chain, which has its own expression). The core's own figures, so exact at any p (a rank
    count past a power of two folds ranks in: no formula in the browser could be both short and right).

    The same for every chart with these choices, so computed once; :meth:`Grammar.spec` copies it into each spec."""
    rows = []
    for op in OPS:
        for order, name in enumerate(cc.ALGORITHMS[op]):
            chain = cc.terms(op, name) is None
            at = {} if chain else {ranks: cc.coefficients(op, name, ranks) for ranks in choices}
            rows.append({"op": op, "algorithm": name, "title": cc.algorithm_title(op, name),
                         "short": cc.short_title(op, name), "order": order, "chain": chain,
                         "a_at": {str(ranks): a for ranks, (a, _) in at.items()},
                         "b_at": {str(ranks): b for ranks, (_, b) in at.items()}})
    return rows


def _link_rows(links: tuple[Link, ...]) -> list[dict[str, Any]]:
    """One row per link: its name, B and α; a full mesh's also its number of links, ``mesh`` (the
    chart then takes B·min(p − 1, mesh)/mesh at p ranks, :data:`GROUP_BANDWIDTH`)."""
    return [{"link": link.id, "name": link.name, "bandwidth": link.bandwidth_bytes_per_s,
             "latency": link.latency_s, "index": index,
             **({"mesh": link.mesh_links} if link.mesh_links is not None else {})}
            for index, link in enumerate(links)]


def has_mesh(links: tuple[Link, ...]) -> bool:
    """Whether any of the chart's links is a full mesh (its structure then reads B per rank count)."""
    return any(link.mesh_links is not None for link in links)


#: B per chip for the group of ``datum.ranks`` chips, as :meth:`ainotes.core.links.Link.group_bandwidth_bytes_per_s`
#: computes it: the link's B through a switch; B·min(p − 1, m)/m on a full mesh of m links (p ≥ 2 always).
GROUP_BANDWIDTH = ("datum.mesh ? datum.link_bandwidth * min(datum.ranks - 1, datum.mesh) / datum.mesh"
                   " : datum.link_bandwidth")


def _round(value: float) -> float:
    """Four significant digits: plenty for a mark's height on a log axis, and a smaller spec."""
    return float(f"{value:.4g}")


def _round_size(value: float) -> float:
    """Seven significant digits: a mark's label prints three, and must agree with the caption's."""
    return float(f"{value:.7g}")


# Every time in the α–β model is α·f(S ÷ (α·B)): t/α = a + b·S/(α·B), and a chain's best k
# depends on S/(α·B) too. So a crossover sits at a fixed multiple of the link's α·B, and one row
# per primitive and rank count serves every link. The core is asked on a reference link.
_REFERENCE_LATENCY_S = 1e-6
_REFERENCE_BANDWIDTH_BYTES_PER_S = 1e12
_REFERENCE_PRODUCT_BYTES = _REFERENCE_LATENCY_S * _REFERENCE_BANDWIDTH_BYTES_PER_S


def _crossover_rows(links: tuple[Link, ...], *, cached: bool = True,
                    choices: tuple[int, ...] = RANK_CHOICES) -> list[dict[str, Any]]:
    """Per primitive and rank count, the chart's marks, as ``x`` = S ÷ (α·B) and ``tau`` = t ÷ α:
    ``kind`` ``"switch"`` where the fastest algorithm changes
    (:func:`~ainotes.core.collective_cost.best_algorithm_changes`),
    ``"meet"`` where the first algorithm takes as long as another (:func:`~ainotes.core.collective_cost.crossovers`)
    and the fastest does not change there.

    Only the range of the links' α·B matters. The core's search takes a fraction of a second, so its
    rows are kept in process and in the render cache (keyed by that range and the code);
    ``cached=False`` asks the core again."""
    # On a full mesh B, and so α·B, depends on the rank count: every count's product counts.
    products = [link.latency_s * link.group_bandwidth_bytes_per_s(ranks) for link in links for ranks in choices]
    low = MIN_BYTES / max(products) * _REFERENCE_PRODUCT_BYTES
    high = MAX_BYTES / min(products) * _REFERENCE_PRODUCT_BYTES
    if not cached:
        return _search_crossovers(low, high, choices)
    # The powers of two's rows are shared by every chart; a fence's own rank count adds its own.
    extra = tuple(ranks for ranks in choices if ranks not in RANK_CHOICES)
    return _cached_crossover_rows(low, high) + (_cached_crossover_rows(low, high, extra) if extra else [])


@functools.cache
def _cached_crossover_rows(low: float, high: float, choices: tuple[int, ...] = RANK_CHOICES) -> list[dict[str, Any]]:
    payload: dict[str, Any] = {"low": low, "high": high,
                               "code": code_fingerprint(__file__, cc.__file__, collectives.__file__)}
    if choices != RANK_CHOICES:
        payload["ranks"] = list(choices)
    return cache.memo_json("cost-marks", payload, lambda: _search_crossovers(low, high, choices))


_REFERENCE = {"bandwidth_bytes_per_s": _REFERENCE_BANDWIDTH_BYTES_PER_S, "latency_s": _REFERENCE_LATENCY_S}


def _search_crossovers(low: float, high: float, choices: tuple[int, ...] = RANK_CHOICES) -> list[dict[str, Any]]:
    """The marks between ``low`` and ``high`` times the reference link's α·B at each of ``choices``, from the core."""
    rows: list[dict[str, Any]] = []
    for op in OPS:
        first, *others = cc.ALGORITHMS[op]
        for ranks in choices:
            switches = cc.best_algorithm_changes(op, ranks, low_bytes=low, high_bytes=high, **_REFERENCE)
            for change in switches:
                rows.append(_mark_row(op, ranks, "switch", change, change.faster_below, change.faster_above))
            for other in others:
                for cross in cc.crossovers(op, ranks, first, other, low_bytes=low, high_bytes=high, **_REFERENCE):
                    if not any({c.faster_below, c.faster_above} == {first, other}
                               and math.isclose(c.message_bytes, cross.message_bytes, rel_tol=1e-6)
                               for c in switches):
                        rows.append(_mark_row(op, ranks, "meet", cross, first, other))
    return rows


def _mark_row(op: str, ranks: int, kind: str, cross: cc.Crossover, one: str, two: str) -> dict[str, Any]:
    joint = " → " if kind == "switch" else " = "
    return {
        "op": op, "ranks": ranks, "kind": kind,
        "pair": f"{cc.short_title(op, one)}{joint}{cc.short_title(op, two)}",
        "one": one, "two": two,
        "x": _round_size(cross.message_bytes / _REFERENCE_PRODUCT_BYTES),
        "tau": _round(cross.time_s / _REFERENCE_LATENCY_S),
        "below": cc.short_title(op, cross.faster_below),
    }


def check_request(op: str, ranks: int, link_id: str, links: tuple[Link, ...]) -> None:
    """The initial primitive, rank count and link must be ones the controls offer."""
    if op not in OPS:
        raise InputError(f"'op' must be one of {', '.join(OPS)}: {short(op)}")
    cc.check_ranks(ranks)
    if link_id not in {link.id for link in links}:
        raise InputError(f"unknown link {short(link_id)} (known: {', '.join(link.id for link in links)})")


def cost_spec(
    links: tuple[Link, ...],
    *,
    op: str = "all-reduce",
    ranks: int = 8,
    link_id: str = "nvlink-4",
    title: str | None = None,
    theme: Theme = "light",
    cached: bool = True,
) -> dict[str, Any]:
    """The collective-cost chart as a Vega-Lite dict: :data:`GRAMMAR` with these links' data.

    ``op``, ``ranks`` and ``link_id`` are the controls' initial values (and what the static
    render shows); the theme is the spec's ``config``, nothing else. ``cached=False`` builds
    the grammar with altair and asks the core for the crossovers afresh.
    """
    links = tuple(links)
    if not links:
        raise InputError("cost chart: at least one link is needed")
    check_request(op, ranks, link_id, links)
    choices = rank_choices(ranks)
    for what, text in (("title", title or ""), *(("link name", link.name) for link in links)):
        bad = bad_character(text)
        if bad is not None:
            raise InputError(f"cost chart: the {what} {short(text)} holds a control character ({bad})")
    marks = _crossover_rows(links, cached=cached, choices=choices)
    placed = _label_layout(links, marks, choices, cached=cached)
    spec = GRAMMAR.spec(
        variant=("mesh",) if has_mesh(links) else (),
        datasets={"algorithms": algorithm_rows(choices), "links": _link_rows(links),
                  "crossovers": [{**row, "places": places} for row, places in zip(marks, placed.places, strict=True)]},
        params={"op": op, "ranks": ranks, "link": link_id},
        exprs={"y_decades": _y_decades_expression(links, placed, choices)},
        config=THEME.config(theme),
        top={
            "title": {"text": {"expr": title_expression(op, ranks, link_id, title)}, "subtitle": SUBTITLE},
            # The chart's accessible name and short text alternative (Vega puts it in the SVG's aria-label);
            # the caption under the chart says which primitive, ranks and link are shown.
            "description": ("Line chart on log-log axes: a collective's time against message size, one line per "
                            "algorithm, for the primitive, rank count and link chosen under it; diamonds mark where "
                            "the fastest algorithm changes, circles where the first algorithm meets another."),
        },
        cached=cached,
    )
    # The link select offers this chart's links, the rank select its counts (a bind's options cannot be an expression).
    for signal in spec["params"]:
        if signal["name"] == "link":
            signal["bind"].update(options=[link.id for link in links], labels=[link.name for link in links])
        if signal["name"] == "ranks" and choices != RANK_CHOICES:
            signal["bind"].update(options=list(choices), labels=[str(count) for count in choices])
    return spec


def _label_layout(links: tuple[Link, ...], marks: list[dict[str, Any]], choices: tuple[int, ...], *,
                  cached: bool) -> cost_labels.Layout:
    """:func:`ainotes.charts.cost_labels.layout` of these links, kept in the render cache (keyed by the
    links' α and B, the rank counts, the code and the font that measures the labels): placing takes
    most of a second per chart."""
    def make() -> cost_labels.Layout:
        return cost_labels.layout(links, marks, low_bytes=MIN_BYTES, high_bytes=MAX_BYTES,
                                  ranks_choices=choices, size_label=size_label)

    if not cached:
        return make()

    def as_json() -> dict[str, Any]:
        made = make()
        return {"places": made.places, "decades": {"|".join(map(str, key)): list(value)
                                                   for key, value in made.decades.items()}}

    payload = {"links": [[link.id, link.bandwidth_bytes_per_s, link.latency_s,
                          *([link.mesh_links] if link.mesh_links is not None else [])] for link in links],
               "ranks": list(choices),
               "code": code_fingerprint(__file__, cost_labels.__file__, textsize.__file__, cc.__file__,
                                        collectives.__file__, str(textsize.metrics_path()),
                                        str(textsize.metrics_path("Italic")))}
    kept = cache.memo_json("cost-labels", payload, as_json)
    decades = {}
    for key, (low, high) in kept["decades"].items():
        op, ranks, link_id = key.split("|")
        decades[(op, int(ranks), link_id)] = (low, high)
    return cost_labels.Layout(kept["places"], decades)


def _y_decades_expression(links: tuple[Link, ...], placed: cost_labels.Layout, choices: tuple[int, ...]) -> str:
    """The y axis's powers of ten for the state the selects show: a table over primitive × rank count × link."""
    table = [list(placed.decades[(op, ranks, link.id)]) for op in OPS for ranks in choices for link in links]
    index = (f"indexof({json.dumps(list(OPS))}, op) * {len(choices) * len(links)} + "
             f"indexof({json.dumps(list(choices))}, ranks) * {len(links)} + "
             f"indexof({json.dumps([link.id for link in links])}, link)")
    return f"{json.dumps(table, separators=(',', ':'))}[{index}]"


_TITLE_SUFFIX = "time against message size"


def default_title(op: str) -> str:
    return f"{OP_TITLES[op]}: {_TITLE_SUFFIX}"


def title_expression(op: str, ranks: int, link_id: str, title: str | None) -> str:
    """The chart's title as a Vega expression over the ``op`` select (two lines on a narrow chart).

    An author's ``title`` names the state the fence opens on; any other state takes the default
    title of its primitive, so the title never describes a chart no longer shown."""
    titles = json.dumps({name: OP_TITLES[name] for name in OPS}, ensure_ascii=False)
    suffix = json.dumps(_TITLE_SUFFIX)
    default = (f"width < {NARROW_TITLE_PX} ? [{titles}[op] + ':', {suffix}] : {titles}[op] + ': ' + {suffix}")
    if title is None:
        return default
    opening = f"op == {json.dumps(op)} && ranks == {ranks} && link == {json.dumps(link_id)}"
    return f"{opening} ? {json.dumps(title, ensure_ascii=False)} : ({default})"


class _Parts:
    """The params, axes and expressions the layers share."""

    def __init__(self, alt: Any, *, mesh: bool = False):
        self.op = alt.param(name="op", value=OPS[0], bind=alt.binding_select(
            options=list(OPS), labels=[OP_TITLES[o] for o in OPS], name="Primitive "))
        self.ranks = alt.param(name="ranks", value=RANK_CHOICES[0], bind=alt.binding_select(
            options=list(RANK_CHOICES), labels=[str(r) for r in RANK_CHOICES], name="Ranks "))
        self.link = alt.param(name="link", value="", bind=alt.binding_select(options=[], labels=[], name="Link "))
        self.this_case = f"datum.op == {self.op.name} && datum.ranks == {self.ranks.name}"
        self.this_op = f"datum.op == {self.op.name}"
        # The rank count and the algorithm's coefficients at it, as the core computed them (algorithm_rows).
        self.with_ranks = {"ranks": self.ranks.name}
        # A chart with a full-mesh link looks up its number of links too, and replaces B by the group's.
        self.mesh = mesh
        self.coefficients = {"a": "datum.chain ? 0 : datum.a_at[datum.ranks]",
                             "b": "datum.chain ? 0 : datum.b_at[datum.ranks]"}
        self.x_scale = alt.Scale(type="log", domain=[MIN_BYTES, MAX_BYTES], nice=False)
        decades = [10.0**e for e in range(round(math.log10(MIN_BYTES)), round(math.log10(MAX_BYTES)) + 1)]
        self.x = alt.X("bytes:Q", scale=self.x_scale, title="Message size S (bytes)",
                       axis=alt.Axis(values=decades, labelExpr="format(datum.value, '.0s') + 'B'",
                                     labelOverlap="greedy", labelSeparation=6))
        seconds_label = ("datum.value >= 1 ? format(datum.value, '~g') + ' s' : datum.value >= 1e-3 ? "
                         "format(datum.value * 1e3, '~g') + ' ms' : format(datum.value * 1e6, '~g') + ' µs'")
        # The y axis in whole decades, given per state (cost_labels.y_decades: what "nice" would make of the
        # lines' extent), so the label spots chosen at build time know where every mark is.
        self.y_decades = alt.param(name="y_decades", expr="[-6, 0]")
        self.y_scale = alt.Scale(type="log", nice=False,
                                 domain=alt.ExprRef("[pow(10, y_decades[0]), pow(10, y_decades[1])]"))
        self.y = alt.Y("time:Q", scale=self.y_scale, title="Time (log scale)",
                       # A label's box is its line (ascent and descent), more than the font size Vega
                       # keeps apart: 3 px more between labels.
                       axis=alt.Axis(labelExpr=seconds_label, tickCount=alt.ExprRef("y_decades[1] - y_decades[0]"),
                                     labelOverlap="greedy",
                                     labelSeparation=3))

    def with_link(self, alt: Any, chart: Any, fields: list[str]) -> Any:
        """``chart`` with the selected link's ``fields`` looked up (``datum.ranks`` set), B being the group's
        on a full mesh (:data:`GROUP_BANDWIDTH`)."""
        links = alt.NamedData(name="links")
        if not self.mesh:
            return chart.transform_lookup(lookup="link", from_=alt.LookupData(links, "link", fields))
        # The link's own B as link_bandwidth: Vega looks a field up again only when the key changes, so B
        # written over in place would shrink once more at each new rank count.
        return (chart.transform_lookup(lookup="link", from_=alt.LookupData(links, "link", [*fields, "mesh"]),
                                       as_=[*("link_bandwidth" if f == "bandwidth" else f for f in fields), "mesh"])
                .transform_calculate(bandwidth=GROUP_BANDWIDTH))


def _algorithm_lines(alt: Any, parts: _Parts) -> Any:
    """Each algorithm's line, evaluated on the grid: t = a·α + b·S/B, or the best chain."""
    chain_steps = "(datum.ranks - 2 + {k})"
    chain_time = f"{chain_steps} * (datum.latency + datum.bytes / ({{k}} * datum.bandwidth))"
    looked_up = (
        alt.Chart(alt.NamedData(name="algorithms"))
        .transform_filter(parts.this_op)
        .transform_calculate(link=parts.link.name, **parts.with_ranks)
        .transform_calculate(**parts.coefficients)
    )
    return (
        parts.with_link(alt, looked_up, ["bandwidth", "latency", "name"])
        .transform_calculate(log_bytes=f"sequence({math.log10(MIN_BYTES)}, {math.log10(MAX_BYTES)}"
                                       f" + {GRID_STEP_DECADES / 2}, {GRID_STEP_DECADES})")
        .transform_flatten(["log_bytes"])
        .transform_calculate(bytes="pow(10, datum.log_bytes)")
        .transform_calculate(
            k_star="sqrt((datum.ranks - 2) * datum.bytes / (datum.latency * datum.bandwidth))",
            k_limit="max(1, floor(datum.bytes))",
        )
        .transform_calculate(k_low="min(datum.k_limit, max(1, floor(datum.k_star)))",
                             k_high="min(datum.k_limit, max(1, ceil(datum.k_star)))")
        .transform_calculate(
            time=(f"datum.chain ? min({chain_time.format(k='datum.k_low')}, {chain_time.format(k='datum.k_high')})"
                  " : datum.a * datum.latency + datum.b * datum.bytes / datum.bandwidth"),
        )
        .mark_line(strokeWidth=2.5)
        .encode(
            x=parts.x, y=parts.y,
            color=alt.Color("title:N", title=None, sort=alt.EncodingSortField("order"),
                            legend=alt.Legend(orient="bottom", direction="horizontal", columns=1,
                                              symbolType="stroke", labelLimit=400)),
            order="log_bytes:Q",
            tooltip=[alt.Tooltip("title:N", title="Algorithm")],
        )
    )


def _balance(alt: Any, parts: _Parts) -> Any:
    """Where the first algorithm's two terms are equal
    (:func:`ainotes.core.collective_cost.latency_bandwidth_balance_bytes`)."""
    first = (
        alt.Chart(alt.NamedData(name="algorithms"))
        .transform_filter(f"{parts.this_op} && datum.order == 0")
        .transform_calculate(link=parts.link.name, **parts.with_ranks)
        .transform_calculate(**parts.coefficients)
    )
    return (
        parts.with_link(alt, first, ["bandwidth", "latency"])
        .transform_calculate(balance="datum.chain ? max(1, datum.ranks - 2) * datum.latency * datum.bandwidth"
                                     " : datum.a * datum.latency * datum.bandwidth / datum.b")
        .transform_calculate(bytes=f"clamp(datum.balance, {MIN_BYTES:g}, {MAX_BYTES:g})", start=f"{MIN_BYTES:g}")
    )


def _crosses(alt: Any, parts: _Parts) -> Any:
    """The marks: where the fastest algorithm changes, and where the first one meets another."""
    tiers = cost_labels.TIERS
    tier = " : ".join(f"width >= {t.width_px} && height >= {t.height_px} ? {i + 1}"
                      for i, t in reversed(list(enumerate(tiers)))) + " : 0"
    marks = (
        alt.Chart(alt.NamedData(name="crossovers"))
        .transform_filter(parts.this_case)
        .transform_calculate(link=parts.link.name)
    )
    return (
        # A mark sits at a fixed multiple of α·B, B the group's at the row's rank count.
        parts.with_link(alt, marks, ["bandwidth", "latency", "index"])
        .transform_calculate(bytes="datum.x * datum.latency * datum.bandwidth", time="datum.tau * datum.latency")
        .transform_filter(f"datum.bytes >= {MIN_BYTES:g} && datum.bytes <= {MAX_BYTES:g}")
        # "41.3 kB", as the caption (units.si) writes it.
        .transform_calculate(size="replace(format(datum.bytes, '.3~s'), /([kMGTP])$/, ' $1') + 'B'")
        .transform_calculate(label="datum.pair + ' at ' + datum.size", tier=tier)
        # Where the label goes (cost_labels: one spot per link and tier, chosen at build time so that no
        # two texts meet on any plot of the tier's size or more); none on a plot under the smallest tier.
        .transform_calculate(at=f"datum.index * {len(tiers)} + datum.tier - 1")
        .transform_calculate(spot=f"datum.tier == 0 ? '{cost_labels.NOT_DRAWN}' : "
                                  "substring(datum.places, datum.at, datum.at + 1)",
                             text="[datum.pair, 'at ' + datum.size]")
    )


def _layers(alt: Any, parts: _Parts) -> list[Any]:
    """The regime band and its labels, the lines, and the marks with their labels, bottom to top."""
    balance, crosses, x_scale = _balance(alt, parts), _crosses(alt, parts), parts.x_scale
    cross_tips = [alt.Tooltip("label:N", title="Mark"), alt.Tooltip("below:N", title="Faster below")]
    at = {"x": alt.X("bytes:Q", scale=x_scale), "y": alt.Y("time:Q", scale=parts.y_scale)}

    def regime_text(text: str, room: str) -> alt.ExprRef:
        # Drawn only where it fits between the rule and the plot's edge.
        return alt.ExprRef(f"{room} >= {REGIME_LABEL_PX} ? '{text}' : ''")

    return [
        # Left of the balance point the first algorithm's latency term is the larger one.
        balance.mark_rect(style="regime-band").encode(x=alt.X("start:Q", scale=x_scale), x2="bytes:Q"),
        balance.mark_rule(style="balance-rule").encode(x=alt.X("bytes:Q", scale=x_scale)),
        balance.mark_text(style="regime-label", align="right", baseline="top", dx=-6, y=6,
                          text=regime_text("latency-bound", _PIXEL_X))
        .encode(x=alt.X("bytes:Q", scale=x_scale)),
        balance.mark_text(style="regime-label", align="left", baseline="top", dx=6, y=6,
                          text=regime_text("bandwidth-bound", f"width - {_PIXEL_X}"))
        .encode(x=alt.X("bytes:Q", scale=x_scale)),
        _algorithm_lines(alt, parts),
        # Diamonds where the fastest algorithm changes; circles where the first one meets another.
        # aria=False: the caption states every mark in words, and a layer left empty (no change in this
        # state) would be an unnamed graphics-symbol group.
        crosses.transform_filter("datum.kind == 'switch'")
        .mark_point(style="cross-point", shape="diamond", size=110, filled=True, opacity=1, aria=False)
        .encode(**at, tooltip=cross_tips),
        crosses.transform_filter("datum.kind == 'meet'")
        .mark_point(style="meet-point", shape="circle", size=90, filled=False, opacity=1, aria=False)
        .encode(**at, tooltip=cross_tips),
        # Each label in the spot chosen for it (a label not drawn takes no room: autosize fits every mark's bounds).
        *(crosses.transform_filter(f"datum.spot == '{code}'")
          .mark_text(style="cross-label", align=align, baseline="top", dx=dx, dy=dy, aria=False)
          .encode(**at, text="text:N", tooltip=cross_tips)
          for code, align, dx, dy in cost_labels.SPOTS),
    ]


def _build_structure(variant: Hashable) -> dict[str, Any]:
    """The chart without data: layers reading the named datasets ``algorithms``, ``links`` and
    ``crossovers``, and the params ``op``, ``ranks`` and ``link`` (placeholder values, and no
    links in the link select: :func:`cost_spec` puts in each chart's). ``variant`` is ``()``, or ``("mesh",)``
    for a chart with a full-mesh link (:func:`has_mesh`): its links rows may carry ``mesh``, and B is the group's."""
    import altair as alt  # here: a build whose grammar is cached never loads it

    parts = _Parts(alt, mesh=variant == ("mesh",))
    chart = (
        alt.layer(*_layers(alt, parts))
        .add_params(parts.op, parts.ranks, parts.link, parts.y_decades)
        .properties(
            width=STATIC_WIDTH_PX, height=STATIC_HEIGHT_PX,
            autosize=alt.AutoSizeParams(type="fit", contains="padding"), padding=8,
        )
    )
    # Schema validation costs as much as building the chart; the tests validate specs instead.
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)  # altair's default view size; the chart sets its own
    return spec


# The op select's choices and labels come from ainotes.core.collectives, so its code is in the fingerprint too.
GRAMMAR = Grammar("cost", _build_structure, __file__, collectives.__file__)


#: The caption's sentences; ``vega-charts.js`` fills the same ones with the same figures (:func:`fill_caption`).
CAPTION_SENTENCES = {
    "setting": "{op} over {ranks} ranks on {link}. Each line is one algorithm's latency–bandwidth estimate, "
               "a·α + b·S/B, on log-log axes; in the shaded part {first} spends more time on per-message "
               "latency than on moving bytes.",
    "changes": "Diamonds mark where the fastest algorithm changes as the message grows: {list}.",
    "change": "{above} takes over from {below} at {size}",
    "winner": "{winner} is fastest at every size drawn.",
    "same-bytes": "In this model it moves as many bytes as {first} in fewer rounds.",
    "rings": "Real libraries still favour rings, whose messages only ever go to a neighbour.",
    "meets": "Circles mark where {first} takes as long as {list}.",
    "meet": "{other} at {size}",
    "tail": "No contention, no topology, no in-network reduction, no overlap with compute: real libraries "
            "tune all of these.",
}
# How the caption names each algorithm in a sentence.
_NOUNS = {
    "ring": "the ring", "rabenseifner": "Rabenseifner's algorithm", "binomial-tree": "the binomial tree",
    "double-binary-tree": "the double binary tree", "recursive-halving": "recursive halving",
    "recursive-doubling": "recursive doubling", "scatter-allgather": "scatter + all-gather",
    "direct": "the direct scatter", "pairwise": "the pairwise exchange", "bruck": "Bruck's algorithm",
}
_CHAIN_NOUN = "the pipelined chain"


def algorithm_noun(op: str, algorithm: str) -> str:
    """``"the binomial tree"``, ``"Rabenseifner's algorithm"``: an algorithm as a sentence names it."""
    return _CHAIN_NOUN if cc.algorithm_title(op, algorithm) == cc.CHAIN_TITLE else _NOUNS[algorithm]


_CLAUSE_JOINT = "; "


def _and_list(items: list[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
# What each primitive's lines are, where a name alone would mislead.
_OP_NOTES = {
    "all-reduce": "The double binary tree is NCCL's pipelined tree, priced as NCCL's tuning model prices it; "
                  "the binomial tree is the textbook one, which sends the whole tensor in every round.",
    "broadcast": "The pipelined chain is what NCCL calls its ring (the ring without its last link), the tensor "
                 "cut into the number of chunks that makes it fastest.",
    "reduce": "The pipelined chain is what NCCL calls its ring (the ring without its last link), the tensor "
              "cut into the number of chunks that makes it fastest.",
}
_RING_FAMILY = frozenset({"all-reduce", "reduce-scatter", "all-gather"})


def link_phrase(link: Link, ranks: int | None = None) -> str:
    """``NVLink 4 (H100 SXM) (B = 450 GB/s per direction, α = 1.9 µs, …)``: the link as the caption names it.

    On a full mesh of m links (m + 1 chips) B is the group's at ``ranks``
    (:meth:`~ainotes.core.links.Link.group_bandwidth_bytes_per_s`), and the phrase says how many links
    that is: ``B = 64 GB/s per direction for 2 of its 8 GPUs, over 1 of each GPU's 7 links``."""
    tuned = [source.url for source in link.sources if "tuning.cc" in source.url]
    origin = ("from the link preset's sources" if not tuned else
              "taken from RCCL's tuning model" if all("rccl" in url.lower() for url in tuned)
              else "taken from NCCL's tuning model")
    mesh = link.mesh_links
    if mesh is None:
        bandwidth = f"B = {link.bandwidth_gbps:g} GB/s per direction,"
    elif ranks is not None and ranks - 1 < mesh:
        group_gbps = link.group_bandwidth_bytes_per_s(ranks) / 1e9
        bandwidth = (f"B = {group_gbps:.4g} GB/s per direction for {ranks} of its {mesh + 1} GPUs, "
                     f"over {ranks - 1} of each GPU's {mesh} links;")
    else:
        bandwidth = f"B = {link.bandwidth_gbps:g} GB/s per direction, all {mesh} links of each GPU;"
    return f"{link.name} ({bandwidth} α = {link.latency_us:g} µs, an assumption {origin})"


def _reason(op: str, ranks: int, winner: str) -> int:
    """Why a single winner wins: 1 where it moves the first algorithm's bytes in fewer rounds (2 where
    that first algorithm is a ring, which libraries still favour), 0 otherwise."""
    first = cc.ALGORITHMS[op][0]
    if winner == first or cc.terms(op, first) is None or cc.terms(op, winner) is None:
        return 0
    (a_first, b_first), (a_winner, b_winner) = (cc.coefficients(op, first, ranks),
                                                cc.coefficients(op, winner, ranks))
    if not (math.isclose(b_first, b_winner, rel_tol=cc.TIE_RELATIVE) and a_winner < a_first):
        return 0
    return 2 if first == "ring" and op in _RING_FAMILY else 1


def _state_facts(op: str, ranks: int, link: Link, marks: list[dict[str, Any]]) -> dict[str, Any]:
    """What the caption says of one state, as the core computed it: the marks drawn (diamonds and
    circles, with their sizes as the labels print them) and, where the fastest never changes, which one it is."""
    bandwidth = link.group_bandwidth_bytes_per_s(ranks)  # on a full mesh, less for fewer ranks
    product = link.latency_s * bandwidth
    names = cc.ALGORITHMS[op]
    drawn = sorted((row for row in marks if row["op"] == op and row["ranks"] == ranks
                    and MIN_BYTES <= row["x"] * product <= MAX_BYTES), key=lambda row: row["x"])
    facts: dict[str, Any] = {
        "s": [[names.index(r["one"]), names.index(r["two"]), size_label(r["x"] * product)]
              for r in drawn if r["kind"] == "switch"],
        "m": [[names.index(r["two"]), size_label(r["x"] * product)] for r in drawn if r["kind"] == "meet"],
    }
    if not facts["s"]:
        figures = {"bandwidth_bytes_per_s": bandwidth, "latency_s": link.latency_s}
        winner = cc.best_algorithm(op, ranks, MIN_BYTES, **figures).algorithm
        facts.update(w=names.index(winner), r=_reason(op, ranks, winner))
    if link.mesh_links is not None and link_phrase(link, ranks) != link_phrase(link):
        facts["l"] = link_phrase(link, ranks)  # a group of a full mesh's chips: its own B, named in this state
    return facts


def caption_states(links: tuple[Link, ...], *, cached: bool = True,
                   choices: tuple[int, ...] = RANK_CHOICES) -> dict[str, Any]:
    """Everything the caption needs for every state of the selects (primitive × rank count in ``choices`` × link):
    the sentences, each primitive's algorithm titles and note, each link's phrase, and per state
    (key ``"op|ranks|link"``) its facts (:func:`_state_facts`)."""
    links = tuple(links)
    marks = _crossover_rows(links, cached=cached, choices=choices)
    return {
        "t": CAPTION_SENTENCES,
        "ops": {op: {"title": OP_TITLES[op], "names": [algorithm_noun(op, name) for name in cc.ALGORITHMS[op]],
                     "note": _OP_NOTES.get(op, "")} for op in OPS},
        "links": {link.id: link_phrase(link) for link in links},
        "states": {f"{op}|{ranks}|{link.id}": _state_facts(op, ranks, link, marks)
                   for op in OPS for ranks in choices for link in links},
    }


def _sentence_start(text: str) -> str:
    return text[:1].upper() + text[1:]


def fill_caption(data: dict[str, Any], op: str, ranks: int, link_id: str) -> str:
    """The caption of one state, in plain text, from :func:`caption_states`' data (``vega-charts.js``
    runs the same steps)."""
    t, about = data["t"], data["ops"][op]
    facts = data["states"][f"{op}|{ranks}|{link_id}"]
    names = about["names"]
    link = facts.get("l", data["links"][link_id])
    parts = [t["setting"].format(op=about["title"], ranks=ranks, link=link, first=names[0])]
    if about["note"]:
        parts.append(about["note"])
    if facts["s"]:
        changes = _CLAUSE_JOINT.join(t["change"].format(above=names[above], below=names[below], size=size)
                                     for below, above, size in facts["s"])
        parts.append(t["changes"].format(list=changes))
    else:
        parts.append(t["winner"].format(winner=_sentence_start(names[facts["w"]])))
        if facts["r"] >= 1:
            parts.append(t["same-bytes"].format(first=names[0]))
        if facts["r"] == 2:
            parts.append(t["rings"])
    if facts["m"]:
        meets = _and_list([t["meet"].format(other=names[other], size=size) for other, size in facts["m"]])
        parts.append(t["meets"].format(first=names[0], list=meets))
    parts.append(t["tail"])
    return " ".join(parts)


@functools.cache
def _cached_caption_states(links: tuple[Link, ...], choices: tuple[int, ...] = RANK_CHOICES) -> dict[str, Any]:
    return caption_states(links, choices=choices)


def caption_text(op: str, ranks: int, link: Link, links: tuple[Link, ...] | None = None) -> str:
    """The caption of one state in plain text (``links``: the chart's links; default, ``link`` alone)."""
    return fill_caption(_cached_caption_states(tuple(links) if links else (link,), rank_choices(ranks)),
                        op, ranks, link.id)


def caption_html(op: str, ranks: int, link: Link, links: tuple[Link, ...] | None = None) -> str:
    """What the chart assumes, with the numbers of the state it opens on; every user string escaped.

    Given the chart's ``links``, the caption also carries every state's facts in an inert
    ``<template>``, and ``vega-charts.js`` rewrites it as the reader changes a select."""
    import html

    chosen = tuple(links) if links else (link,)
    data = _cached_caption_states(chosen, rank_choices(ranks))
    text = html.escape(fill_caption(data, op, ranks, link.id))
    if not links:
        return text
    return (f'<span class="ainotes-cost-caption" data-cost-caption aria-live="polite">{text}</span>'
            f'<template class="ainotes-cost-captions">{scripts.script_json(data)}</template>')


def narrow_static(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec drawn at a phone's column (:data:`NARROW_STATIC_WIDTH_PX`), for the picture a phone
    shows before (or without) the script: its text stays at its own size there."""
    return {**spec, "width": NARROW_STATIC_WIDTH_PX, "height": NARROW_STATIC_HEIGHT_PX}


def cost_figure(links: tuple[Link, ...], *, op: str, ranks: int, link: Link, title: str | None,
                chart_title: str) -> VegaFigure:
    """The chart (:func:`cost_spec`) as a page shows it: both schemes, their phone stills
    (:func:`narrow_static`) and the caption; the embed snippets call it ``chart_title`` (its
    live title is an expression of the selects, which a static snippet has no value for)."""
    light, dark = (cost_spec(links, op=op, ranks=ranks, link_id=link.id, title=title, theme=theme)
                   for theme in ("light", "dark"))
    return VegaFigure(light=light, dark=dark, caption_html=caption_html(op, ranks, link, links),
                      narrow=(narrow_static(light), narrow_static(dark)), snippet_title=chart_title)
