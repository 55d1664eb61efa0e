"""Validate what an author writes in a fence body: typed requests, or one-line errors.

Pure text processing, no rendering, no Markdown grammar and no MkDocs: which text is
a fence is Markdown's decision (:mod:`ainotes.markdown.extension`). Every problem raises
:class:`~ainotes.base.errors.InputError` whose message starts with ``page:line``.
The table of fence kinds that calls these parsers is :data:`ainotes.build.site.FENCE_KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.core.checks import FieldError
from ainotes.core.collectives import MAX_RANKS, MIN_RANKS, OPS, RING_OPS
from ainotes.core.hardware import Preset
from ainotes.core.jobs import JOB_FIELDS, ModelsLoader, TrainingJob
from ainotes.core.kernels import Kernel, parse_kernel_spec
from ainotes.fences.body import MAX_FENCE_BODY_CHARS, MAX_TITLE_CHARS, BodyReader, Fence, load_body

# What one fence may ask for; documented in the README ("Limits").
MAX_KERNELS_PER_CHART = 12
MAX_JOBS_PER_TABLE = 20


def split_fences(markdown: str) -> list[Fence]:
    """The page's fences of our kinds as Markdown finds them (kept for ``bench/sites.py``;
    new code calls :func:`ainotes.markdown.extension.locate_fences`)."""
    from ainotes.markdown.extension import locate_fences

    return locate_fences(markdown)


# --------------------------------------------------------------------------
# Fence bodies


@dataclass(frozen=True)
class RooflineRequest:
    preset_ids: tuple[str, ...]
    sparsity: bool
    kernels: tuple[Kernel, ...]
    title: str | None
    chart_id: str | None
    precision: str = "bf16"
    layer: Any = None  # ainotes.fences.inference_notes.LayerRequest: a model's layer as kernels (drawn with the models)


@dataclass(frozen=True)
class CollectiveRequest:
    op: str
    ranks: int
    root: int
    title: str | None
    chart_id: str | None
    schedule: str = "logical"  # "ring": the ring algorithm step by step (all-reduce, reduce-scatter, all-gather)


@dataclass(frozen=True)
class PresetsTableRequest:
    preset_ids: tuple[str, ...]


@dataclass(frozen=True)
class MfuTableRequest:
    """The table's jobs: built while parsing, except those that name a model preset, which the
    drawer builds once the models are loaded (:meth:`resolve`)."""

    jobs: tuple[TrainingJob | PendingJob, ...]

    def resolve(self, models: ModelsLoader) -> tuple[TrainingJob, ...]:
        """Every job built, in the fence's order; a model job's error names its page:line."""
        return tuple(job.build(models) if isinstance(job, PendingJob) else job for job in self.jobs)


def parse_roofline(fence: Fence, where: str, presets: Mapping[str, Preset]) -> RooflineRequest:
    """``roofline`` fence: presets (ids, default all), sparsity, kernels, title, id, precision (default bf16),
    and a model's layer as kernels: model, phase, batch, context, weights_dtype, kv_dtype, compute_dtype, tp
    (:func:`ainotes.fences.inference_notes.parse_layer`; precision then defaults to compute_dtype)."""
    from ainotes.core.hardware import PRECISIONS
    from ainotes.fences.inference_notes import LAYER_KEYS, parse_layer

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("presets", "sparsity", "kernels", "title", "id", "precision", *LAYER_KEYS),
                     lines)
    kernels = _kernels(reader, data.get("kernels"))
    layer = parse_layer(reader, data)
    precision = data.get("precision", layer.compute_dtype if layer is not None else "bf16")
    if precision not in PRECISIONS:
        reader.fail("precision", f"'precision' must be one of {', '.join(PRECISIONS)}: {short(precision)}")
    preset_ids = reader.preset_ids(tuple(presets))
    unit = "vector" if precision == "fp32" else "tensor"
    if not any(presets[i].peak_tflops(precision, unit=unit) for i in preset_ids):
        reader.fail("precision", f"no preset of this chart gives a {precision} {unit} rate: {', '.join(preset_ids)}")
    return RooflineRequest(
        precision=precision,
        preset_ids=preset_ids,
        sparsity=reader.boolean("sparsity", False),
        kernels=kernels,
        title=reader.text("title"),
        chart_id=reader.chart_id(),
        layer=layer,
    )


def _kernels(reader: BodyReader, raw_kernels: Any) -> tuple[Kernel, ...]:
    """A fence's ``kernels`` list: specs, or mappings of ``spec`` and ``label``."""
    raw_kernels = raw_kernels or []
    if not isinstance(raw_kernels, list):
        reader.fail("kernels", f"'kernels' must be a list of kernel specs: {short(raw_kernels)}")
    if len(raw_kernels) > MAX_KERNELS_PER_CHART:
        reader.fail("kernels", f"'kernels' may list at most {MAX_KERNELS_PER_CHART}: {len(raw_kernels)}")
    kernels: list[Kernel] = []
    for index, item in enumerate(raw_kernels):
        spec, label = item, None
        if isinstance(item, dict):
            unknown = set(item) - {"spec", "label"}
            if unknown or "spec" not in item:
                reader.fail("kernels", f"a kernel must be a spec or a mapping of 'spec' and 'label': {short(item)}",
                            item=index)
            spec, label = item["spec"], item.get("label")
            if label is not None and (not isinstance(label, str) or len(label) > MAX_TITLE_CHARS):
                reader.fail(
                    "kernels", f"a kernel 'label' must be text of at most {MAX_TITLE_CHARS} characters: {short(label)}",
                    item=index,
                )
            if label is not None and bad_character(label):
                reader.fail("kernels", f"a kernel 'label' holds a control character ({bad_character(label)})",
                            item=index)
        if not isinstance(spec, str):
            reader.fail("kernels", f"a kernel spec must be text like 'gemm:8192x8192x8192:bf16': {short(spec)}",
                        item=index)
        try:
            kernels.append(parse_kernel_spec(spec, label))
        except InputError as exc:
            reader.fail("kernels", str(exc), item=index)
    return tuple(kernels)


def parse_collective(fence: Fence, where: str, presets: Mapping[str, Preset]) -> CollectiveRequest:
    """``collective`` fence: op, ranks (default 4), root (default 0), schedule (logical or ring), title, id."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("op", "ranks", "root", "schedule", "title", "id"), lines)
    op = data.get("op")
    if op not in OPS:
        reader.fail("op", f"'op' must be one of {', '.join(OPS)}: {short(op)}")
    ranks = reader.integer("ranks", 4, MIN_RANKS, MAX_RANKS)
    root = reader.integer("root", 0, 0, ranks - 1)
    schedule = data.get("schedule", "logical")
    if schedule not in ("logical", "ring"):
        reader.fail("schedule", f"'schedule' must be logical or ring: {short(schedule)}")
    if schedule == "ring" and op not in RING_OPS:
        reader.fail("schedule", f"'schedule: ring' is drawn for {', '.join(RING_OPS)} only, not {op}")
    return CollectiveRequest(op=op, ranks=ranks, root=root, title=reader.text("title"), chart_id=reader.chart_id(),
                             schedule=schedule)


def parse_presets_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> PresetsTableRequest:
    """``presets-table`` fence: optional ``presets`` list; default all."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("presets",), lines)
    return PresetsTableRequest(reader.preset_ids(tuple(presets)))


def parse_mfu_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> MfuTableRequest:
    """``mfu-table`` fence: ``jobs``, a list of training jobs (:class:`ainotes.core.jobs.TrainingJob`
    fields plus a ``name``) to compute MFU and HFU for."""
    data, lines = load_body(fence, where)
    outer = BodyReader(fence, where, data, ("jobs",), lines)
    raw_jobs = data.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        outer.fail("jobs", "'jobs' must be a non-empty list of jobs")
    if len(raw_jobs) > MAX_JOBS_PER_TABLE:
        outer.fail("jobs", f"'jobs' may list at most {MAX_JOBS_PER_TABLE}: {len(raw_jobs)}")
    keys = ("name", *JOB_FIELDS)
    jobs: list[TrainingJob | PendingJob] = []
    for index, raw in enumerate(raw_jobs):
        if not isinstance(raw, dict):
            outer.fail("jobs", f"each job must be a mapping of {', '.join(keys)}: {short(raw)}", item=index)
        job = outer.nested(raw, keys)
        name = job.text("name")
        if not name:
            job.fail("name", "'name' is required for each job")
        pending = PendingJob({k: v for k, v in raw.items() if k != "name"}, name, job, presets)
        jobs.append(pending if "model" in raw else pending.build(None))
    return MfuTableRequest(tuple(jobs))


@dataclass(frozen=True)
class PendingJob:
    """One job of an ``mfu-table`` as written, and where: built by :meth:`build`."""

    fields: Mapping[str, Any]
    name: str
    reader: BodyReader
    presets: Mapping[str, Preset]

    def build(self, models: ModelsLoader | None) -> TrainingJob:
        try:
            return TrainingJob.from_fields(self.fields, self.presets, name=self.name, models=models)
        except FieldError as exc:
            self.reader.fail(exc.field, f"job {short(self.name)}: {exc}")


@dataclass(frozen=True)
class KernelsTableRequest:
    kernels: tuple[Kernel, ...]
    preset_ids: tuple[str, ...]


def parse_kernels_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> KernelsTableRequest:
    """``kernels-table`` fence: ``kernels`` (specs) and optional ``presets`` to show bounds on."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("kernels", "presets"), lines)
    kernels = _kernels(reader, data.get("kernels"))
    if not kernels:
        reader.fail("kernels", "'kernels' must list at least one kernel spec")
    return KernelsTableRequest(kernels, reader.preset_ids(tuple(presets)))


def check_preset_example(fence: Fence, where: str, presets: Mapping[str, Preset]) -> str:
    """``preset-check`` fence: the body is a whole preset file, shown with the loader's verdict."""
    if len(fence.body) > MAX_FENCE_BODY_CHARS:
        raise InputError(
            f"{where}:{fence.start_line}: preset-check fence body must be at most {MAX_FENCE_BODY_CHARS} characters"
        )
    return fence.body


