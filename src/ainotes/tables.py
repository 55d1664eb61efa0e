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
from ainotes.hardware import Preset, load_preset
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
    return f'<div class="ainotes-table {css_class}"><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>'


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
    """Each preset's dense and sparse ceilings, bandwidth and ridge points; then its variant,
    derivation and sources."""
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
        details.append("Sources: " + "; ".join(safe_link(s.title, s.url) for s in p.sources) + ".")
        notes.append(f"<dt>{escape(p.name)}</dt><dd>{' '.join(details)}</dd>")
    head = ["GPU", "dense FP16 tensor", "2:4 sparse", "memory bandwidth", "ridge (dense)", "ridge (sparse)"]
    table = _table(head, rows, "ainotes-presets")
    return f'{table}<dl class="ainotes-preset-notes">{"".join(notes)}</dl>'


def mfu_table_html(jobs: Sequence, presets: Mapping[str, Preset]) -> str:
    """MFU and HFU of each job in an ``mfu-table`` fence, with what went into them."""
    rows = []
    for job in jobs:
        if job.preset_id is not None:
            preset = presets[job.preset_id]
            peak = preset.peak_flops_per_s(False)
            peak_text = f'{escape(units.flops_per_s(peak))} <abbr title="{escape(preset.name)}">{escape(preset.id)}</abbr>'
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
        rows.append([
            escape(job.name),
            f"<strong>{escape(units.percent(result.mfu))}</strong>",
            escape(units.percent(result.hfu)),
            escape(units.count(job.params)),
            escape(units.si(job.tokens_per_second, "tokens/s")),
            f"{job.gpus:,} × {peak_text}",
            escape(units.si(result.model_flops_per_token, "FLOP")),
            escape(job.recompute),
        ])
    head = ["job", "MFU", "HFU", "parameters", "throughput", "GPUs × peak", "model FLOPs/token", "recompute"]
    return _table(head, rows, "ainotes-mfu")


def kernels_table_html(kernels: Sequence[Kernel], presets: Sequence[Preset]) -> str:
    """FLOPs, minimum bytes and intensity of each kernel, and its bound on each preset."""
    rows = []
    for k in kernels:
        bounds = []
        for p in presets:
            bound = roofline.bound_at(k.intensity_flop_per_byte, p.peak_flops_per_s(False), p.memory_bandwidth_bytes_per_s)
            bounds.append(f'<span class="ainotes-bound ainotes-bound--{bound}">{bound}</span>')
        rows.append([
            f'<span title="{escape(k.spec)}">{escape(k.label)}</span>',
            escape(units.si(k.flops, "FLOP")),
            escape(units.si(k.bytes_moved, "B")),
            escape(units.intensity(k.intensity_flop_per_byte)),
            *bounds,
        ])
    head = ["kernel", "FLOPs", "bytes (minimum)", "intensity", *(p.id for p in presets)]
    table = _table(head, rows, "ainotes-kernels")
    key = "; ".join(f"<code>{escape(p.id)}</code>: {escape(p.name)}" for p in presets)
    return table.replace("</table></div>", f"</table><p class=\"ainotes-table-key\">Bound on {key}.</p></div>")


def preset_check_html(yaml_text: str, file_name: str = "example.yaml") -> str:
    """The preset loader's verdict on ``yaml_text``, as if it were ``presets/<file_name>``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / file_name
        path.write_text(yaml_text, encoding="utf-8")
        try:
            preset = load_preset(path)
        except InputError as exc:
            message = str(exc).replace(str(Path(tmp)), "presets")
            verdict = f'<p class="ainotes-check ainotes-check--error"><strong>Error:</strong> <code>{escape(message)}</code></p>'
        else:
            verdict = (
                f'<p class="ainotes-check ainotes-check--ok"><strong>Valid:</strong> {escape(preset.name)}, '
                f"ridge {escape(units.intensity(preset.ridge_flop_per_byte()))}</p>"
            )
    code = f'<pre class="ainotes-check__yaml"><code>{escape(yaml_text)}</code></pre>'
    return f'<div class="ainotes-preset-check">{code}{verdict}</div>'
