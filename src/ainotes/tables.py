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

from ainotes import roofline, units, utilization
from ainotes.errors import InputError
from ainotes.hardware import PeakPath, Preset, default_unit, load_preset, precision_label
from ainotes.kernels import Kernel


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], css_class: str, numeric_from: int = 1) -> str:
    """A plain table; ``head`` cells are escaped, row cells must already be HTML."""
    th = "".join(f'<th scope="col"{_num(i, numeric_from)}>{escape(h)}</th>' for i, h in enumerate(head))
    body = "".join(
        "<tr>" + "".join(
            (f'<th scope="row">{cell}</th>' if i == 0 else f"<td{_num(i, numeric_from)}>{cell}</td>")
            for i, cell in enumerate(row)
        ) + "</tr>"
        for row in rows
    )
    table = f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"
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


def presets_table_html(presets: Sequence[Preset]) -> str:
    """Each preset's dense and sparse FP16/BF16 ceilings, bandwidth and ridge points; then the
    dense peak of every precision, each with the number of its source; then variant, derivation
    and the numbered sources."""
    rows, notes = [], []
    for p in presets:
        sparse = units.flops_per_s(p.peak_flops_per_s(True)) if p.structured_sparsity else "—"
        sparse_ridge = units.intensity(p.ridge_flop_per_byte(True)) if p.structured_sparsity else "—"
        rows.append([
            f'{escape(p.name)}<br><code>{escape(p.id)}</code>',
            escape(units.flops_per_s(p.peak_flops_per_s(False))),
            escape(sparse),
            escape(units.bytes_per_s(p.memory_bandwidth_bytes_per_s)),
            escape(units.intensity(p.ridge_flop_per_byte(False))),
            escape(sparse_ridge),
        ])
        details = [escape(_sentence(text)) for text in (p.variant, p.notes) if text]
        if p.derivation:
            details.append("Derived from system totals: " + escape(p.derivation) + ".")
        derived = [f"{escape(path.label)}: {escape(path.derivation)}" for _, _, path in p.all_paths()
                   if path is not None and path.derivation and path.dense_tflops is not None
                   and path.precision not in ("fp16", "bf16")]
        if derived:
            details.append("Per precision: " + "; ".join(derived) + ".")
        details.append("Sources: " + "; ".join(
            f"[{number}] {safe_link(s.title, s.url)}" for number, s in enumerate(p.sources, start=1)) + ".")
        notes.append(f"<dt>{escape(p.name)}</dt><dd>{' '.join(details)}</dd>")
    head = ["GPU", "dense FP16 tensor", "2:4 sparse", "memory bandwidth", "ridge (dense)", "ridge (sparse)"]
    table = _table(head, rows, "ainotes-presets")
    return f'{table}{precision_table_html(presets)}<dl class="ainotes-preset-notes">{"".join(notes)}</dl>'


def _rate_text(path: PeakPath, tflops: float) -> str:
    # int8 rates are integer operations: TOPS, not TFLOP/s.
    return units.si(tflops * 1e12, "OP/s") if path.precision == "int8" else units.flops_per_s(tflops * 1e12)


def _peak_cell(preset: Preset, unit: str, precision: str) -> str:
    path = preset.path(precision, unit)
    if path is None:
        return '<span class="ainotes-peak--not-given">not given</span>'
    if path.dense_tflops is None:
        return '<span class="ainotes-peak--none">no path</span>'
    text = escape(_rate_text(path, path.dense_tflops))
    if path.source is not None and path.source in preset.sources:
        number = preset.sources.index(path.source) + 1
        text += f' <sup title="{escape(path.source.title, quote=True)}">[{number}]</sup>'
    if path.sparse_supported:
        text += f"<br><small>2:4 sparse {escape(_rate_text(path, path.dense_tflops * 2))}</small>"
    if path.note:
        text += f"<br><small>{escape(path.note)}</small>"
    return text


def precision_table_html(presets: Sequence[Preset]) -> str:
    """Dense peak of every unit and precision (rows) on every preset (columns): "no path" where
    the GPU has none, "not given" where its file is silent; [n] is the preset's source n."""
    if not presets:
        return ""
    rows = [
        [escape(f"{precision.upper()} {unit}"), *(_peak_cell(p, unit, precision) for p in presets)]
        for unit, precision, _ in presets[0].all_paths()
    ]
    return _table(["ceiling", *(p.name for p in presets)], rows, "ainotes-precisions")


def mfu_table_html(jobs: Sequence, presets: Mapping[str, Preset]) -> str:
    """MFU and HFU of each job in an ``mfu-table`` fence, with what went into them; under the table,
    which N (a model's, with or without embeddings, or as typed) and which attention term each row
    counts, rows that count alike named together."""
    rows = []
    counts: dict[str, list[str]] = {}
    for job in jobs:
        if job.preset_id is not None:
            preset = presets[job.preset_id]
            # The peak of the precision the job trains in (BF16 unless the job says otherwise), named.
            precision = getattr(job, "precision", None) or "bf16"
            unit = default_unit(precision)
            peak_tflops = preset.peak_tflops(precision, unit=unit)
            if peak_tflops is None:
                raise InputError(f"job {job.name!r}: preset {preset.id} has no dense "
                                 f"{precision_label(precision, unit)} peak ({preset.status(precision, unit)})")
            peak = peak_tflops * 1e12
            peak_text = (f'{escape(units.flops_per_s(peak))} {escape(precision.upper())} '
                         f'<abbr title="{escape(preset.name)}">{escape(preset.id)}</abbr>')
        else:
            peak = job.peak_tflops * 1e12
            peak_text = escape(units.flops_per_s(peak))
        result = utilization.utilization(
            job.params,
            tokens_per_second=job.tokens_per_second,
            gpus=job.gpus,
            peak_flops_per_s_per_gpu=peak,
            layers=job.layers, heads=job.heads, head_dim=job.head_dim, seq_len=job.seq_len,
            recompute=job.recompute,
        )
        # Which N and which attention term the row counts (a model's, or as typed): in the key below.
        notes = [getattr(job, key, None) for key in ("params_convention", "attention_convention")]
        if any(notes):
            counts.setdefault("; ".join(note for note in notes if note), []).append(job.name)
        rows.append([
            escape(job.name),
            f"<strong>{escape(units.percent(result.mfu))}</strong>",
            escape(units.percent(result.hfu)),
            escape(units.count(job.params)),
            escape(units.si(job.tokens_per_second, "tokens/s")),
            f"{job.gpus:,} × {peak_text}",
            escape(units.si(result.model_flops_per_token, "FLOP")),
            escape(job.recompute),
            _train_time_cell(job, result, peak),
        ])
    head = ["job", "MFU", "HFU", "parameters", "throughput", "GPUs × peak", "model FLOPs/token", "recompute",
            "time to train"]
    table = _table(head, rows, "ainotes-mfu")
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
    return (f"{escape(units.significant(run.days, 3))} days<br>"
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
    return _table(head, rows, "ainotes-links", numeric_from=len(head))


def _roof_cell(roof: roofline.KernelRoof) -> str:
    if roof.bound in ("memory", "compute"):
        assert roof.peak_flops_per_s is not None
        peak = units.flops_per_s(roof.peak_flops_per_s)
        # The row's "ceiling" cell names the roof; each preset's cell gives its height there.
        return (f'<span class="ainotes-bound ainotes-bound--{roof.bound}">{roof.bound}</span>'
                f'<br><small class="ainotes-ceiling" title="{escape(roof.label, quote=True)}">'
                f"roof {escape(peak)}</small>")
    return f'<span class="ainotes-bound ainotes-bound--{roof.bound}">{escape(roof.reason or roof.bound)}</span>'


def kernels_table_html(kernels: Sequence[Kernel], presets: Sequence[Preset]) -> str:
    """FLOPs, minimum bytes and intensity of each kernel, and on each preset the ceiling it meets
    (its dtype's unit and precision, ``roofline.kernel_roof``) and whether it is memory- or
    compute-bound there; "no FP8 path" and the like where the preset has no such ceiling."""
    rows = []
    for k in kernels:
        unit, precision = roofline.kernel_ceiling(k)
        rows.append([
            f'<span title="{escape(k.spec)}">{escape(k.label)}</span>',
            escape(units.si(k.flops, "FLOP")),
            escape(units.si(k.bytes_moved, "B")),
            escape(units.intensity(k.intensity_flop_per_byte)),
            escape(f"{precision.upper()} {unit}"),
            *(_roof_cell(roofline.kernel_roof(p, k)) for p in presets),
        ])
    head = ["kernel", "FLOPs", "bytes (minimum)", "intensity", "ceiling", *(p.id for p in presets)]
    table = _table(head, rows, "ainotes-kernels")
    key = "; ".join(f"<code>{escape(p.id)}</code>: {escape(p.name)}" for p in presets)
    return table.replace(
        "</table></div>",
        f"</table><p class=\"ainotes-table-key\">Bound on {key}, each at the roof of the kernel's own "
        "precision.</p></div>",
    )


def preset_check_html(yaml_text: str, file_name: str = "example.yaml") -> str:
    """The preset loader's verdict on ``yaml_text``, as if it were ``presets/<file_name>``."""
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
            verdict = (
                f'<p class="ainotes-check ainotes-check--ok"><strong>Valid:</strong> {escape(preset.name)}, '
                f"ridge {escape(units.intensity(preset.ridge_flop_per_byte()))}</p>"
            )
    code = f'<pre class="ainotes-check__yaml"><code>{escape(yaml_text)}</code></pre>'
    return f'<div class="ainotes-preset-check">{code}{verdict}</div>'
