"""Validate what an author writes in a fence body: typed requests, or one-line errors.

Pure text processing, no rendering, no Markdown grammar and no MkDocs: which text is
a fence is Markdown's decision (:mod:`ainotes.markdown`). Every problem raises
:class:`~ainotes.errors.InputError` whose message starts with ``page:line``.
The table of fence kinds that calls these parsers is :data:`ainotes.site.FENCE_KINDS`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ainotes.collectives import MAX_RANKS, MIN_RANKS, OPS
from ainotes.errors import InputError
from ainotes.kernels import Kernel, parse_kernel_spec
from ainotes.textcheck import bad_character, short

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
    new code calls :func:`ainotes.markdown.locate_fences`)."""
    from ainotes.markdown import locate_fences

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


@dataclass(frozen=True)
class CollectiveRequest:
    op: str
    ranks: int
    root: int
    title: str | None
    chart_id: str | None


@dataclass(frozen=True)
class PresetsTableRequest:
    preset_ids: tuple[str, ...]


@dataclass(frozen=True)
class MfuJob:
    name: str
    params: float
    tokens_per_second: float
    gpus: int
    peak_tflops: float | None
    preset_id: str | None
    layers: int | None
    heads: int | None
    head_dim: int | None
    seq_len: int | None
    recompute: str


@dataclass(frozen=True)
class MfuTableRequest:
    jobs: tuple[MfuJob, ...]


class _LineLoader(yaml.SafeLoader):
    """Safe YAML that also remembers the line of every mapping and of each of its keys."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.key_lines: dict[int, dict[object, int]] = {}
        self._keep_alive: list[dict] = []  # ids stay unique while the loader lives


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


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping_with_lines)


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
        mark = getattr(exc, "problem_mark", None)
        line = fence.start_line + 1 + (mark.line if mark is not None else 0)
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
                self.fail(str(key), f"unknown key {short(str(key))} in {fence.kind} fence (allowed: {', '.join(allowed)})")

    def fail(self, key: str, message: str) -> None:
        """Raise for ``key``, at its line in the page (the mapping's line if it is absent)."""
        line = self.lines.get(key, self.lines.get(None))
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
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"{short(key)} must be a whole number: {short(value)}")
        if not low <= value <= high:
            self.fail(key, f"{short(key)} must be between {low} and {high}: {value}")
        return value

    def number(self, key: str, *, required: bool = False, integral: bool = False) -> float | None:
        value = self.data.get(key)
        if value is None:
            if required:
                self.fail(key, f"{short(key)} is required")
            return None
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                self.fail(key, f"{short(key)} must be a number: {short(value)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, f"{short(key)} must be a number: {short(value)}")
        if not math.isfinite(value) or value <= 0:
            self.fail(key, f"{short(key)} must be a finite number > 0: {short(value)}")
        if integral and value != int(value):
            self.fail(key, f"{short(key)} must be a whole number: {short(value)}")
        return value

    def text(self, key: str, max_chars: int = MAX_TITLE_CHARS) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail(key, f"{short(key)} must be text: {short(value)}")
        if len(value) > max_chars:
            self.fail(key, f"{short(key)} must be at most {max_chars} characters: {len(value)}")
        if "\n" in value.strip():
            self.fail(key, f"{short(key)} must be one line")
        bad = bad_character(value)
        if bad is not None:
            self.fail(key, f"{short(key)} holds a control character ({bad}), which no page or SVG can show")
        return value.strip()

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
        for item in value:
            if item not in known:
                self.fail("presets", f"unknown preset {short(item)} (known: {', '.join(known)})")
            if item not in ids:
                ids.append(item)
        return tuple(ids)


def parse_roofline(fence: Fence, where: str, known_presets: tuple[str, ...]) -> RooflineRequest:
    """``roofline`` fence: presets (ids, default all), sparsity, kernels, title, id, precision (default bf16)."""
    from ainotes.hardware import PRECISIONS

    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("presets", "sparsity", "kernels", "title", "id", "precision"), lines)
    kernels = _kernels(reader, data.get("kernels"))
    precision = data.get("precision", "bf16")
    if precision not in PRECISIONS:
        reader.fail("precision", f"'precision' must be one of {', '.join(PRECISIONS)}: {short(precision)}")
    return RooflineRequest(
        precision=precision,
        preset_ids=reader.preset_ids(known_presets),
        sparsity=reader.boolean("sparsity", False),
        kernels=kernels,
        title=reader.text("title"),
        chart_id=reader.chart_id(),
    )


def _kernels(reader: _Reader, raw_kernels: Any) -> tuple[Kernel, ...]:
    """A fence's ``kernels`` list: specs, or mappings of ``spec`` and ``label``."""
    raw_kernels = raw_kernels or []
    if not isinstance(raw_kernels, list):
        reader.fail("kernels", f"'kernels' must be a list of kernel specs: {short(raw_kernels)}")
    if len(raw_kernels) > MAX_KERNELS_PER_CHART:
        reader.fail("kernels", f"'kernels' may list at most {MAX_KERNELS_PER_CHART}: {len(raw_kernels)}")
    kernels: list[Kernel] = []
    for item in raw_kernels:
        spec, label = item, None
        if isinstance(item, dict):
            unknown = set(item) - {"spec", "label"}
            if unknown or "spec" not in item:
                reader.fail("kernels", f"a kernel must be a spec or a mapping of 'spec' and 'label': {short(item)}")
            spec, label = item["spec"], item.get("label")
            if label is not None and (not isinstance(label, str) or len(label) > MAX_TITLE_CHARS):
                reader.fail("kernels", f"a kernel 'label' must be text of at most {MAX_TITLE_CHARS} characters: {short(label)}")
            if label is not None and bad_character(label):
                reader.fail("kernels", f"a kernel 'label' holds a control character ({bad_character(label)})")
        if not isinstance(spec, str):
            reader.fail("kernels", f"a kernel spec must be text like 'gemm:8192x8192x8192:bf16': {short(spec)}")
        try:
            kernels.append(parse_kernel_spec(spec, label))
        except InputError as exc:
            reader.fail("kernels", str(exc))
    return tuple(kernels)


def parse_collective(fence: Fence, where: str, known_presets: tuple[str, ...] = ()) -> CollectiveRequest:
    """``collective`` fence: op, ranks (default 4), root (default 0), title, id."""
    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("op", "ranks", "root", "title", "id"), lines)
    op = data.get("op")
    if op not in OPS:
        reader.fail("op", f"'op' must be one of {', '.join(OPS)}: {short(op)}")
    ranks = reader.integer("ranks", 4, MIN_RANKS, MAX_RANKS)
    root = reader.integer("root", 0, 0, ranks - 1)
    return CollectiveRequest(op=op, ranks=ranks, root=root, title=reader.text("title"), chart_id=reader.chart_id())


def parse_presets_table(fence: Fence, where: str, known_presets: tuple[str, ...]) -> PresetsTableRequest:
    """``presets-table`` fence: optional ``presets`` list; default all."""
    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("presets",), lines)
    return PresetsTableRequest(reader.preset_ids(known_presets))


_JOB_KEYS = (
    "name", "params", "tokens_per_second", "gpus", "peak_tflops", "preset",
    "layers", "heads", "head_dim", "seq_len", "recompute",
)


def parse_mfu_table(fence: Fence, where: str, known_presets: tuple[str, ...]) -> MfuTableRequest:
    """``mfu-table`` fence: ``jobs``, a list of training jobs to compute MFU and HFU for."""
    data, lines = _load_body(fence, where)
    outer = _Reader(fence, where, data, ("jobs",), lines)
    raw_jobs = data.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        outer.fail("jobs", "'jobs' must be a non-empty list of jobs")
    if len(raw_jobs) > MAX_JOBS_PER_TABLE:
        outer.fail("jobs", f"'jobs' may list at most {MAX_JOBS_PER_TABLE}: {len(raw_jobs)}")
    jobs = []
    for raw in raw_jobs:
        if not isinstance(raw, dict):
            outer.fail("jobs", f"each job must be a mapping of {', '.join(_JOB_KEYS)}: {short(raw)}")
        job = outer.nested(raw, _JOB_KEYS)
        name = job.text("name")
        if not name:
            job.fail("name", "'name' is required for each job")
        preset = raw.get("preset")
        peak = job.number("peak_tflops")
        if (preset is None) == (peak is None):
            job.fail("preset", f"job {short(name)} needs exactly one of 'preset' and 'peak_tflops'")
        if preset is not None and preset not in known_presets:
            job.fail("preset", f"unknown preset {short(preset)} (known: {', '.join(known_presets)})")
        attention = [job.number(k, integral=True) for k in ("layers", "heads", "head_dim", "seq_len")]
        if any(a is not None for a in attention) and not all(a is not None for a in attention):
            job.fail("layers", f"job {short(name)}: give all of layers, heads, head_dim, seq_len or none")
        recompute = raw.get("recompute", "none")
        if recompute not in ("none", "selective", "full"):
            job.fail("recompute", f"'recompute' must be none, selective or full: {short(recompute)}")
        layers, heads, head_dim, seq_len = (int(a) if a is not None else None for a in attention)
        jobs.append(
            MfuJob(
                name=name,
                params=job.number("params", required=True),
                tokens_per_second=job.number("tokens_per_second", required=True),
                gpus=int(job.number("gpus", required=True, integral=True)),
                peak_tflops=peak,
                preset_id=preset,
                layers=layers, heads=heads, head_dim=head_dim, seq_len=seq_len,
                recompute=recompute,
            )
        )
    return MfuTableRequest(tuple(jobs))


@dataclass(frozen=True)
class KernelsTableRequest:
    kernels: tuple[Kernel, ...]
    preset_ids: tuple[str, ...]


def parse_kernels_table(fence: Fence, where: str, known_presets: tuple[str, ...]) -> KernelsTableRequest:
    """``kernels-table`` fence: ``kernels`` (specs) and optional ``presets`` to show bounds on."""
    data, lines = _load_body(fence, where)
    reader = _Reader(fence, where, data, ("kernels", "presets"), lines)
    kernels = _kernels(reader, data.get("kernels"))
    if not kernels:
        reader.fail("kernels", "'kernels' must list at least one kernel spec")
    return KernelsTableRequest(kernels, reader.preset_ids(known_presets))


def check_preset_example(fence: Fence, where: str, known_presets: tuple[str, ...] = ()) -> str:
    """``preset-check`` fence: the body is a whole preset file, shown with the loader's verdict."""
    if len(fence.body) > MAX_FENCE_BODY_CHARS:
        raise InputError(f"{where}:{fence.start_line}: preset-check fence body must be at most {MAX_FENCE_BODY_CHARS} characters")
    return fence.body


def _type_name(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number", bool: "true/false"}.get(
        type(value), type(value).__name__
    )
