"""Step times from a PyTorch profiler trace, the ``measured:`` key of the parallelism fence, and the
measured files' parse cache. The real trace is Holistic Trace Analysis' two-rank A100 test trace
(tests/fixtures/measured/SOURCES.md); the small traces built here are inputs for the refusals."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.markdown.extension import convert_page
from ainotes.measurements import read as read_module
from ainotes.measurements.read import read_measured
from ainotes.measurements.steps import step_times

FIXTURES = Path(__file__).parent / "fixtures"
HTA = FIXTURES / "measured" / "kineto" / "hta-nccl-2rank.pt.trace.json.gz"


def _trace(steps: list[tuple[str, str, float]], *, world: int | None = 2, group: int = 2) -> dict:
    """A trace in Kineto's layout: the given ProfilerStep events (category, name, µs), one GEMM kernel and
    one NCCL all-reduce kernel carrying PyTorch's collective record."""
    events: list[dict] = []
    ts = 1000.0
    for category, name, dur in steps:
        events.append({"ph": "X", "cat": category, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}})
        ts += dur + 10
    events.append({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7,
                   "ts": 1200.0, "dur": 500.0, "args": {"device": 0, "stream": 7}})
    events.append({"ph": "X", "cat": "kernel",
                   "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0,
                   "tid": 20, "ts": 1800.0, "dur": 250.0,
                   "args": {"Collective name": "allreduce", "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20,
                            "Group size": group, "dtype": "BFloat16"}})
    data: dict = {"schemaVersion": 1, "traceEvents": events}
    if world is not None:
        data["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": world}
    return data


def test_step_times_of_the_real_trace_leave_the_first_step_out() -> None:
    found = step_times(read_measured(HTA))
    # By hand from the file: ProfilerStep#4 222442.191 µs, #5 219726.905 µs, #6 224936.243 µs (user_annotation).
    assert found is not None and found.names == ("ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6")
    assert found.warmup == 1 and found.counted_s == pytest.approx((0.219726905, 0.224936243))
    assert found.median_s == pytest.approx((0.219726905 + 0.224936243) / 2)
    assert (found.min_s, found.max_s) == pytest.approx((0.219726905, 0.224936243))
    assert "ProfilerStep#4" in found.warmup_text() and "warm-up" in found.warmup_text()


def test_steps_are_ordered_by_number_and_gpu_annotations_stand_in(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_trace([("gpu_user_annotation", "ProfilerStep#12", 900.0),
                                       ("gpu_user_annotation", "ProfilerStep#10", 5000.0),
                                       ("gpu_user_annotation", "ProfilerStep#11", 1100.0)])))
    found = step_times(read_measured(path))
    assert found is not None and "GPU" in found.source
    assert found.names[0] == "ProfilerStep#10" and found.median_s == pytest.approx(1000e-6)


def test_the_command_adds_step_times_to_its_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measured", str(HTA), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert {"format", "path", "collectives", "kernels", "steps", "notes"} <= record.keys()  # CONTRACT.md's keys
    assert record["step_times"]["counted"] == 2 and record["step_times"]["warmup_steps"] == 1
    assert record["step_times"]["median_s"] == pytest.approx(0.2223315740)


# --- the parallelism fence's measured: key ------------------------------------------------------------

@pytest.fixture()
def project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "parallel", tmp_path / "presets")
    (tmp_path / "docs" / "measured").mkdir(parents=True)
    shutil.copy(HTA, tmp_path / "docs" / "measured" / "hta.pt.trace.json.gz")
    return tmp_path


def _page(project: Path, extra: str, gpus: int = 2, site: NotesSite | None = None) -> str:
    body = (f"model: lab-48h\npreset: lab-h100\ngpus: {gpus}\nglobal_batch_tokens: 65536\nrecompute: full\n{extra}")
    source = f"# P\n\n```parallelism\n{body}\n```\n"
    return convert_page(site or NotesSite(project / "presets"), source, "notes/p.md", "notes/p/")


def test_the_trace_is_drawn_beside_the_models_step(project: Path) -> None:
    site = NotesSite(project / "presets")
    html = _page(project, "measured: docs/measured/hta.pt.trace.json.gz\nid: run", site=site)
    text = unescape(re.sub(r"<[^>]+>", " ", html))
    median = (0.219726905 + 0.224936243) / 2
    match = re.search(r"the model gives ([\d.]+) s for ([^,]+?), the layout", text)
    assert match, text[:2000]
    model_s = float(match.group(1))
    # The caption's error is the model's step over the measured median, less one, in whole percent.
    shown = re.search(r"an error of ([+−][\d,]+) %", text).group(1)
    assert int(shown.replace("−", "-").replace(",", "")) == pytest.approx((model_s / median - 1) * 100, abs=1.5)
    assert "ProfilerStep#4) left out as warm-up" in text
    assert "all-reduce" in text and "31,502,336" in text  # the trace's largest DDP bucket, by hand: 7,875,584 floats
    assert 'href="../../measured/hta.pt.trace.json.gz" download' in html
    # The chart: a row for the trace at the first state, its median as a bar, least to greatest as a rule,
    # the model's step of the tagged layout as the diamond, and a step axis long enough for all of them.
    spec = json.loads(site.embed_files(site.charts["run"])["json"])
    rows = [r for r in spec["datasets"]["layouts"] if r["k"] == "lab-48h|lab-h100|2"]
    measured = next(r for r in rows if r["rank"] == 0)
    tagged = next(r for r in rows if r.get("tag") == "the trace's layout")
    assert measured["measured"] == measured["step_s"] == pytest.approx(median)
    assert (measured["lo_s"], measured["hi_s"]) == pytest.approx((0.219726905, 0.224936243))
    assert measured["mark_s"] == pytest.approx(tagged["step_s"]) and tagged["label"] == match.group(2)
    t_max = next(p for p in spec["params"] if p["name"] == "t_max")["value"]["lab-48h|lab-h100|2"]
    assert t_max >= max(r["step_s"] for r in rows) and t_max >= measured["hi_s"]


@pytest.mark.parametrize(("make", "gpus", "words"), [
    (lambda: _trace([("user_annotation", "ProfilerStep#1", 100.0)], world=4), 2,
     "is a trace of 4 ranks (distributedInfo.world_size), but the fence's first state has gpus: 2"),
    (lambda: _trace([], world=2), 2, "marks no step"),
    (lambda: _trace([("user_annotation", "ProfilerStep#1", 100.0)], world=None, group=8), 2,
     "has NCCL groups of 8 ranks"),
])
def test_a_trace_that_contradicts_the_fence_is_one_line_at_its_key(project: Path, make, gpus: int,
                                                                   words: str) -> None:
    (project / "docs" / "measured" / "bad.json").write_text(json.dumps(make()))
    with pytest.raises(InputError) as error:
        _page(project, "measured: docs/measured/bad.json", gpus)
    message = str(error.value)
    assert "\n" not in message and message.startswith("notes/p.md:9: ") and words in message


def test_a_file_that_is_no_trace_is_refused(project: Path) -> None:
    shutil.copy(FIXTURES / "measured" / "nccl-tests" / "rtx5090-2rank-allreduce-tagged.log",
                project / "docs" / "measured" / "run.log")
    with pytest.raises(InputError, match=r"notes/p\.md:9: docs/measured/run\.log is not a PyTorch profiler trace"):
        _page(project, "measured: docs/measured/run.log")


# --- the parse cache -------------------------------------------------------------------------------

def test_an_unchanged_file_is_parsed_once_and_an_edited_one_again(tmp_path: Path) -> None:
    read_module.clear_cache()
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(_trace([("user_annotation", "ProfilerStep#1", 100.0),
                                                      ("user_annotation", "ProfilerStep#2", 300.0)])).encode()))
    first = read_measured(path)
    assert read_measured(path) is first
    path.write_bytes(gzip.compress(json.dumps(_trace([("user_annotation", "ProfilerStep#1", 100.0),
                                                      ("user_annotation", "ProfilerStep#2", 700.0)])).encode()))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # an editor's save, a second later
    again = read_measured(path)
    assert again is not first and step_times(again).median_s == pytest.approx(700e-6)


def test_the_measured_fence_and_the_command_give_the_same_step_time(project: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    html = convert_page(NotesSite(project / "presets"),
                        "# M\n\n```measured\nfile: docs/measured/hta.pt.trace.json.gz\n```\n", "notes/m.md", "notes/m/")
    assert main(["measured", str(project / "docs" / "measured" / "hta.pt.trace.json.gz")]) == 0
    line = next(li for li in capsys.readouterr().out.splitlines() if li.startswith("step time: "))
    assert f"Step time: {line.removeprefix('step time: ')}." in unescape(html)
    assert "median 222.3 ms over 2 steps" in line  # (219.726905 + 224.936243) / 2 ms


# --- the inference fence's measured: key ---------------------------------------------------------------

@pytest.fixture()
def serving(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "inference", tmp_path / "presets")
    (tmp_path / "docs" / "measured").mkdir(parents=True)
    return tmp_path


def _decode_trace(durations_us: list[float], world: int | None = None) -> dict:
    """A decode trace in Kineto's layout: one ProfilerStep#N (user_annotation) and one kernel per step."""
    events: list[dict] = []
    ts = 0.0
    for number, dur in enumerate(durations_us):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{number}", "pid": 1, "tid": 1,
                       "ts": ts, "dur": dur, "args": {}})
        events.append({"ph": "X", "cat": "kernel", "name": "gemv_bf16", "pid": 0, "tid": 7, "ts": ts + 10,
                       "dur": dur - 20, "args": {}})
        ts += dur + 50
    data: dict = {"schemaVersion": 1, "traceEvents": events}
    if world is not None:
        data["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": world}
    return data


def _serve(project: Path, extra: str, site: NotesSite | None = None) -> str:
    body = f"models: [lab-13b]\nlink: lab-link\ncontext: 4096\n{extra}"
    return convert_page(site or NotesSite(project / "presets"), f"# S\n\n```inference\n{body}\n```\n", "serve.md",
                        "serve/")


def test_a_decode_trace_is_a_point_beside_the_models_step(serving: Path) -> None:
    (serving / "docs" / "measured" / "decode.json").write_text(json.dumps(
        _decode_trace([30000, 21000, 20500, 21500, 20800])))
    site = NotesSite(serving / "presets")
    html = _serve(serving, "measured: docs/measured/decode.json\nmeasured_batch: 16\nid: serve", site)
    text = unescape(re.sub(r"<[^>]+>", " ", html))
    # By hand: the steps after the first (warm-up) are 21.0, 20.5, 21.5, 20.8 ms: median 20.9 ms.
    match = re.search(r"at batch 16 takes 20\.9 ms, .*?the model gives ([\d.]+) ms .*?an error of ([+−][\d,]+) %",
                      text)
    assert match, text[:3000]
    assert int(match.group(2).replace("−", "-")) == pytest.approx((float(match.group(1)) / 20.9 - 1) * 100, abs=1)
    assert "ProfilerStep#0) left out as warm-up" in text
    spec = json.loads(site.embed_files(site.charts["serve"])["json"])
    point = [r for r in spec["datasets"]["setups"] if "mt" in r]
    assert len(point) == 1 and (point[0]["m"], point[0]["mb"], point[0]["mc"]) == ("lab-13b", 16, 4096)
    assert point[0]["mt"] == pytest.approx(20.9e-3) and (point[0]["mlo"], point[0]["mhi"]) == pytest.approx(
        (20.5e-3, 21.5e-3))


@pytest.mark.parametrize(("trace", "extra", "words"), [
    (_decode_trace([100.0, 90.0], world=2), "measured_batch: 8", "serve.md:7: docs/measured/d.json is a trace of 2 "
                                                                  "ranks (distributedInfo.world_size), but the fence's "
                                                                  "first state has tp: 1"),
    (_decode_trace([100.0, 90.0]), "", "serve.md:7: a measured decode trace needs 'measured_batch'"),
    ({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 5}]}, "measured_batch: 8",
     "serve.md:7: docs/measured/d.json marks no step"),
])
def test_a_decode_trace_that_contradicts_the_fence_is_one_line(serving: Path, trace: dict, extra: str,
                                                               words: str) -> None:
    (serving / "docs" / "measured" / "d.json").write_text(json.dumps(trace))
    with pytest.raises(InputError) as error:
        _serve(serving, f"measured: docs/measured/d.json\n{extra}")
    assert "\n" not in str(error.value) and words in str(error.value)


def test_a_new_process_reads_the_kept_trace_and_an_edited_trace_again(project: Path, monkeypatch) -> None:
    """What the chart takes from a trace is kept on disk by the trace's bytes: a new process (nothing in
    memory) draws the same page without parsing it, nor searching the layouts when the drawing is kept; an
    edited trace is parsed again and its page shows its new steps."""
    from ainotes.base import cache
    from ainotes.charts import parallelism as parallel_chart
    from ainotes.measurements import read

    steps = [("user_annotation", f"ProfilerStep#{n}", dur) for n, dur in ((1, 900.0), (2, 200.0), (3, 220.0))]
    trace = project / "docs" / "measured" / "run.json"
    trace.write_text(json.dumps(_trace(steps)))
    first = _page(project, "measured: docs/measured/run.json")
    parsed: list[Path] = []
    searched: list[object] = []
    real_read, real_search = read._read, parallel_chart.build_chart
    monkeypatch.setattr(read, "_read", lambda path, **kw: parsed.append(path) or real_read(path, **kw))
    monkeypatch.setattr(parallel_chart, "build_chart", lambda *a, **kw: searched.append(a) or real_search(*a, **kw))
    cache.MEMO.clear()
    read.clear_cache()
    assert _page(project, "measured: docs/measured/run.json") == first and parsed == [] and searched == []
    trace.write_text(json.dumps(_trace([*steps[:2], ("user_annotation", "ProfilerStep#3", 240.0)])))
    cache.MEMO.clear()
    read.clear_cache()
    edited = _page(project, "measured: docs/measured/run.json")
    assert len(parsed) == 1 and len(searched) == 1 and edited != first
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(project / "empty-cache"))  # a clean build of the edited trace
    cache.MEMO.clear()
    read.clear_cache()
    assert _page(project, "measured: docs/measured/run.json") == edited
