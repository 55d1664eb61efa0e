"""Validate what an author writes in a fence body: typed requests, or one-line errors.

Pure text processing, no rendering, no Markdown grammar and no MkDocs: which text is
a fence is Markdown's decision (:mod:`ainotes.markdown.extension`). Every problem raises
:class:`~ainotes.base.errors.InputError` whose message starts with ``page:line``.
The table of fence kinds that calls these parsers is :data:`ainotes.build.site.FENCE_KINDS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import yaml

from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.core import checks
from ainotes.core.checks import FieldError
from ainotes.core.collectives import MAX_RANKS, MIN_RANKS, OPS, RING_OPS
from ainotes.core.hardware import Preset
from ainotes.core.jobs import JOB_FIELDS, ModelsLoader, TrainingJob
from ainotes.core.kernels import Kernel, parse_kernel_spec

_T = TypeVar("_T")

# What one fence may ask for; documented in the README ("Limits").
MAX_KERNELS_PER_CHART = 12
MAX_PRESETS_PER_CHART = 16
MAX_TITLE_CHARS = 120
MAX_JOBS_PER_TABLE = 20
MAX_FENCE_BODY_CHARS = 20_000

_CHART_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Fence:
    """One of our fences as Markdown found it: its kind, body and the 1-based line it opens on."""

    kind: str
    body: str
    start_line: int
    end_line: int | None = None  # its closing line, where known


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


# libyaml's parser where PyYAML has it (its wheels do): the same documents and lines, a few
# times faster than the pure-Python one, and every fence body of every build goes through it.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SAFE_LOADER):  # type: ignore[valid-type,misc]  # a base chosen at import
    """Safe YAML that also remembers the line of every mapping and of each of its keys."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.key_lines: dict[int, dict[object, int]] = {}
        self._keep_alive: list[dict | list] = []  # ids stay unique while the loader lives


def _construct_mapping_with_lines(loader: _LineLoader, node: yaml.MappingNode):
    data: dict = {}
    lines: dict[object, int] = {None: node.start_mark.line}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            lines[loader.construct_object(key_node)] = key_node.start_mark.line
    loader.key_lines[id(data)] = lines
    loader._keep_alive.append(data)
    yield data
    data.update(loader.construct_mapping(node))


def _construct_sequence_with_lines(loader: _LineLoader, node: yaml.SequenceNode):
    data: list = []
    lines: dict[object, int] = {None: node.start_mark.line}
    lines.update({index: item.start_mark.line for index, item in enumerate(node.value)})
    loader.key_lines[id(data)] = lines
    loader._keep_alive.append(data)
    yield data
    data.extend(loader.construct_sequence(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping_with_lines)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence_with_lines)


def _load_body(fence: Fence, where: str) -> tuple[dict[str, Any], dict[int, dict[object, int]]]:
    if len(fence.body) > MAX_FENCE_BODY_CHARS:
        raise InputError(
            f"{where}:{fence.start_line}: {fence.kind} fence body must be at most "
            f"{MAX_FENCE_BODY_CHARS} characters: {len(fence.body)}"
        )
    loader = None
    try:
        loader = _LineLoader(fence.body)  # the reader refuses control characters here
        data = loader.get_single_data() if fence.body.strip() else {}
    except yaml.YAMLError as exc:
        line = fence.start_line + 1 + _yaml_error_line(exc, fence.body)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{where}:{line}: {fence.kind} fence body is not valid YAML: {problem}") from None
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. unhashable keys, deep nesting
        raise InputError(f"{where}:{fence.start_line}: {fence.kind} fence body cannot be read: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(
            f"{where}:{fence.start_line}: {fence.kind} fence body must be a YAML mapping of keys, "
            f"not {_type_name(data)}"
        )
    return data, loader.key_lines


def _yaml_error_line(exc: yaml.YAMLError, body: str) -> int:
    """The 0-based line of ``body`` that holds the mistake YAML found, which is not always
    where the reader noticed it.

    An unclosed ``[`` or ``{`` is noticed at the next ``key:``, lines on: the mistake ends the
    last value read before that. An unclosed quote is noticed at the end, a ``key`` without
    ``:`` on the next line: the mistake is where the quote or the key began."""
    problem = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context_mark", None)
    if problem is None:
        return 0
    if isinstance(exc, yaml.parser.ParserError) and str(exc.context or "").startswith("while parsing a flow"):
        last = None
        try:
            for token in yaml.scan(body, Loader=yaml.SafeLoader):
                if token.start_mark.index >= problem.index:
                    break
                last = token
        except yaml.YAMLError:
            pass
        return problem.line if last is None else last.start_mark.line
    stated = str(getattr(exc, "problem", "") or "")
    if context is not None and ("end of stream" in stated or "could not find expected ':'" in stated):
        return context.line
    return problem.line


class _Reader:
    """Reads typed keys out of a fence body, raising page:line errors."""

    def __init__(
        self,
        fence: Fence,
        where: str,
        data: Mapping[str, Any],
        allowed: tuple[str, ...],
        key_lines: dict[int, dict[object, int]],
    ):
        self.fence, self.where, self.data = fence, where, data
        self.key_lines = key_lines
        self.lines = key_lines.get(id(data), {})
        for key in data:
            if key not in allowed:
                self.fail(
                    str(key), f"unknown key {short(str(key))} in {fence.kind} fence (allowed: {', '.join(allowed)})"
                )

    def fail(self, key: str, message: str, *, item: int | None = None) -> NoReturn:
        """Raise for ``key``, at its line in the page (the mapping's line if it is absent), or at
        the line of its list's ``item`` (0-based) where that list stands on lines of its own."""
        line = self.lines.get(key, self.lines.get(None))
        value = self.data.get(key) if isinstance(self.data, Mapping) else None
        if item is not None and isinstance(value, list):
            line = self.key_lines.get(id(value), {}).get(item, line)
        page_line = self.fence.start_line if line is None else self.fence.start_line + 1 + line
        raise InputError(f"{self.where}:{page_line}: {message}")

    def nested(self, data: Mapping[str, Any], allowed: tuple[str, ...]) -> _Reader:
        return _Reader(self.fence, self.where, data, allowed, self.key_lines)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"{short(key)} must be true or false: {short(value)}")
        return value

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        return self.checked(checks.whole_number, key, self.data.get(key, default), low=low, high=high)

    def text(self, key: str, max_chars: int = MAX_TITLE_CHARS) -> str | None:
        value = self.data.get(key)
        return None if value is None else self.checked(checks.one_line_text, key, value, max_chars=max_chars)

    def checked(self, check: Callable[..., _T], key: str, value: Any, *args: Any, **kwargs: Any) -> _T:
        """``check(value, 'key', key, ...)`` with its message placed at the key's line."""
        try:
            return check(value, short(key), key, *args, **kwargs)
        except FieldError as exc:
            self.fail(exc.field or key, str(exc))
            raise  # unreachable: fail raises

    def chart_id(self) -> str | None:
        value = self.data.get("id")
        if value is None:
            return None
        if not isinstance(value, str) or not _CHART_ID.match(value) or len(value) > 64:
            self.fail("id", f"'id' must be lowercase letters, digits and hyphens (at most 64): {short(value)}")
        return value

    def preset_ids(self, known: tuple[str, ...]) -> tuple[str, ...]:
        value = self.data.get("presets")
        if value is None or value == "all":
            return known
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value:
            self.fail("presets", f"'presets' must be a list of preset ids or 'all': {short(value)}")
        if len(value) > MAX_PRESETS_PER_CHART:
            self.fail("presets", f"'presets' may name at most {MAX_PRESETS_PER_CHART}: {len(value)}")
        ids = []
        for index, item in enumerate(value):
            if item not in known:
                self.fail("presets", f"unknown preset {short(item)} (known: {', '.join(known)})", item=index)
            if item not in ids:
                ids.append(item)
        return tuple(ids)


def parse_roofline(fence: Fence, where: str, presets: Mapping[str, Preset]) -> RooflineRequest:
    """``roofline`` fence: presets (ids, default all), sparsity, kernels, title, id, precision (default bf16),
    and a model's layer as kernels: model, phase, batch, context, weights_dtype, kv_dtype, compute_dtype, tp
    (:func:`ainotes.fences.inference_notes.parse_layer`; precision then defaults to compute_dtype)."""
    from ainotes.core.hardware import PRECISIONS
    from ainotes.fences.inference_notes import LAYER_KEYS, parse_layer

    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("presets", "sparsity", "kernels", "title", "id", "precision", *LAYER_KEYS),
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


def _kernels(reader: _Reader, raw_kernels: Any) -> tuple[Kernel, ...]:
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
    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("op", "ranks", "root", "schedule", "title", "id"), lines)
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
    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("presets",), lines)
    return PresetsTableRequest(reader.preset_ids(tuple(presets)))


def parse_mfu_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> MfuTableRequest:
    """``mfu-table`` fence: ``jobs``, a list of training jobs (:class:`ainotes.core.jobs.TrainingJob`
    fields plus a ``name``) to compute MFU and HFU for."""
    data, lines = _load_body(fence, where)
    outer = _Reader(fence, where, data, ("jobs",), lines)
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
    reader: _Reader
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
    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("kernels", "presets"), lines)
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


def _type_name(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number", bool: "true/false"}.get(
        type(value), type(value).__name__
    )
