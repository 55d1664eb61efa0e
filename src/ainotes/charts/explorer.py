"""The page around a roofline chart: a summary for screen readers, the explorer's form, and tables.

What a page shows besides the picture, built from the chart's own spec (its params,
datasets and ``usermeta``), so that every page or tool that draws a roofline with
:func:`ainotes.charts.roofline.roofline_spec` gets the same text alternative and controls:

* :func:`summary_text`: what the chart shows and each preset's ridge, for screen readers;
* :func:`controls_html`: the form ``assets/vega-charts.js`` wires to the view (hidden
  without a script, since it does nothing then). Its script sets the chart's input signals
  and shows the texts the chart computes from them (charts/roofline.py): it holds no
  formula of its own;
* :func:`tables_html`: the kernels' bounds and times per preset (visible; the script
  follows the kernels' mode and the GPU select) and every ceiling (openable): the chart's
  data for readers without a script, or without sight of the picture;
* :func:`figure`: all of it with the chart, as one :class:`~ainotes.charts.figure.VegaFigure`.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Iterable
from typing import Any

from ainotes.base import units
from ainotes.charts import formats
from ainotes.charts.figure import Explorer, Recolour, VegaFigure
from ainotes.charts.roofline.colours import dark_svg, dark_vega, retheme
from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    BATCH_FFN_FACTOR,
    DEFAULT_D_MODEL,
    KERNEL_MODE_LABELS,
    KERNEL_MODES,
    op_word,
    roof_name,
)
from ainotes.charts.roofline.stills import narrow_static, spec_meta
from ainotes.core.kernels import MAX_DIMENSION

MAX_BATCH_EXPONENT = 14  # the batch slider runs over 2**0 … 2**14 tokens
DEFAULT_BATCH_EXPONENT = 6
# How long typing pauses before a typed intensity or d_model redraws the chart.
TYPING_DEBOUNCE_MS = 250


def json_for_attribute(value: Any) -> str:
    """Compact JSON, escaped for an HTML attribute."""
    return html.escape(json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True))


def _param_values(spec: dict[str, Any]) -> dict[str, Any]:
    return {p["name"]: p.get("value") for p in spec.get("params", [])}


def summary_text(spec: dict[str, Any]) -> str:
    """One paragraph for screen readers: what the chart shows and each preset's ridge, at the opening roof."""
    values = _param_values(spec)
    roof = values["precision"]
    names = values["names"]
    rows = [r for r in spec["datasets"]["ceilings"] if r["r"] == roof]
    field = "sridge" if values["sparsity"] else "ridge"
    peak = "speak" if values["sparsity"] else "peak"
    op = op_word(roof)
    ridges = "; ".join(f"{names[r['p']]}: ridge at {formats.intensity_text(r[field], op)}, "
                       f"peak {formats.rate_text(r[peak], op)}" for r in rows)
    meta = spec_meta(spec) or {}
    missing = meta.get("missing", {}).get(roof, {})
    left_out = "".join(f" {names[i]}: not drawn, {text}." for i, text in missing.items())
    kernels = meta.get("kernels", [])
    kernel_text = (f" {len(kernels)} numbered kernels are marked where they meet their roofs; "
                   "the table below gives each one's bound and time.") if kernels else ""
    return (f"Roofline chart, log-log: attainable FLOP/s against arithmetic intensity, one line per GPU, "
            f"{roof_name(roof)}, {'2:4 sparse' if values['sparsity'] else 'dense'}. {ridges}.{left_out}{kernel_text}")


def _options(pairs: Iterable[tuple[str, str]], selected: str) -> str:
    return "".join(
        f'<option value="{html.escape(value)}"{" selected" if value == selected else ""}>{html.escape(label)}</option>'
        for value, label in pairs
    )


def controls_html(chart_id: str, spec: dict[str, Any]) -> str:
    """The explorer's form, hidden until ``vega-charts.js`` wires it to the view (it does nothing
    without a script; the static picture and the tables stand in for it then).

    Each field acts on itself: Enter in the intensity fields reads that field, Enter in a GEMM
    dimension places the GEMM; the typed intensity redraws as the reader types."""
    meta = spec_meta(spec) or {}
    values = _param_values(spec)
    x_min, x_max = values["x_domain"]
    cid = html.escape(chart_id)
    labels = meta.get("roof_labels", {})
    roofs = _options(((r, labels.get(r, roof_name(r))) for r in meta.get("roofs", [])), values["precision"])
    presets = _options([(ALL_PRESETS, "All"), *values["names"].items()], ALL_PRESETS)
    dtypes = _options(((d, d.upper()) for d in meta.get("dtypes", {})), "bf16")
    checked = " checked" if values["sparsity"] else ""
    log_min, log_max = math.log10(x_min), math.log10(x_max)
    kernels = meta.get("kernels", [])
    data = {"max_dimension": MAX_DIMENSION, "dtypes": meta.get("dtypes", {}), "missing": meta.get("missing", {}),
            "roof_names": values["roof_names"], "names": values["names"], "ids": values["gpu_ids"],
            "x_domain": [x_min, x_max], "d_model": DEFAULT_D_MODEL, "ffn_factor": BATCH_FFN_FACTOR,
            "debounce_ms": TYPING_DEBOUNCE_MS,
            "axis_text": f"{formats.intensity_text(x_min)} to {formats.intensity_text(x_max)}",
            "kernels": [{"n": k["n"], "modes": k["modes"]} for k in kernels]}

    def field(name: str, label: str, attrs: str = "") -> str:
        return (f'<label class="ainotes-explorer__field"><span>{label}</span>'
                f'<input id="{cid}-{name}" name="{name}" {attrs}></label>')

    kernel_mode = ""
    if kernels:
        kernel_mode = (
            '<label class="ainotes-explorer__field"><span>Kernels</span><select name="kmode">'
            + _options(((m, KERNEL_MODE_LABELS[m]) for m in KERNEL_MODES), "own") + "</select></label>"
        )
    return (
        f'<form class="ainotes-explorer" hidden novalidate data-explorer="{json_for_attribute(data)}" '
        f'aria-label="Roofline explorer controls">'
        '<div class="ainotes-explorer__row">'
        '<label class="ainotes-explorer__field"><span>Precision</span>'
        f'<select name="precision">{roofs}</select></label>'
        f'<label class="ainotes-explorer__field"><span>GPUs</span><select name="preset">{presets}</select></label>'
        f"{kernel_mode}"
        f'<label class="ainotes-explorer__check"><input type="checkbox" name="sparsity"{checked}>'
        "<span>2:4 structured sparsity (where supported)</span></label>"
        "</div>"
        '<p class="ainotes-explorer__note" data-role="missing" aria-live="polite"></p>'
        '<fieldset class="ainotes-explorer__group"><legend>Read off an intensity</legend>'
        '<div class="ainotes-explorer__row">'
        + field("intensity", "Intensity (FLOP/byte)",
                'type="text" inputmode="decimal" autocomplete="off" enterkeyhint="done" '
                f'value="{units.significant(values["intensity"], 4)}"')
        + f'<label class="ainotes-explorer__field ainotes-explorer__field--wide"><span>Slide (log scale)</span>'
        f'<input type="range" name="log_intensity" min="{log_min:g}" max="{log_max:g}" step="0.01" '
        f'value="{math.log10(values["intensity"]):.2f}"></label>'
        "</div>"
        '<p class="ainotes-explorer__message" data-role="intensity-message" role="alert"></p>'
        '<div class="ainotes-explorer__readout" data-role="readout" aria-live="polite"></div>'
        "</fieldset>"
        + _kernel_fieldset(field, dtypes) + _batch_fieldset(field)
        + "</form>"
    )


_NUMBER = 'type="text" inputmode="numeric" autocomplete="off" spellcheck="false" enterkeyhint="done"'


def _kernel_fieldset(field: Callable[..., str], dtypes: str) -> str:
    """The reader's own kernel: a GEMM's M, N, K and type, or an intensity."""
    return (
        '<fieldset class="ainotes-explorer__group"><legend>Your kernel</legend>'
        '<div class="ainotes-explorer__row">'
        + field("m", "GEMM M", _NUMBER) + field("n", "N", _NUMBER) + field("k", "K", _NUMBER)
        + f'<label class="ainotes-explorer__field"><span>Type</span><select name="dtype">{dtypes}</select></label>'
        '<button type="submit" name="place" value="gemm">Place GEMM</button>'
        "</div>"
        '<div class="ainotes-explorer__row">'
        + field("own_intensity", "Or an intensity (FLOP/byte)",
                'type="text" inputmode="decimal" autocomplete="off" enterkeyhint="done"')
        + '<button type="submit" name="place" value="intensity">Place</button>'
        '<button type="button" data-action="clear">Clear</button>'
        "</div>"
        '<p class="ainotes-explorer__message" data-role="own-message" role="alert"></p>'
        '<div class="ainotes-explorer__readout" data-role="own" aria-live="polite"></div>'
        "</fieldset>"
    )


def _batch_fieldset(field: Callable[..., str]) -> str:
    """The batch-size GEMM: a decode step's projection at a batch the reader slides."""
    return (
        '<fieldset class="ainotes-explorer__group"><legend>Batch size and a weight GEMM</legend>'
        '<div class="ainotes-explorer__row">'
        '<label class="ainotes-explorer__check"><input type="checkbox" name="batch_on">'
        "<span>Show a decode step's projection, d<sub>model</sub> × 4·d<sub>model</sub></span></label>"
        f'<label class="ainotes-explorer__field ainotes-explorer__field--wide"><span>Tokens in the batch: '
        f'<output name="batch_tokens">{2**DEFAULT_BATCH_EXPONENT}</output></span>'
        f'<input type="range" name="batch" min="0" max="{MAX_BATCH_EXPONENT}" step="1" '
        f'value="{DEFAULT_BATCH_EXPONENT}"></label>'
        + field("d_model", "d<sub>model</sub>", f'{_NUMBER} value="{DEFAULT_D_MODEL}"')
        + "</div>"
        '<p class="ainotes-explorer__message" data-role="batch-message" role="alert"></p>'
        '<div class="ainotes-explorer__readout" data-role="batch" aria-live="polite"></div>'
        "</fieldset>"
    )


def _kernel_cells(spec: dict[str, Any]) -> dict[tuple[int, str], dict[str, str]]:
    """The kernels' table in its opening state (kernels in their own types): (kernel, preset) →
    bound and text, from the chart's ``kernels`` rows and the reasons where a kernel has none."""
    meta = spec_meta(spec) or {}
    cells: dict[tuple[int, str], dict[str, str]] = {}
    for row in spec["datasets"].get("kernels", []):
        if " own " in row["m"]:
            cells[(row["k"], row["p"])] = {"bound": row["b"], "text": row["tx"]}
    for kernel in meta.get("kernels", []):
        for preset_id, why in kernel["modes"]["own"]["why"].items():
            cells[(kernel["n"], preset_id)] = {"bound": "unsupported", "text": why}
    return cells


def tables_html(chart_id: str, spec: dict[str, Any]) -> str:
    """The kernels' bounds and times per preset (visible), and an openable table of every ceiling."""
    meta = spec_meta(spec) or {}
    values = _param_values(spec)
    names: dict[str, str] = values["names"]
    parts = []
    kernels = meta.get("kernels", [])
    header = "".join(f'<th scope="col" data-p="{html.escape(i)}">{html.escape(name)}</th>' for i, name in names.items())
    if kernels:
        cells = _kernel_cells(spec)
        body = []
        for k in kernels:
            own = k["modes"]["own"]
            # data-label: on a phone each row is a card whose cells name their column (charts.css).
            row = "".join(
                f'<td class="ainotes-kb ainotes-kb--{html.escape(cells[(k["n"], i)]["bound"])}" '
                f'data-k="{k["n"]}" data-p="{html.escape(i)}" data-label="{html.escape(name)}">'
                f'{html.escape(cells[(k["n"], i)]["text"])}</td>'
                for i, name in names.items()
            )
            body.append(
                f'<tr><th scope="row"><span class="ainotes-kb__n">{k["n"]}</span> '
                f'<span data-role="kernel-label">{html.escape(own["label"])}</span></th>'
                f'<td data-role="kernel-intensity" data-label="Intensity">{html.escape(own["intensity_text"])}</td>'
                f"{row}</tr>"
            )
        parts.append(
            # A scroller of its own on a phone: focusable, so the keyboard can scroll it too.
            '<div class="ainotes-table-wrap" tabindex="0" role="region" aria-label="Kernels\' bounds per GPU">'
            '<table class="ainotes-kernel-bounds">'
            '<caption>Where each numbered kernel meets the roof of its <span data-role="kernel-mode">own data '
            "type</span>, per GPU: its bound, rate, roof and time at that rate (dense unless the kernel is "
            "2:4 sparse)</caption>"
            f'<thead><tr><th scope="col">Kernel</th><th scope="col">Intensity</th>{header}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>"
        )
    rows = []
    for row in spec["datasets"]["ceilings"]:
        sparse = ("—" if row["speak"] == row["peak"]
                  else f'{_rate(row["speak"], row["r"])} (ridge {units.intensity(row["sridge"])})')
        rows.append(
            f'<tr><th scope="row">{html.escape(names[row["p"]])}</th>'
            f'<td data-label="Roof">{html.escape(roof_name(row["r"]))}</td>'
            f'<td data-label="Dense peak">{_rate(row["peak"], row["r"])}</td>'
            f'<td data-label="Bandwidth">{units.bytes_per_s(row["bw"])}</td>'
            f'<td data-label="Ridge">{units.intensity(row["ridge"])}</td>'
            f'<td data-label="2:4 sparse peak">{sparse}</td></tr>'
        )
    for roof, lacking in meta.get("missing", {}).items():
        for preset_id, text in lacking.items():
            rows.append(f'<tr><th scope="row">{html.escape(names[preset_id])}</th>'
                        f'<td data-label="Roof">{html.escape(roof_name(roof))}</td>'
                        f'<td colspan="4">{html.escape(text)}</td></tr>')
    parts.append(
        f'<details class="ainotes-data" id="{html.escape(chart_id)}-data"><summary>Data table: every ceiling</summary>'
        '<div class="ainotes-table-wrap" tabindex="0" role="region" aria-label="Every ceiling">'
        '<table><thead><tr><th scope="col">GPU</th><th scope="col">Roof</th>'
        '<th scope="col">Dense peak</th><th scope="col">Bandwidth</th><th scope="col">Ridge</th>'
        f'<th scope="col">2:4 sparse peak</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div></details>'
    )
    return "".join(parts)


def _rate(value: float, roof: str) -> str:
    """A peak as the tables print it: OP/s for INT8 (integer operations), FLOP/s otherwise."""
    return formats.rate_text(value, op_word(roof))


def figure(light: dict[str, Any], *, caption_html: str = "") -> VegaFigure:
    """A roofline (:func:`ainotes.charts.roofline.roofline_spec`, light) as a page shows it: dark by
    recolouring (:func:`~ainotes.charts.roofline.dark_svg`, :func:`~ainotes.charts.roofline.dark_vega`:
    no second Vega run), a phone still that is also one of its files, and the explorer beside it."""
    return VegaFigure(
        light=light, dark=retheme(light, "dark"), caption_html=caption_html, narrow=(narrow_static(light),),
        recolour=Recolour(svg=dark_svg, vega=dark_vega), narrow_file=True,
        explorer=Explorer(summary_text=summary_text(light),
                          controls_html=lambda chart_id: controls_html(chart_id, light),
                          tables_html=lambda chart_id: tables_html(chart_id, light)),
    )
