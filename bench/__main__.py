"""``python -m bench``: measure the site and print one table (also written to bench/RESULTS.md).

Parts of the table:

a. the real site built with its charts against the same tree with its chart
   fences removed, cold render cache and warm, medians of alternating runs; and
   the first build on a machine (runtime bundle not built yet either);
b. generated sites of 10, 100 and 500 charts: build seconds and the marginal
   cost of one chart (least-squares slope of chart time over the no-chart
   baseline of the same pages); the 100-chart site cold with the render
   workers and without; one preset edited on the 500-chart site;
c. page weight of the home page, a page without charts and the two chart pages;
d. peak resident memory of the build process;
e. chart-level numbers: explorer render time, spec and SVG sizes, the seven
   animated collective SVGs;
f. the edit loop: ``make serve``'s start (warm and cold caches), a prose edit and a
   fence edit, against a plain MkDocs serve of the same pages (bench/serve.py).

``--serve-only`` measures part f alone. ``--quick`` is a smoke run (fewer repeats, small generated sites, written to
bench/out/RESULTS-quick.md); ``--slow-hypothesis`` adds the 1000-example
hostile-input tier of tests/test_hostile.py to the table.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import builds, report, serve, sites, weight
from bench.report import Row, kb, mib, ms, seconds

REPO = sites.REPO
WORK = REPO / "bench" / "out"
RESULTS = REPO / "bench" / "RESULTS.md"
KB = 1000  # the goals' KB are read as 1000 bytes, the stricter reading
SHARED_ENV = "AINOTES_SHARED_CACHE_DIR"

# Goals (issues 5, 7 and 15).
COLD_RATIO_GOAL = 2.0
WARM_RATIO_GOAL = 1.2
PRESET_EDIT_GOAL_S = 30.0
EDITED_PRESET = "h100"
COLD_MS_PER_CHART_GOAL = 60.0
CACHED_MS_PER_CHART_GOAL = 3.0
LINEAR_R2_GOAL = 0.98  # what "linear" is taken to mean for the chart-time fit
CHART_PAGE_SCRIPT_GZ_GOAL = 260 * KB
EXPLORER_RENDER_MS_GOAL = 60.0
SPEC_BYTES_GOAL = 10 * KB
COLLECTIVE_SVG_GOAL = 25 * KB
COLLECTIVE_SVG_GZ_GOAL = 8 * KB


@dataclass(frozen=True)
class Plan:
    real_repeats: int
    scale_points: tuple[sites.ScalePoint, ...]
    scale_repeats: int          # runs of each kind for points up to scale_repeats_up_to charts; one beyond
    scale_repeats_up_to: int
    serial_point: int           # the scale point (charts) also built cold without render workers; 0: none
    edit_point: int             # the scale point (charts) whose preset edit is measured; 0: none
    chart_repeats: int
    budget_s: float             # soft cap on the whole run; scale points that would pass it are skipped


FULL = Plan(
    real_repeats=3,
    scale_points=(sites.ScalePoint(10, 10), sites.ScalePoint(100, 50), sites.ScalePoint(500, 100)),
    scale_repeats=3,
    scale_repeats_up_to=10,
    serial_point=100,
    edit_point=500,
    chart_repeats=15,
    budget_s=25 * 60,
)
QUICK = Plan(
    real_repeats=2,
    scale_points=(sites.ScalePoint(4, 2), sites.ScalePoint(10, 5), sites.ScalePoint(20, 5)),
    scale_repeats=1,
    scale_repeats_up_to=0,
    serial_point=10,
    edit_point=20,
    chart_repeats=5,
    budget_s=5 * 60,
)


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f}"


# --------------------------------------------------------------------------
# (a) and (d): the real site, with charts and stripped


@dataclass
class RealSite:
    rows: list[Row]
    built_site: Path   # the last cold build with charts, for (c)
    pages: dict[str, dict[str, int]]


def measure_real_site(plan: Plan, work: Path) -> RealSite:
    charts = sites.copy_project(work / "real-charts")
    stripped = sites.copy_project(work / "real-stripped")
    removed = sites.strip_project(stripped)
    pages = sites.count_chart_fences(charts / "docs")
    site_charts, site_stripped = work / "site-real-charts", work / "site-real-stripped"
    n = plan.real_repeats

    # The first build on a machine also builds the Vega runtime bundle (and chart grammars);
    # later ones, cold render cache or not, take them from the shared cache.
    runtime = Path(os.environ[SHARED_ENV])
    shutil.rmtree(runtime, ignore_errors=True)
    log("real site, first build on a machine (render and runtime caches empty)")
    first = builds.cold_build(charts, site_charts, work)
    if not any(runtime.glob("*.entry")):
        log("the first build left nothing in the shared cache")
    cold = {"charts": [], "stripped": []}
    for i in range(n):
        log(f"real site, cold cache, run {i + 1}/{n}")
        cold["charts"].append(builds.cold_build(charts, site_charts, work))
        cold["stripped"].append(builds.cold_build(stripped, work / "site-tmp", work))
    kept = work / "site-real-charts-kept"
    shutil.rmtree(kept, ignore_errors=True)
    site_charts.rename(kept)

    warm = {"charts": [], "stripped": []}
    caches = {"charts": work / "cache-real-charts", "stripped": work / "cache-real-stripped"}
    for cache in caches.values():
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir()
    log("real site, warming the render caches")
    builds.build(charts, site_charts, caches["charts"])
    builds.build(stripped, site_stripped, caches["stripped"])
    for i in range(n):
        log(f"real site, warm cache, run {i + 1}/{n}")
        warm["charts"].append(builds.build(charts, site_charts, caches["charts"]))
        warm["stripped"].append(builds.build(stripped, site_stripped, caches["stripped"]))

    rows = [Row("a", "real site, first build on a machine: render cache and shared cache (runtime bundle, grammars) "
                "both empty (1 run)",
                f"{seconds(first.seconds)} ({first.seconds / median([r.seconds for r in cold['stripped']]):.2f}× "
                "the median charts-removed cold build)")]
    for label, runs, goal in (("cold", cold, COLD_RATIO_GOAL), ("warm", warm, WARM_RATIO_GOAL)):
        with_charts = [r.seconds for r in runs["charts"]]
        without = [r.seconds for r in runs["stripped"]]
        ratio = median(with_charts) / median(without)
        rows.append(Row(
            "a",
            f"real site, {label} render cache: with its {removed} charts vs charts removed "
            f"(median of {n} alternating runs each{'; shared cache kept' if label == 'cold' else ''})",
            f"{seconds(median(with_charts))} (range {spread(with_charts)}) vs {seconds(median(without))} "
            f"(range {spread(without)}) → {ratio:.2f}×",
            f"≤ {goal:.1f}×",
            ratio <= goal,
        ))
    for label, runs in (("cold, with charts", cold["charts"]), ("warm, with charts", warm["charts"]),
                        ("cold, charts removed", cold["stripped"])):
        rows.append(Row("d", f"peak RSS of the real-site build ({label})",
                        mib(max(r.max_rss_bytes for r in runs))))
    return RealSite(rows, kept, pages)


# --------------------------------------------------------------------------
# (b) scale


@dataclass(frozen=True)
class ScaleResult:
    point: sites.ScalePoint
    charts_cold_s: float
    charts_warm_s: float
    base_cold_s: float
    base_warm_s: float
    charts_cold_rss: int
    repeats: int
    charts_cold_cpu_s: float = 0.0       # CPU seconds (build and its workers), median
    charts_warm_cpu_s: float = 0.0
    base_cold_cpu_s: float = 0.0
    base_warm_cpu_s: float = 0.0
    serial_cold_s: float | None = None   # cold with AINOTES_RENDER_WORKERS=0
    serial_cold_cpu_s: float | None = None
    edit_s: float | None = None          # warm build after one preset edit
    edit_charts: int = 0                 # rooflines that draw the edited preset
    edit_entries: int = 0                # render-cache entries that build added


def measure_scale_point(point: sites.ScalePoint, repeats: int, work: Path, *,
                        serial: bool = False, edit: bool = False) -> ScaleResult:
    root = work / point.name
    shutil.rmtree(root, ignore_errors=True)
    charts = sites.make_scale_site(root / "charts", point, with_charts=True)
    base = sites.make_scale_site(root / "base", point, with_charts=False)
    site = root / "site"
    warm_cache, base_cache = root / "cache-charts", root / "cache-base"
    base_cache.mkdir()
    cold_c, cold_b, warm_c, warm_b = [], [], [], []
    for i in range(repeats):
        log(f"{point.name}: cold run {i + 1}/{repeats}")
        cold_b.append(builds.cold_build(base, site, work))
        if i == repeats - 1:  # the last cold build's cache becomes the warm cache
            shutil.rmtree(warm_cache, ignore_errors=True)
            warm_cache.mkdir()
            cold_c.append(builds.build(charts, site, warm_cache))
        else:
            cold_c.append(builds.cold_build(charts, site, work))
    serial_cold_s = serial_cold_cpu_s = None
    if serial:
        log(f"{point.name}: cold run without render workers")
        serial_run = builds.cold_build(charts, site, work, env={"AINOTES_RENDER_WORKERS": "0"})
        serial_cold_s, serial_cold_cpu_s = serial_run.seconds, serial_run.cpu_seconds
    for i in range(repeats):
        log(f"{point.name}: warm run {i + 1}/{repeats}")
        warm_b.append(builds.build(base, site, base_cache))
        warm_c.append(builds.build(charts, site, warm_cache))
    edit_s, edit_charts, edit_entries = None, 0, 0
    if edit:
        log(f"{point.name}: one preset edited ({EDITED_PRESET}), warm cache")
        edit_charts = sites.charts_showing(charts / "docs", EDITED_PRESET)
        before = {p.name for p in warm_cache.glob("*.entry")}
        sites.edit_preset(charts, EDITED_PRESET)
        edit_s = builds.build(charts, site, warm_cache).seconds
        edit_entries = len({p.name for p in warm_cache.glob("*.entry")} - before)
    shutil.rmtree(root, ignore_errors=True)
    return ScaleResult(
        point,
        charts_cold_s=median([r.seconds for r in cold_c]),
        charts_warm_s=median([r.seconds for r in warm_c]),
        base_cold_s=median([r.seconds for r in cold_b]),
        base_warm_s=median([r.seconds for r in warm_b]),
        charts_cold_rss=max(r.max_rss_bytes for r in cold_c),
        repeats=repeats,
        charts_cold_cpu_s=median([r.cpu_seconds for r in cold_c]),
        charts_warm_cpu_s=median([r.cpu_seconds for r in warm_c]),
        base_cold_cpu_s=median([r.cpu_seconds for r in cold_b]),
        base_warm_cpu_s=median([r.cpu_seconds for r in warm_b]),
        serial_cold_s=serial_cold_s,
        serial_cold_cpu_s=serial_cold_cpu_s,
        edit_s=edit_s,
        edit_charts=edit_charts,
        edit_entries=edit_entries,
    )


def least_squares(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Slope, intercept and R² of the ordinary least-squares line through (xs, ys)."""
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - mean_y) ** 2 for y in ys)
    return slope, intercept, (1.0 - ss_res / ss_tot) if ss_tot > 0 else 1.0


def measure_scale(plan: Plan, work: Path, deadline: float) -> list[Row]:
    rows: list[Row] = []
    results: list[ScaleResult] = []
    per_chart_estimate_s = 1.0  # cold plus cached, pessimistic until a point is measured
    for point in plan.scale_points:
        repeats = plan.scale_repeats if point.charts <= plan.scale_repeats_up_to else 1
        base_estimate = results[-1].base_cold_s if results else 5.0
        one_round = 4 * base_estimate + point.charts * per_chart_estimate_s
        if time.monotonic() + repeats * one_round > deadline and repeats > 1:
            repeats = 1
        if time.monotonic() + one_round > deadline:
            rows.append(Row("b", f"{point.charts} charts over {point.pages} pages",
                            f"not measured: about {one_round:.0f} s more would pass the "
                            f"{plan.budget_s / 60:.0f}-minute cap"))
            continue
        result = measure_scale_point(point, repeats, work, serial=point.charts == plan.serial_point,
                                     edit=point.charts == plan.edit_point)
        results.append(result)
        per_chart_estimate_s = max((result.charts_cold_s - result.base_cold_s
                                    + result.charts_warm_s - result.base_warm_s) / point.charts, 0.01)
        rows.append(Row(
            "b",
            f"{point.charts} charts over {point.pages} pages ({point.charts // 2 + point.charts % 2} rooflines; "
            f"median of {repeats})",
            f"cold {seconds(result.charts_cold_s)}, cached {seconds(result.charts_warm_s)}; "
            f"no-chart baseline {seconds(result.base_cold_s)} / {seconds(result.base_warm_s)}; "
            f"CPU cold {seconds(result.charts_cold_cpu_s)}, cached {seconds(result.charts_warm_cpu_s)}, "
            f"baseline {seconds(result.base_cold_cpu_s)} / {seconds(result.base_warm_cpu_s)}; "
            f"peak RSS {mib(result.charts_cold_rss)}",
        ))
        if result.serial_cold_s is not None:
            rows.append(Row(
                "b", f"{point.charts} charts cold, render workers against none (AINOTES_RENDER_WORKERS=0; 1 run)",
                f"{seconds(result.charts_cold_s)} with workers on the usable cores vs "
                f"{seconds(result.serial_cold_s)} in-process → "
                f"{result.serial_cold_s / result.charts_cold_s:.2f}× the speed; CPU "
                f"{seconds(result.charts_cold_cpu_s)} vs {seconds(result.serial_cold_cpu_s or 0.0)}",
            ))
        if result.edit_s is not None:
            rows.append(Row(
                "b", f"one preset edit ({EDITED_PRESET} bandwidth) on the {point.charts}-chart site, warm render cache "
                     "otherwise (1 run)",
                f"{seconds(result.edit_s)}: {result.edit_charts} rooflines draw {EDITED_PRESET}; "
                f"{result.edit_entries} new render-cache entries (cached build {seconds(result.charts_warm_s)})",
                f"≤ {PRESET_EDIT_GOAL_S:.0f} s", result.edit_s <= PRESET_EDIT_GOAL_S,
            ))
    if len(results) >= 2:
        xs = [float(r.point.charts) for r in results]
        for label, attr_c, attr_b in (("cold", "charts_cold_cpu_s", "base_cold_cpu_s"),
                                      ("cached", "charts_warm_cpu_s", "base_warm_cpu_s")):
            extra = [getattr(r, attr_c) - getattr(r, attr_b) for r in results]
            slope, intercept, r2 = least_squares(xs, extra)
            rows.append(Row(
                "b", f"CPU time per chart, {label} (slope of build CPU seconds, workers included, minus the "
                     "no-chart baseline's; what a chart costs whatever else runs on the machine)",
                f"{slope * 1000:.1f} ms/chart, intercept {intercept:.2f} s, R² {r2:.3f}",
            ))
        for label, attr_c, attr_b, goal_ms in (
            ("cold", "charts_cold_s", "base_cold_s", COLD_MS_PER_CHART_GOAL),
            ("cached", "charts_warm_s", "base_warm_s", CACHED_MS_PER_CHART_GOAL),
        ):
            extra = [getattr(r, attr_c) - getattr(r, attr_b) for r in results]
            slope, intercept, r2 = least_squares(xs, extra)
            per_point = ", ".join(f"{1000 * e / x:.1f}" for e, x in zip(extra, xs, strict=True))
            linear = r2 >= LINEAR_R2_GOAL
            rows.append(Row(
                "b",
                f"marginal cost per chart, {label} (least-squares slope of build time minus its "
                f"no-chart baseline, over {', '.join(str(int(x)) for x in xs)} charts)",
                f"{slope * 1000:.1f} ms/chart, intercept {intercept:.2f} s, R² {r2:.3f}; "
                f"per point {per_point} ms/chart",
                f"≤ {goal_ms:.0f} ms/chart, linear (R² ≥ {LINEAR_R2_GOAL})",
                slope * 1000 <= goal_ms and linear,
            ))
    else:
        rows.append(Row("b", "marginal cost per chart", "not enough scale points measured for a fit"))
    return rows


# --------------------------------------------------------------------------
# (c) page weight


def _page_url(src: str) -> str:
    stem = src[: -len(".md")]
    if stem == "index":
        return ""
    return (stem[: -len("/index")] if stem.endswith("/index") else stem) + "/"


def measure_weight(real: RealSite) -> list[Row]:
    from ainotes.build.site import ASSET_URL

    pages = real.pages
    plain = [s for s, kinds in pages.items() if s != "index.md" and not any(kinds.get(k) for k in sites.CHART_FENCES)]
    roofline = [s for s, kinds in pages.items() if kinds.get("roofline")]
    collective = sorted((s for s, kinds in pages.items() if kinds.get("collective")),
                        key=lambda s: -pages[s]["collective"])
    chosen = [("home", "index.md", False)]
    if plain:
        chosen.append(("no charts", "mfu.md" if "mfu.md" in plain else plain[0], False))
    if roofline:
        chosen.append(("roofline", roofline[0], True))
    if collective:
        chosen.append(("collectives", collective[0], True))

    rows = []
    for kind, src, has_charts in chosen:
        page = weight.page_weight(real.built_site, _page_url(src))
        runtime = [s for s in page.script_sources if f"{ASSET_URL}/" in s]
        scripts = ", ".join(Path(s).name for s in page.script_sources) or "none"
        result = (
            f"HTML {kb(page.html.raw_bytes)} ({kb(page.html.gzip_bytes)} gz); "
            f"scripts {kb(page.scripts.raw_bytes)} ({kb(page.scripts.gzip_bytes)} gz): {scripts}; "
            f"inline SVG {kb(page.inline_svg.raw_bytes)} ({kb(page.inline_svg.gzip_bytes)} gz) "
            f"in {page.inline_svg_count} elements"
        )
        if has_charts:
            goal = f"≤ {CHART_PAGE_SCRIPT_GZ_GOAL // KB} kB gz of script"
            met = page.scripts.gzip_bytes <= CHART_PAGE_SCRIPT_GZ_GOAL
        else:
            goal = "no chart runtime"
            met = not runtime
        rows.append(Row("c", f"page weight: {kind} ({src})", result, goal, met))
    return rows


# --------------------------------------------------------------------------
# (e) chart-level numbers


def measure_charts(plan: Plan) -> list[Row]:
    from bench import charts

    rows = []
    roof = charts.roofline_numbers(plan.chart_repeats)
    rows.append(Row(
        "e",
        f"four-preset explorer to SVG, Vega engine warm, render cache emptied before each call "
        f"(median of {plan.chart_repeats})",
        f"{ms(roof.render_svg_uncached_s)} (from the render cache: {ms(roof.render_svg_cached_s)})",
        f"≤ {EXPLORER_RENDER_MS_GOAL:.0f} ms",
        roof.render_svg_uncached_s * 1000 <= EXPLORER_RENDER_MS_GOAL,
    ))
    rows.append(Row(
        "e", "explorer Vega-Lite spec size (compact JSON)",
        f"{kb(roof.spec_compact.raw_bytes)} ({kb(roof.spec_compact.gzip_bytes)} gz); "
        f"{kb(roof.spec_embed_bytes)} as the indented embed/ID.json",
        f"≤ {SPEC_BYTES_GOAL // KB} kB", roof.spec_compact.raw_bytes <= SPEC_BYTES_GOAL,
    ))
    rows.append(Row("e", "building the explorer's Vega-Lite spec with altair (roofline_spec(cached=False), "
                         f"once per chart: the dark spec is the light one recoloured; median of {plan.chart_repeats})",
                    f"{ms(roof.spec_build_s)} (from the render cache: {ms(roof.spec_cached_s)})"))
    rows.append(Row("e", "explorer static SVG size",
                    f"{kb(roof.svg.raw_bytes)} ({kb(roof.svg.gzip_bytes)} gz)"))
    cost = charts.cost_numbers(plan.chart_repeats)
    rows.append(Row("e", f"collective-cost chart to SVG, beside the explorer (median of {plan.chart_repeats})",
                    f"{ms(cost.render_svg_uncached_s)}; spec built in {ms(cost.spec_build_s)}"))
    rows.append(Row("e", "collective-cost Vega-Lite spec size (compact JSON; every primitive, rank count and link)",
                    f"{kb(cost.spec_compact.raw_bytes)} ({kb(cost.spec_compact.gzip_bytes)} gz)"))
    coll = charts.collective_numbers(plan.chart_repeats)
    for op, size in coll.svg_by_op.items():
        rows.append(Row(
            "e", f"animated {op} SVG, 4 ranks", f"{kb(size.raw_bytes)} ({kb(size.gzip_bytes)} gz)",
            f"≤ {COLLECTIVE_SVG_GOAL // KB} kB, ≤ {COLLECTIVE_SVG_GZ_GOAL // KB} kB gz",
            size.raw_bytes <= COLLECTIVE_SVG_GOAL and size.gzip_bytes <= COLLECTIVE_SVG_GZ_GOAL,
        ))
    rows.append(Row("e", f"simulate and draw all seven animated SVGs (median of {plan.chart_repeats})",
                    ms(coll.all_seven_s)))
    return rows


# --------------------------------------------------------------------------
# the slow hypothesis tier


def run_slow_hypothesis() -> Row:
    command = [sys.executable, "-m", "pytest", "-m", "slow", "tests/test_hostile.py", "-q", "-p", "no:cacheprovider"]
    start = time.monotonic()
    proc = subprocess.run(command, check=False, cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "AINOTES_SLOW": "1"})
    elapsed = time.monotonic() - start
    lines = [line for line in (proc.stdout + proc.stderr).strip().splitlines() if line.strip()]
    summary = next((line.strip("= ") for line in reversed(lines) if re.search(r"\b(passed|failed|error)", line)),
                   lines[-1] if lines else "no output")
    if proc.returncode != 0:
        log("slow hypothesis tier failed:\n" + "\n".join(lines[-40:]))
    return Row("hyp", "hostile-input tier, ≥ 1000 examples per test (pytest -m slow tests/test_hostile.py)",
               f"{summary} ({elapsed:.0f} s)", "all pass", proc.returncode == 0)


# --------------------------------------------------------------------------


NOTES_MARKER = "<!-- Notes below this line are written by hand and kept by `python -m bench`. -->"


def _kept_notes(output: Path) -> str:
    """The hand-written notes of the results file being replaced (profiles, what a missed goal
    comes from), from :data:`NOTES_MARKER` on; ``""`` when it has none."""
    try:
        previous = output.read_text(encoding="utf-8")
    except OSError:
        return ""
    at = previous.find(NOTES_MARKER)
    return "\n" + previous[at:] if at >= 0 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: fewer repeats, small generated sites")
    parser.add_argument("--slow-hypothesis", action="store_true",
                        help="also run the 1000-example hostile-input tier and report it")
    parser.add_argument("--serve-only", action="store_true", help="measure the edit loop (part f) alone")
    parser.add_argument("--serve-rounds", type=int, default=3, metavar="N",
                        help="alternating rounds of ours and plain MkDocs' serve in part f (default 3; --quick: 1)")
    parser.add_argument("--output", type=Path, help="where to write the results (default bench/RESULTS.md, "
                        "bench/out/RESULTS-quick.md with --quick)")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    output = args.output or (WORK / "RESULTS-quick.md" if args.quick or args.serve_only else RESULTS)

    started = time.monotonic()
    deadline = started + plan.budget_s
    machine = report.machine_lines()
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    # The in-process chart numbers get a scratch render cache, never the user's; every build
    # shares one scratch shared cache (runtime bundle, grammars), as builds on one machine share the user's.
    os.environ["AINOTES_CACHE_DIR"] = tempfile.mkdtemp(prefix="chart-cache-", dir=WORK)
    os.environ[SHARED_ENV] = str(WORK / "runtime-cache")

    rows: list[Row] = []
    sections = [("chart-level numbers", "e", lambda: measure_charts(plan))]
    real: list[RealSite] = []

    def real_site_rows() -> list[Row]:
        real.append(measure_real_site(plan, WORK))
        return real[0].rows

    sections += [
        ("real site", "a", real_site_rows),
        ("page weight", "c", lambda: measure_weight(real[0]) if real else [
            Row("c", "page weight", "not measured: the real-site build failed")]),
        ("scale", "b", lambda: measure_scale(plan, WORK, deadline)),
    ]
    sections.append(("edit loop (mkdocs serve)", "f",
                     lambda: serve.measure_serve(WORK, edits=2 if args.quick else 3,
                                                 rounds=1 if args.quick else max(1, args.serve_rounds))))
    if args.serve_only:
        sections = sections[-1:]
    failed: list[str] = []
    for name, part, run in sections:
        log(f"measuring: {name}")
        try:
            rows += run()
        except (builds.BuildError, RuntimeError) as exc:
            log(str(exc))
            failed.append(name)
            rows.append(Row(part, name, "build failed: " + str(exc).splitlines()[-1][:200], "builds", False))
    if args.slow_hypothesis:
        log("running the slow hypothesis tier")
        rows.append(run_slow_hypothesis())

    order = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "f": 5, "hyp": 6}
    rows.sort(key=lambda r: order[r.part])
    elapsed = time.monotonic() - started
    end_load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    text = "\n".join([
        f"# Benchmark results{' (quick smoke run)' if args.quick else ''}",
        "",
        *machine,
        f"- Bench wall time: {elapsed / 60:.1f} min; command: `python -m bench"
        f"{' --quick' if args.quick else ''}{' --serve-only' if args.serve_only else ''}"
        f"{' --slow-hypothesis' if args.slow_hypothesis else ''}`; "
        f"load average at the end: {end_load}",
        "",
        report.table(rows),
        "",
        "Builds are `python -m mkdocs build --strict -q` subprocesses; a cold build gets a fresh, empty",
        "`AINOTES_CACHE_DIR`, a warm (cached) one the cache its tree filled before. Every build but the",
        "first-on-a-machine row shares one `AINOTES_SHARED_CACHE_DIR` (runtime bundle, chart grammars:",
        "what depends on code and tool versions only), as builds on one machine share",
        "`~/.cache/ainotes/shared`. Sizes in kB of 1000",
        "bytes; gz = gzip -9, each file on its own. Scripts are every",
        "`<script src>` of the page (Material's bundle included; the search worker it starts later is not).",
        "The machine was shared with other work while this ran; see the load average above.",
        "",
    ])
    print(report.table(rows))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + _kept_notes(output), encoding="utf-8")
    log(f"written to {output.relative_to(REPO) if output.is_relative_to(REPO) else output}")
    return 1 if failed else 0  # goals missed are results, not failures; a build that failed is


if __name__ == "__main__":
    sys.exit(main())
