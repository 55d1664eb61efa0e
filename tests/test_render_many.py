"""Many renders at once: queued ahead (prefetch), de-duplicated, run in spawn-started workers,
byte-identical to one-at-a-time rendering, with progress; renders are counted, never timed."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from ainotes import render
from ainotes.base import cache, scripts

BASE_SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
    "data": {"values": [{"x": 1, "y": 2}, {"x": 2, "y": 5}, {"x": 3, "y": 3}]},
    "mark": "line",
    "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"}},
    "width": 120,
    "height": 80,
}


def specs(n: int, tag: str = "chart") -> list[dict]:
    """``n`` distinct small specs (the title alone makes each render distinct)."""
    return [{**BASE_SPEC, "title": f"{tag} {i} <&>"} for i in range(n)]


def requests_for(chart_specs: list[dict]) -> list[render.Request]:
    out = []
    for spec in chart_specs:
        out += [render.svg_request(spec, png_scales=(2.0,)), render.vega_request(render.responsive(spec))]
    return out


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("AINOTES_SHARED_CACHE_DIR", str(tmp_path / "runtime"))
    render.shutdown()  # renders an earlier test left running would count in this one
    cache.MEMO.clear()
    render.SESSION.runtime_text.clear()
    yield tmp_path
    render.shutdown()
    cache.MEMO.clear()
    render.SESSION.runtime_text.clear()


def _outputs(chart_specs: list[dict]) -> list[bytes]:
    out = []
    for spec in chart_specs:
        out += [render.svg(spec).encode(), render.png(spec), repr(render.vega(render.responsive(spec))).encode()]
    return out


def _use_cache(monkeypatch, folder: Path) -> None:
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(folder))
    cache.MEMO.clear()


def test_parallel_renders_are_byte_identical_to_serial_ones(fresh, monkeypatch):
    chart_specs = specs(6)
    render.svg(BASE_SPEC)  # V8 runs in this process already: workers must not be forked from it

    _use_cache(monkeypatch, fresh / "serial")
    monkeypatch.setenv(render.WORKERS_ENV, "0")
    serial = render.render_many(requests_for(chart_specs))
    assert serial.workers == 0 and serial.rendered == 12
    serial_out = _outputs(chart_specs)

    _use_cache(monkeypatch, fresh / "parallel")
    monkeypatch.setenv(render.WORKERS_ENV, "2")
    before = render.SESSION.counts.copy()
    parallel = render.render_many(requests_for(chart_specs))
    assert parallel.workers >= 1 and parallel.rendered == 12
    pool = render.SESSION.pool()
    assert pool is not None and pool.start_method == "spawn"
    assert 1 <= pool.processes <= 2  # never more processes than allowed
    assert _outputs(chart_specs) == serial_out
    counted = render.SESSION.counts - before
    assert counted == {"svg": 6, "png": 6, "vega": 6}  # nothing rendered again by svg()/png()/vega()
    # Entry by entry, the two caches hold the same bytes under the same keys.
    serial_files = {p.name: p.read_bytes() for p in (fresh / "serial").glob("*.entry")}
    parallel_files = {p.name: p.read_bytes() for p in (fresh / "parallel").glob("*.entry")}
    assert serial_files == parallel_files and len(serial_files) == 18


def test_each_spec_is_rendered_once_per_batch(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "0")
    chart_specs = specs(3, "dup")
    again = [dict(reversed(list(s.items()))) for s in chart_specs]  # same specs, other key order
    before = render.SESSION.counts.copy()
    summary = render.render_many(requests_for(chart_specs) * 3 + requests_for(again))
    assert summary.requested == 24 and summary.rendered == 6
    assert render.SESSION.counts - before == {"svg": 3, "png": 3, "vega": 3}
    # Everything is cached now: nothing is queued, nothing rendered.
    assert render.prefetch(requests_for(chart_specs)) == 0
    _outputs(chart_specs)
    assert render.SESSION.counts - before == {"svg": 3, "png": 3, "vega": 3}


def test_small_batches_do_not_start_a_pool(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "2")
    summary = render.render_many([render.svg_request(specs(1, "alone")[0])])
    assert summary.workers == 0 and summary.rendered == 1
    assert render.SESSION.pool() is None


def test_prefetched_renders_are_waited_for_not_rendered_again(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "2")
    chart_specs = specs(4, "ahead")
    before = render.SESSION.counts.copy()
    assert render.prefetch(requests_for(chart_specs)) == 8
    # Taken in the reverse of the queue's order: each call waits for its own job only.
    for spec in reversed(chart_specs):
        assert render.png(spec).startswith(b"\x89PNG")
        assert render.svg(spec).startswith("<svg")
        assert render.vega(render.responsive(spec))["$schema"].startswith("https://vega.github.io/schema/vega/")
    render.drain()
    assert render.SESSION.counts - before == {"svg": 4, "png": 4, "vega": 4}


def test_without_a_pool_a_queued_job_renders_on_demand(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "0")
    chart_specs = specs(5, "lazy")
    before = render.SESSION.counts.copy()
    render.prefetch(requests_for(chart_specs))
    assert render.svg(chart_specs[2]).startswith("<svg")
    assert render.SESSION.counts - before == {"svg": 1, "png": 1}  # its PNG came from the same SVG
    render.drain()
    assert render.SESSION.counts - before == {"svg": 5, "png": 5, "vega": 5}


def test_progress_reports_done_of_total(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "2")
    monkeypatch.setattr(render.pool, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(render.pool, "PROGRESS_EVERY_S", 0.0)
    seen: list[tuple[int, int]] = []
    render.render_many(requests_for(specs(4, "progress")), progress=lambda done, total: seen.append((done, total)))
    assert seen, "no progress reported"
    assert seen[-1] == (8, 8)
    assert all(0 < done <= total == 8 for done, total in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_progress_counts_the_whole_build_when_a_pages_renders_end_before_the_next_pages_start(monkeypatch):
    """A build queues each page's renders as it converts the page; the first page's may all be done (asked
    for, or finished by a worker) before the second page queues its own. The count still runs to the build's
    total, the one line a reader sees last, whatever the timing (it was "6 of 6" for 9 renders on a loaded
    machine, "9 of 9" on an idle one)."""
    monkeypatch.setenv(render.WORKERS_ENV, "0")
    monkeypatch.setattr(render.pool, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(render.pool, "PROGRESS_EVERY_S", 0.0)
    seen: list[tuple[int, int]] = []
    first, second = specs(1, "page one"), specs(2, "page two")
    render.prefetch(requests_for(first), progress=lambda done, total: seen.append((done, total)))
    assert render.svg(first[0]).startswith("<svg")
    render.vega(render.responsive(first[0]))
    render.prefetch(requests_for(second))
    render.drain()
    assert seen and seen[-1] == (6, 6), seen  # per chart: the SVG with its PNG, and the live view's Vega
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert all(one != two for one, two in itertools.pairwise(seen)), repr(seen)  # each count said once


def test_a_bad_spec_fails_in_the_caller_as_it_would_serially(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "2")
    bad = {**BASE_SPEC, "mark": "no-such-mark"}
    good = specs(3, "fine")
    render.prefetch([render.svg_request(bad), *requests_for(good)])
    with pytest.raises(ValueError, match="conversion failed"):
        render.svg(bad)
    render.drain()
    assert all(render.svg(spec).startswith("<svg") for spec in good)


def test_runtime_request_builds_the_bundle_once(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "0")
    before = render.SESSION.counts["runtime"]
    render.render_many([render.RUNTIME_REQUEST, render.RUNTIME_REQUEST])
    code = render.runtime_js()
    assert "window.vega" in code and render.SESSION.counts["runtime"] - before == 1


def test_usable_cores_follow_the_affinity_mask():
    assert render.usable_cores() == len(os.sched_getaffinity(0))


def test_worker_limit_reads_the_environment(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "3")
    assert render.worker_limit() == 3
    monkeypatch.setenv(render.WORKERS_ENV, "0")
    assert render.worker_limit() == 0
    monkeypatch.delenv(render.WORKERS_ENV)
    cores = render.usable_cores()
    assert render.worker_limit() == (cores if cores >= 2 else 0)


def test_vega_script_json_is_script_json_of_vega():
    spec = {**BASE_SPEC, "title": "</script><!-- & \u2028 \u2029 é 1e-7", "description": "<b>&amp;</b>"}
    assert render.vega_script_json(spec) == scripts.script_json(render.vega(spec))
    cache.MEMO.clear()  # and from the disk entry
    assert render.vega_script_json(spec) == scripts.script_json(render.vega(spec))


def test_stderr_progress_is_one_line(capsys):
    render.stderr_progress(3, 10)
    assert capsys.readouterr().err == "ainotes: 3 of 10 chart renders done\n"


def test_shared_memo_survives_a_cold_render_cache(fresh, monkeypatch):
    made: list[int] = []

    def make() -> dict:
        made.append(1)
        return {"structure": [1, 2, 3]}

    assert cache.memo_json("grammar-test", {"code": "abc"}, make, shared=True) == {"structure": [1, 2, 3]}
    assert list((fresh / "runtime").glob("*.entry")) and not list((fresh / "cache").glob("*.entry"))
    _use_cache(monkeypatch, fresh / "another-render-cache")  # cold render cache, same shared cache
    assert cache.memo_json("grammar-test", {"code": "abc"}, make, shared=True) == {"structure": [1, 2, 3]}
    assert len(made) == 1
    cache.MEMO.clear()
    assert cache.memo_json("grammar-test", {"code": "abd"}, make, shared=True) and len(made) == 2  # new code


def test_forget_queued_drops_work_nobody_started(monkeypatch):
    monkeypatch.setenv(render.WORKERS_ENV, "0")
    chart_specs = specs(2, "stale")
    before = render.SESSION.counts.copy()
    assert render.prefetch(requests_for(chart_specs)) == 4
    assert render.forget_queued() == 4
    render.drain()
    assert render.SESSION.counts - before == {}
    assert render.svg(chart_specs[0]).startswith("<svg")  # asked for again: rendered then
    assert render.SESSION.counts - before == {"svg": 1}
