"""``memory-fit-table``: which models' training states and activations fit on which GPUs, at the
fence's parallelism and ZeRO stage.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import unknown_id
from ainotes.base.units import bytes_text
from ainotes.core import memory
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.memory import TrainingMemory
from ainotes.core.models import ModelPreset
from ainotes.fences.body import Fence
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.fences.training_memory import (
    CHART_DEFAULTS,
    CONFIG_KEYS,
    check_activation_fields,
    read_capacity_presets,
    read_config_fields,
    read_id_list,
    read_memory_body,
)
from ainotes.html.page import Drawn, Page


@dataclass(frozen=True)
class MemoryFitTableRequest:
    """A ``memory-fit-table`` fence: models (rows), GPUs (columns) and the configuration's fields."""

    model_ids: tuple[str, ...] | None
    preset_ids: tuple[str, ...]
    fields: Mapping[str, Any]
    where: str = ""
    lines: Mapping[str, int] | None = None

    def implied_uses(self, site: DrawSite) -> set[tuple[str, str]]:
        """Every model, where the fence names none (its rows)."""
        return {("model", m) for m in site.models()} if self.model_ids is None else set()

    def fail(self, key: str, message: str) -> InputError:
        line = (self.lines or {}).get(key, (self.lines or {}).get("", 0))
        return InputError(f"{self.where}:{line}: {message}")


FIT_TABLE_DEFAULTS: Mapping[str, Any] = {"dp": 8}


def parse_memory_fit_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> MemoryFitTableRequest:
    """``memory-fit-table`` fence: ``models`` (rows; default all), ``presets`` (columns; default every
    preset that gives a capacity), and the run: ``dp`` (default 8), ``tp``, ``pp``, ``micro_batch``
    with ``seq_len`` (activations; without them, model states only), ``recompute``,
    ``sequence_parallel``, ``attention``, ``optimizer``, ``fp32_grad_accum``, ``dropout``. Each cell:
    the lowest ZeRO stage at which the model fits that GPU, and its memory per GPU there."""
    allowed = ("models", "presets", *(k for k in CONFIG_KEYS if k != "zero"))
    reader, data, lines = read_memory_body(fence, where, allowed)
    model_ids = read_id_list(reader, data, "models")
    fields = {**FIT_TABLE_DEFAULTS, **read_config_fields(reader, data, choices=False)}
    try:  # everything but what needs the model, checked now
        TrainingMemory.from_fields({"params": 1e9, **{k: v for k, v in fields.items() if k in (
            "dp", "tp", "pp", "optimizer", "fp32_grad_accum")}}, {}, presets)
        if any(k in fields for k in ("micro_batch", "seq_len", *memory.ACTIVATION_FIELDS)):
            check_activation_fields(fields)
    except FieldError as exc:
        reader.fail(exc.field, str(exc))
    return MemoryFitTableRequest(model_ids, read_capacity_presets(reader, data, presets), fields, where, lines)


def memory_fit_table_html(request: MemoryFitTableRequest, models: Mapping[str, ModelPreset],
                          presets: Mapping[str, Preset]) -> str:
    """Models down, GPUs across; each cell the lowest ZeRO stage that fits and the memory per GPU there
    (every number from :mod:`ainotes.core.memory`), or why not. User strings escaped."""
    ids = request.model_ids if request.model_ids is not None else tuple(models)
    for model_id in ids:
        if model_id not in models:
            raise request.fail("models", f"{unknown_id('model', model_id, models)}")
    chosen = [presets[i] for i in request.preset_ids]
    # Short headers (the id and the capacity as printed), the full name on hover: six GPUs fit a page.
    head = "".join(
        f'<th scope="col"><abbr title="{html.escape(p.name, quote=True)}">{html.escape(p.id)}</abbr><br>'
        f"<small>{html.escape(p.memory_capacity_label or '')}</small></th>" for p in chosen)
    rows = []
    for model_id in ids:
        model = models[model_id]
        cells = []
        try:
            base = TrainingMemory.from_fields({"model": model.id, **request.fields}, {model.id: model}, {})
        except FieldError as exc:
            cells.append(f'<td colspan="{len(chosen)}"><small>{html.escape(str(exc))}</small></td>')
        else:
            for preset in chosen:
                found = memory.lowest_fitting_stage(replace(base, preset=preset))
                if found is None:
                    need = replace(base, zero=3).estimate().total_bytes
                    cells.append(f'<td><span class="ainotes-fit--no">no</span><br><small>stage 3 needs '
                                 f"{html.escape(bytes_text(need))}</small></td>")
                else:
                    stage, estimate = found
                    cells.append(f'<td><span class="ainotes-fit--yes">ZeRO {stage}</span><br>'
                                 f"<small>{html.escape(bytes_text(estimate.total_bytes))}</small></td>")
        rows.append(f'<tr><th scope="row">{html.escape(model.name)}<br>'
                    f"<small>{html.escape(units.count(model.params))} parameters</small></th>{''.join(cells)}</tr>")
    caption = html.escape(fit_table_caption(request.fields))
    return (f'<div class="ainotes-table ainotes-memory-fit"><table><thead><tr><th scope="col">model</th>{head}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
            f'<p class="ainotes-table-key">{caption}</p>')


def fit_table_caption(fields: Mapping[str, Any]) -> str:
    """What a fit table assumes, in words."""
    config = {**CHART_DEFAULTS, **FIT_TABLE_DEFAULTS, **fields}
    parts = [f"{config['dp']} data-parallel ranks", f"tensor parallel {config['tp']}",
             f"pipeline {config['pp']}", memory.OPTIMIZER_TITLES[config["optimizer"]]]
    if config["fp32_grad_accum"]:
        parts.append("FP32 gradient accumulation")
    if "micro_batch" in fields:
        parts.append(f"micro-batch {config['micro_batch']} × {int(config['seq_len']):,} tokens, recompute "
                     f"{config['recompute']}, {config['attention']} attention"
                     f"{', sequence parallel' if config['sequence_parallel'] else ''}"
                     + {None: ", dropout as each model was trained", True: ", dropout masks", False: ", no dropout"}[
                         config["dropout"]])
        activations = "activations of the first pipeline stage included"
    else:
        activations = "model states only (no micro-batch given, so no activations)"
    return ("Each cell: the lowest ZeRO stage at which the run fits the GPU's memory, and its memory per GPU "
            f"there (GB = 10⁹ bytes). Assumed: {', '.join(parts)}; {activations}. Logits, fragmentation "
            "and buffers come on top.")


def _draw_memory_fit_table(site: DrawSite, request: MemoryFitTableRequest, page: Page) -> Drawn:
    return Drawn(memory_fit_table_html(request, site.models(), site.presets_by_id))


KIND = FenceKind("memory-fit-table", parse_memory_fit_table, _draw_memory_fit_table, pure=True)
