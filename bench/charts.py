"""Chart-level numbers, measured in this process: render time, spec and SVG sizes."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from ainotes.base import cache
from ainotes.html.page import embed_json_bytes
from bench.weight import Weight

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class RooflineNumbers:
    render_svg_uncached_s: float   # median; Vega engine warm, render cache emptied before each call
    render_svg_cached_s: float     # median; the same spec served from the render cache
    spec_build_s: float            # median time to build the spec with altair (roofline_spec(cached=False))
    spec_cached_s: float           # median time of roofline_spec once its spec is in the render cache
    spec_compact: Weight           # Vega-Lite spec as compact JSON
    spec_embed_bytes: int          # as written to site/embed/ID.json (indented, sorted keys)
    svg: Weight


@dataclass(frozen=True)
class CollectiveNumbers:
    svg_by_op: dict[str, Weight]   # animated SVG at four ranks
    all_seven_s: float             # median time to simulate and draw all seven


def _median_time(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def roofline_numbers(repeats: int) -> RooflineNumbers:
    """The four-preset explorer: ``render.svg(roofline_spec(load_presets('presets')))``.

    The caller points ``AINOTES_CACHE_DIR`` at a scratch folder first: this
    empties that cache between timed calls so each one really renders.
    """
    from ainotes import render
    from ainotes.charts.roofline.spec import roofline_spec
    from ainotes.presets.gpus import load_presets

    presets = load_presets(REPO / "presets")
    spec = roofline_spec(presets)
    spec_build = _median_time(lambda: roofline_spec(presets, cached=False), repeats)
    spec_cached = _median_time(lambda: roofline_spec(presets), repeats)
    cache.clear_cache()
    render.svg(spec)  # the first call starts the JavaScript engine; not what a chart costs

    times: list[float] = []
    for _ in range(repeats):
        cache.clear_cache()
        start = time.perf_counter()
        render.svg(spec)
        times.append(time.perf_counter() - start)
    svg_text = render.svg(spec)
    cached = _median_time(lambda: render.svg(spec), repeats)
    compact = json.dumps(spec, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")
    embed = embed_json_bytes(spec)  # as the build writes it
    return RooflineNumbers(
        render_svg_uncached_s=statistics.median(times),
        render_svg_cached_s=cached,
        spec_build_s=spec_build,
        spec_cached_s=spec_cached,
        spec_compact=Weight.of(compact),
        spec_embed_bytes=len(embed),
        svg=Weight.of(svg_text.encode("utf-8")),
    )


def collective_numbers(repeats: int, ranks: int = 4) -> CollectiveNumbers:
    """Each of the seven animated SVGs, ``animated_svg(simulate(op, 4))``, and the time for all seven."""
    from ainotes.charts import collective as collective_chart
    from ainotes.core import collectives

    def all_seven() -> dict[str, str]:
        return {op: collective_chart.animated_svg(collectives.simulate(op, ranks)) for op in collectives.OPS}

    svgs = all_seven()
    return CollectiveNumbers(
        svg_by_op={op: Weight.of(text.encode("utf-8")) for op, text in svgs.items()},
        all_seven_s=_median_time(all_seven, repeats),
    )


@dataclass(frozen=True)
class CostNumbers:
    render_svg_uncached_s: float   # median; Vega engine warm, render cache emptied before each call
    spec_build_s: float            # median time to build the spec with altair (cost_spec(cached=False))
    spec_compact: Weight           # Vega-Lite spec as compact JSON


def cost_numbers(repeats: int) -> CostNumbers:
    """The collective-cost chart as the note opens it (all-reduce, 8 ranks, NVLink 4, every link
    preset in its select), measured the way :func:`roofline_numbers` measures the explorer."""
    from ainotes import render
    from ainotes.charts import cost as cost_chart
    from ainotes.presets.links import load_links

    links = load_links(REPO / "presets" / "links")
    spec = cost_chart.cost_spec(links)
    spec_build = _median_time(lambda: cost_chart.cost_spec(links, cached=False), repeats)
    cache.clear_cache()
    render.svg(spec)  # the first call starts the JavaScript engine

    times = []
    for _ in range(repeats):
        cache.clear_cache()
        start = time.perf_counter()
        render.svg(spec)
        times.append(time.perf_counter() - start)
    compact = json.dumps(spec, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")
    return CostNumbers(render_svg_uncached_s=statistics.median(times), spec_build_s=spec_build,
                       spec_compact=Weight.of(compact))
