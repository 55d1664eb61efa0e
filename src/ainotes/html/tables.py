"""HTML tables computed from the core: presets, training jobs, kernels, preset checks.

Every cell is computed here from the core's values, and every string that came
from a user (preset names, sources, job names, kernel labels) is escaped.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.core import roofline, utilization
from ainotes.core.hardware import (
    FILE_PRECISIONS,
    FP16_PRECISIONS,
    NEUTRAL_UNIT_TERMS,
    PRECISION_LABELS,
    PRECISIONS,
    UNITS,
    Preset,
    Source,
)
from ainotes.core.kernels import Kernel
from ainotes.presets.gpus import load_preset

# The two kinds of unit in the notes' own words; each preset's vendor terms go beside them.
MATRIX_UNITS = NEUTRAL_UNIT_TERMS["tensor"]
VECTOR_UNITS = NEUTRAL_UNIT_TERMS["vector"]
# A GPU × kernel table stays narrow enough for a 1280 px page (about 690 px of text column) with
# this many kernel columns; more kernels continue in the next table.
KERNELS_PER_BOUNDS_TABLE = 5


def breakable_html(text: str) -> str:
    """``text`` escaped, with a line-break opportunity (``<wbr>``) after each ``_``, ``,`` and ``(``:
    a kernel's long symbol (``ampere_fp16_s16816gemm_fp16_128x128_ldg8_...``) then wraps inside its
    cell instead of widening the table past its column; copied, it reads the same."""
    return "".join(escape(char) + ("<wbr>" if char in "_,(" else "") for char in text)


def notes_table(head: Sequence[str], rows: Iterable[Sequence[str]], css_class: str, numeric_from: int = 1, *,
           groups: Sequence[tuple[str, int]] = (), labels: Sequence[str] | None = None) -> str:
    """A table; ``head`` cells are escaped, row cells must already be HTML.

    ``groups`` adds a header row above ``head`` (text, column span). Each cell carries its column's
    name (``labels``, default ``head``) as ``data-label``: on a narrow screen notes.css stacks each row
    into a card whose cells name themselves. The ARIA roles keep the table a table to a screen reader
    whichever way it is laid out.
    """
    labels = list(labels) if labels is not None else list(head)
    group_row = ""
    if groups:
        group_row = '<tr role="row" class="ainotes-table__groups">' + "".join(
            f'<th scope="colgroup" role="columnheader" colspan="{span}">{escape(text)}</th>' if text
            else f'<td colspan="{span}"></td>' for text, span in groups) + "</tr>"
    th = "".join(f'<th scope="col" role="columnheader"{_num(i, numeric_from)}>{escape(h)}</th>'
                 for i, h in enumerate(head))
    body = "".join(
        '<tr role="row">' + "".join(
            (f'<th scope="row" role="rowheader">{cell}</th>' if i == 0 else
             f'<td role="cell" data-label="{escape(labels[i], quote=True)}"{_num(i, numeric_from)}>{cell}</td>')
            for i, cell in enumerate(row)
        ) + "</tr>"
        for row in rows
    )
    table = (f'<table role="table"><thead role="rowgroup">{group_row}<tr role="row">{th}</tr></thead>'
             f'<tbody role="rowgroup">{body}</tbody></table>')
    return f'<div class="ainotes-table {css_class}">{table}</div>'


def _num(index: int, numeric_from: int) -> str:
    return ' class="ainotes-num"' if index >= numeric_from else ""


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def safe_link(title: str, url: str) -> str:
    """An ``<a>`` to an http(s) URL, or the escaped title alone for any other scheme."""
    if urlsplit(url).scheme.lower() not in ("http", "https"):
        return escape(title)
    return f'<a href="{escape(url, quote=True)}" rel="noopener">{escape(title)}</a>'


def _nb(text: str) -> str:
    """A figure and its unit as HTML that never breaks between them: ``989.4&nbsp;TFLOP/s``."""
    return escape(text).replace(" ", "&nbsp;")


def unit_words(unit: str) -> str:
    """How a table names a unit in the notes' words: ``matrix units``, ``vector units``."""
    return NEUTRAL_UNIT_TERMS[unit]


def ceiling_words(precision: str, unit: str) -> str:
    """A ceiling in the notes' words: ``FP8 matrix units``, ``FP32 vector units``."""
    return f"{PRECISION_LABELS.get(precision, precision.upper())} {unit_words(unit)}"


def _vendor_terms(preset: Preset) -> str:
    """The preset's own words for its units: ``tensor cores and CUDA cores``."""
    return f"{preset.unit_term('tensor')} and {preset.unit_term('vector')}"


def _accelerator_cell(preset: Preset) -> str:
    return (f'{escape(preset.name)}<br><code>{escape(preset.id)}</code>'
            f'<br><small class="ainotes-units">{escape(_vendor_terms(preset))}</small>')


def presets_table_html(presets: Sequence[Preset]) -> str:
    """Each preset's dense (and 2:4 sparse) FP16/BF16 matrix-unit peak, memory bandwidth and capacity,
    and ridge points, one accelerator per row; then the dense peak of every precision
    (:func:`precision_table_html`); then variant, units, derivations and the numbered sources."""
    rows, notes = [], []
    for p in presets:
        peak = _nb(units.flops_per_s(p.peak_flops_per_s(False)))
        ridge = _nb(units.intensity(p.ridge_flop_per_byte(False)))
        if p.structured_sparsity:
            peak += f'<br><small>2:4 sparse {_nb(units.flops_per_s(p.peak_flops_per_s(True)))}</small>'
            ridge += f'<br><small>2:4 sparse {_nb(units.intensity(p.ridge_flop_per_byte(True)))}</small>'
        rows.append([
            _accelerator_cell(p),
            peak,
            _nb(units.bytes_per_s(p.memory_bandwidth_bytes_per_s)),
            escape(p.memory_capacity_label or "not given"),
            ridge,
        ])
        details = [escape(_sentence(text)) for text in (p.variant, p.notes) if text]
        if p.unit_names:  # the vendor's own words beside the notes' (without them there is nothing to add)
            details.append(f"{escape(MATRIX_UNITS.capitalize())}: {escape(p.unit_term('tensor'))}; "
                           f"{escape(VECTOR_UNITS)}: {escape(p.unit_term('vector'))}.")
        if p.derivation:
            details.append("Derived from system totals: " + escape(p.derivation) + ".")
        derived = [f"{escape(ceiling_words(path.precision, path.unit))}: {escape(path.derivation)}"
                   for _, _, path in p.all_paths()
                   if path is not None and path.derivation and path.dense_tflops is not None
                   and path.precision not in FP16_PRECISIONS]
        if derived:
            details.append("Per precision: " + "; ".join(derived) + ".")
        peak_notes = [f"{escape(ceiling_words(path.precision, path.unit))}: {escape(_sentence(path.note))}"
                      for _, _, path in p.all_paths() if path is not None and path.note]
        if peak_notes:
            details.append("Notes: " + " ".join(peak_notes))
        details.extend(escape(warning.split(": ", 1)[-1]) for warning in p.warnings)
        details.append("Sources: " + "; ".join(
            f"[{number}] {safe_link(s.title, s.url)}" for number, s in enumerate(p.sources, start=1)) + ".")
        notes.append(f"<dt>{escape(p.name)}</dt><dd>{' '.join(details)}</dd>")
    head = ["accelerator", f"FP16/BF16 peak, {MATRIX_UNITS}", "memory bandwidth", "memory", "ridge point"]
    table = notes_table(head, rows, "ainotes-presets")
    return f'{table}{precision_table_html(presets)}<dl class="ainotes-preset-notes">{"".join(notes)}</dl>'


def _grouped(value: float) -> str:
    """A rate as the vendor prints it, thousands grouped: ``1,978.9``, ``9,000``, ``0.819``."""
    text = units.significant(value, 5)
    whole, dot, fraction = text.partition(".")
    return f"{int(whole):,}{dot}{fraction}"


def _source_mark(preset: Preset, source: Source) -> str:
    number = preset.sources.index(source) + 1
    return f'<sup title="{escape(source.title, quote=True)}">[{number}]</sup>'


def _peak_cell(preset: Preset, unit: str, precision: str, row_source: Source | None = None) -> str:
    """A dense rate in the column's unit (TFLOP/s, TOPS for INT8), its source's number (left out where it
    is ``row_source``, named once for the row), and "2:4 ×2" where 2:4 sparsity doubles it; "no path" where
    the part has none, "not given" where its file is silent."""
    path = preset.path(precision, unit)
    if path is None:
        return '<span class="ainotes-peak--not-given">not given</span>'
    if path.dense_tflops is None:
        return '<span class="ainotes-peak--none">no path</span>'
    text = escape(_grouped(path.dense_tflops))
    if path.source is not None and path.source in preset.sources and path.source is not row_source:
        text += _source_mark(preset, path.source)
    if path.sparse_supported:
        sparse = _grouped(path.dense_tflops * 2)
        text += f'<br><small title="2:4 structured sparsity: {escape(sparse)}">2:4 ×2</small>'
    return text


def _precision_columns(presets: Sequence[Preset]) -> list[tuple[str, str]]:
    """Every (unit, precision) any of ``presets`` lists, matrix units first, FP16 and BF16 as one."""
    listed = {(unit, precision) for p in presets for unit, precision, _ in p.all_paths()}
    order = [(unit, precision) for unit in UNITS for precision in PRECISIONS if precision in FILE_PRECISIONS[unit]]
    return [pair for pair in order if pair in listed and pair != ("tensor", "bf16")]


def _shown_precision(preset: Preset, unit: str, precision: str) -> str:
    """The precision a column's cell shows. The matrix FP16/BF16 column shows one of the two: both are
    dense_fp16_tflops (the loader checks it), so the one whose source is cited."""
    if (unit, precision) != ("tensor", "fp16"):
        return precision
    fp16, bf16 = preset.path("fp16"), preset.path("bf16")
    chosen = bf16 if bf16 is not None and bf16.source is not None else fp16
    return chosen.precision if chosen is not None else "fp16"


def _row_source(preset: Preset, columns: Sequence[tuple[str, str]]) -> Source | None:
    """The one source every cited figure of ``preset``'s row has (named once, after its name), else None."""
    cited: list[Source] = []
    for unit, precision in columns:
        path = preset.path(_shown_precision(preset, unit, precision), unit)
        if path is not None and path.dense_tflops is not None:
            if path.source is None or path.source not in preset.sources:
                return None
            cited.append(path.source)
    return cited[0] if cited and all(source is cited[0] for source in cited) else None


def _precision_row(preset: Preset, columns: Sequence[tuple[str, str]]) -> list[str]:
    row_source = _row_source(preset, columns)
    name = escape(preset.name) + (_source_mark(preset, row_source) if row_source is not None else "")
    return [name, *(_peak_cell(preset, unit, _shown_precision(preset, unit, precision), row_source)
                    for unit, precision in columns)]


def precision_table_html(presets: Sequence[Preset]) -> str:
    """Dense peak of every unit and precision (columns, grouped into matrix and vector units) on every
    preset (rows), in TFLOP/s (TOPS for INT8): "no path" where the part has none, "not given" where its
    file is silent; [n] is the preset's source n, once after the name where every figure of the row has it;
    "2:4 ×2" where 2:4 sparsity doubles the rate."""
    if not presets:
        return ""
    columns = _precision_columns(presets)
    head, labels = ["accelerator"], ["accelerator"]
    for unit, precision in columns:
        name = "FP16/BF16" if (unit, precision) == ("tensor", "fp16") else PRECISION_LABELS[precision]
        head.append(name.replace("/", "/\u200b"))  # the header may break after the slash
        labels.append(f"{name} {unit_words(unit)}, {'TOPS' if precision == 'int8' else 'TFLOP/s'}")
    rows = [_precision_row(p, columns) for p in presets]
    groups = [("", 1), *((f"{unit_words(unit)}, dense TFLOP/s" + (" (TOPS for INT8)" if unit == "tensor" else ""),
                          sum(1 for u, _ in columns if u == unit)) for unit in UNITS
                         if any(u == unit for u, _ in columns))]
    table = notes_table(head, rows, "ainotes-precisions", groups=groups, labels=labels)
    key = ("<p class=\"ainotes-table-key\">Dense peaks per chip; [n]: the preset's source n (after the name "
           "where it is the whole row's); 2:4 ×2: 2:4 structured sparsity doubles the rate; no path: the part "
           "has none; not given: its file is silent.</p>")
    return table.replace("</table></div>", f"</table>{key}</div>")


def mfu_table_html(jobs: Sequence, presets: Mapping[str, Preset]) -> str:
    """MFU and HFU of each job in an ``mfu-table`` fence, with what went into them: one row per job,
    six columns (the model's size, throughput and FLOPs per token share one, HFU and recomputation
    another); under the table, which N (a model's, with or without embeddings, or as typed) and which
    attention term each row counts, rows that count alike named together."""
    rows = []
    counts: dict[str, list[str]] = {}
    for job in jobs:
        # The peak the job itself resolved (TrainingJob.from_fields): the preset's dense rate at the job's
        # precision, named, or the peak_tflops typed.
        peak = job.peak_flops_per_s
        if job.preset_id is not None:
            preset = presets[job.preset_id]
            peak_text = (f'{_nb(units.flops_per_s(peak))} {escape(job.precision.upper())} '
                         f'<abbr title="{escape(preset.name)}">{escape(preset.id)}</abbr>')
        else:
            peak_text = _nb(units.flops_per_s(peak))
        result = job.utilization()
        # Which N and which attention term the row counts (a model's, or as typed): in the key below.
        notes = [getattr(job, key, None) for key in ("params_convention", "attention_convention")]
        if any(notes):
            counts.setdefault("; ".join(note for note in notes if note), []).append(job.name)
        rows.append([
            escape(job.name),
            f"<strong>{_nb(units.percent(result.mfu))}</strong>",
            f"{_nb(units.percent(result.hfu))}<br><small>recompute: {escape(job.recompute)}</small>",
            (f"{escape(units.count(job.params))} parameters<br><small>"
             f"{_nb(units.si(job.tokens_per_second, 'tokens/s'))}, "
             f"{_nb(units.si(result.model_flops_per_token, 'FLOP'))} per token</small>"),
            f"{job.gpus:,}&nbsp;× {peak_text}",
            _train_time_cell(job, result, peak),
        ])
    head = ["job", "MFU", "HFU", "model and throughput", "devices × peak", "time to train"]
    table = notes_table(head, rows, "ainotes-mfu")
    if not counts:
        return table
    lines = "".join(f"<br>{escape(', '.join(names))}: {escape(text)}." for text, names in counts.items())
    return table.replace("</table></div>", f'</table><p class="ainotes-table-key">What each row counts as N '
                         f"and model FLOPs per token:{lines}</p></div>")


def _train_time_cell(job: object, result: utilization.Utilization, peak_flops_per_s: float) -> str:
    """Days and GPU-hours for the job's ``tokens`` at its own MFU (C ÷ (U·G·P)); "—" without tokens."""
    tokens = getattr(job, "tokens", None)
    if tokens is None or result.mfu > 1:
        return "—"
    run = utilization.time_to_train(
        result.params, tokens=tokens, gpus=result.gpus, mfu=result.mfu, peak_flops_per_s_per_gpu=peak_flops_per_s,
        layers=getattr(job, "layers", None), heads=getattr(job, "heads", None),
        head_dim=getattr(job, "head_dim", None), seq_len=getattr(job, "seq_len", None),
    )
    return (f"{_nb(units.significant(run.days, 3) + ' days')}<br>"
            f"<small>{escape(units.count(run.gpu_hours))} GPU-hours for {escape(units.count(tokens))} tokens</small>")


def links_table_html(links: Sequence) -> str:
    """The interconnect presets: bandwidth per direction per GPU, the assumed latency α, and sources."""
    rows = []
    for link in links:
        sources = "<br>".join(f"[{n}] {safe_link(s.title, s.url)}" for n, s in enumerate(link.sources, start=1))
        rows.append([
            f"{escape(link.name)}<br><code>{escape(link.id)}</code>",
            escape(units.bytes_per_s(link.bandwidth_bytes_per_s)),
            escape(f"{units.significant(link.latency_us, 3)} µs"),
            f'<small class="ainotes-sources">{sources}</small>',
        ])
    head = ["link", "bandwidth B (per direction, per GPU)", "latency α (assumed)", "sources"]
    return notes_table(head, rows, "ainotes-links", numeric_from=len(head))


def _roof_cell(roof: roofline.KernelRoof, preset: Preset) -> str:
    if roof.bound in ("memory", "compute"):
        assert roof.peak_flops_per_s is not None
        peak = units.flops_per_s(roof.peak_flops_per_s)
        # The kernels table names the ceiling; each cell gives its height on this part, in its vendor's words.
        title = (f"{PRECISION_LABELS[roof.precision]} on {preset.unit_term(roof.unit)}"
                 + (", 2:4 sparse" if roof.sparse else ""))
        return (f'<span class="ainotes-bound ainotes-bound--{roof.bound}">{roof.bound}</span>'
                f'<br><small class="ainotes-ceiling" title="{escape(title, quote=True)}">'
                f"roof {_nb(peak)}</small>")
    if roof.bound == "unknown":
        # The preset file is silent on this rate: say so, without the file's path on the build machine.
        said = f"the {preset.id} preset does not give its {ceiling_words(roof.precision, roof.unit)} rate"
        return f'<span class="ainotes-bound ainotes-bound--unknown" title="{escape(said, quote=True)}">not given</span>'
    return f'<span class="ainotes-bound ainotes-bound--{roof.bound}">{escape(roof.reason or roof.bound)}</span>'


def kernels_table_html(kernels: Sequence[Kernel], presets: Sequence[Preset]) -> str:
    """Two tables. First FLOPs, minimum bytes and intensity of each kernel and the ceiling it meets (its
    dtype's unit and precision, ``roofline.kernel_ceiling``); then, one accelerator per row and a few
    kernels per table, whether each kernel is memory- or compute-bound there and the roof it meets
    ("no FP8 path" and the like where the preset has no such ceiling)."""
    rows = []
    for number, k in enumerate(kernels, start=1):
        unit, precision = roofline.kernel_ceiling(k)
        rows.append([
            f'{number}. <span title="{escape(k.spec)}">{escape(k.label)}</span>',
            escape(units.si(k.flops, "FLOP")),
            escape(units.si(k.bytes_moved, "B")),
            escape(units.intensity(k.intensity_flop_per_byte)),
            escape(ceiling_words(precision, unit)),
        ])
    facts = notes_table(["kernel", "FLOPs", "bytes (minimum)", "intensity", "ceiling"], rows, "ainotes-kernels",
                   numeric_from=1)
    bounds = []
    for first in range(0, len(kernels), KERNELS_PER_BOUNDS_TABLE):
        chunk = list(enumerate(kernels, start=1))[first:first + KERNELS_PER_BOUNDS_TABLE]
        # A header may break after each "×" of a shape: 8192×8192×8192 is one word otherwise.
        head = ["accelerator", *(f"{n}. {k.label}".replace("×", "×\u200b") for n, k in chunk)]
        cells = [[escape(p.name), *(_roof_cell(roofline.kernel_roof(p, k), p) for _, k in chunk)] for p in presets]
        bounds.append(notes_table(head, cells, "ainotes-kernel-roofs", numeric_from=len(head)))
    key = ("<p class=\"ainotes-table-key\">Where each kernel sits on each accelerator, at the roof of the "
           "kernel's own precision: memory- or compute-bound, and the height of that roof.</p>")
    return facts + "".join(bounds) + key


def preset_check_html(yaml_text: str, file_name: str = "example.yaml") -> str:
    """The preset loader's verdict on ``yaml_text``, as if it were ``presets/<file_name>``: the one-line
    error, or what the loader made of the file (its FP16/BF16 peak, bandwidth, ridge, memory and the
    vendor's unit words, any warning, and the dense peak of every precision it lists)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / file_name
        path.write_text(yaml_text, encoding="utf-8")
        try:
            preset = load_preset(path)
        except InputError as exc:
            message = str(exc).replace(str(Path(tmp)), "presets")
            verdict = (f'<p class="ainotes-check ainotes-check--error"><strong>Error:</strong> '
                       f"<code>{escape(message)}</code></p>")
        else:
            warnings = "".join(f"<br><small>Warning: <code>{escape(w.replace(str(Path(tmp)), 'presets'))}</code>"
                               "</small>" for w in preset.warnings)
            memory = f", {_nb(preset.memory_capacity_label)} of memory" if preset.memory_capacity_label else ""
            vendor = preset.unit_term("tensor")
            units_said = escape(MATRIX_UNITS) + (f" ({escape(vendor)})" if vendor != MATRIX_UNITS else "")
            verdict = (
                f'<p class="ainotes-check ainotes-check--ok"><strong>Valid:</strong> {escape(preset.name)}: '
                f"FP16/BF16 {_nb(units.flops_per_s(preset.peak_flops_per_s()))} dense on its {units_said}, "
                f"{_nb(units.bytes_per_s(preset.memory_bandwidth_bytes_per_s))}{memory}, "
                f"ridge {_nb(units.intensity(preset.ridge_flop_per_byte()))}{warnings}</p>"
                + precision_table_html([preset])
            )
    code = f'<pre class="ainotes-check__yaml"><code>{escape(yaml_text)}</code></pre>'
    return f'<div class="ainotes-preset-check">{code}{verdict}</div>'
