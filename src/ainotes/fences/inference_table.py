"""``inference-table``: decode time per token, tokens per second and the bound, one row per model
and GPU, at the fence's batch, context and precisions.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ainotes.base.errors import InputError, PresetFileError
from ainotes.base.textcheck import short
from ainotes.core import checks, inference
from ainotes.core.hardware import Preset
from ainotes.core.models import ModelPreset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.inference import key_where, presets_with_rate, read_model_ids, resolve_models, tp_allowed
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html.page import Drawn, Page
from ainotes.html.tables import notes_table
from ainotes.inline.inference import number_text

AUTO_TP = "auto"


AUTO_TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class InferenceTableRequest:
    model_ids: tuple[str, ...] | None
    preset_ids: tuple[str, ...]
    context: int
    weights_dtype: str
    kv_dtype: str
    compute_dtype: str
    tp: int | str
    link_id: str | None
    where: str
    link_where: str = ""  # page:line of the 'link' key, where the body gives one
    tp_where: str = ""  # page:line of the 'tp' key, where the body gives one

    def implied_uses(self, site: DrawSite) -> set[tuple[str, str]]:
        """Every model where the fence names none, and the link each cell's TP group crosses."""
        models = resolve_models(self.model_ids, site.models(), self.where)
        uses = {("model", m.id) for m in models} if self.model_ids is None else set()
        for row in table_rows(self, models, site.presets_by_id, site.links):
            if row.setup is not None and row.setup.link is not None and self.link_id is None:
                uses.add(("link", row.setup.link.id))
        return uses


def parse_inference_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> InferenceTableRequest:
    """``inference-table`` fence: models (default every model preset), presets (default every preset with a
    rate at ``compute_dtype``), context (default 4096), weights_dtype, kv_dtype, compute_dtype (default bf16),
    tp (a number, or ``auto``, the default: the fewest chips, a power of two up to 64, that hold the weights
    and one sequence), link."""

    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("models", "presets", "context", "weights_dtype", "kv_dtype",
                                          "compute_dtype", "tp", "link"), lines)
    dtypes = {}
    for key, choices in (("weights_dtype", inference.STORAGE_DTYPES), ("kv_dtype", inference.STORAGE_DTYPES),
                         ("compute_dtype", inference.COMPUTE_DTYPES)):
        dtypes[key] = reader.checked(checks.one_of, key, data.get(key, inference.DEFAULT_DTYPE), choices=choices)
    model_ids = read_model_ids(reader, data)
    tp: int | str = data.get("tp", AUTO_TP)
    if tp != AUTO_TP:
        tp = reader.integer("tp", 1, 1, inference.MAX_TP)
    link_id = data.get("link")
    if link_id is not None and (not isinstance(link_id, str) or not link_id):
        reader.fail("link", f"'link' must be a link preset id such as nvlink-4: {short(link_id)}")
    preset_ids = presets_with_rate(reader, data, presets, dtypes["compute_dtype"],
                                   needs_link=tp != 1 and link_id is None)
    return InferenceTableRequest(
        model_ids=model_ids, preset_ids=preset_ids,
        context=reader.integer("context", 4096, 1, inference.MAX_CONTEXT), tp=tp, link_id=link_id,
        where=key_where(fence, where, lines, data, "models"), **dtypes,
        link_where=key_where(fence, where, lines, data, "link") if "link" in data else "",
        tp_where=key_where(fence, where, lines, data, "tp") if "tp" in data else "",
    )


@dataclass(frozen=True)
class TableRow:
    """One model on one GPU: how many chips, where it turns compute-bound, how large a batch fits."""

    model: ModelPreset
    preset: Preset
    setup: inference.InferenceSetup | None  # None: no TP degree tried holds it
    tried_up_to: int = 0

    @property
    def limit(self) -> str:
        """``memory`` when the KV cache fills the chip before the batch turns compute-bound, ``compute``
        when it does not, ``unknown`` without a capacity, ``weights`` when nothing fits."""
        if self.setup is None:
            return "weights"
        largest = self.setup.max_batch
        if largest is None:
            return "unknown"
        return "memory" if largest < self.setup.compute_bound_batch else "compute"


def table_rows(request: InferenceTableRequest, models: Sequence[ModelPreset], presets: Mapping[str, Preset],
               links: Callable[[], Mapping[str, Any]]) -> list[TableRow]:
    """Per model and GPU, the setup the table reports: ``tp`` chips, or with ``auto`` the fewest that fit."""
    rows = []
    for model in models:
        for preset_id in request.preset_ids:
            preset = presets[preset_id]
            tried = [request.tp] if isinstance(request.tp, int) else [
                t for t in AUTO_TP_CHOICES if tp_allowed(model, t)]
            chosen = None
            for tp in tried:
                fields = {"model": model.id, "preset": preset.id, "context": request.context, "tp": tp,
                          "weights_dtype": request.weights_dtype, "kv_dtype": request.kv_dtype,
                          "compute_dtype": request.compute_dtype, "link": request.link_id}
                try:
                    one = inference.InferenceSetup.from_fields(
                        {k: v for k, v in fields.items() if v is not None}, models={model.id: model},
                        presets=presets, links=links)
                except PresetFileError:
                    raise  # a link file: it names its own file and line
                except InputError as exc:
                    # A tp the model's heads refuse, or a link id no file has: the same on every GPU, told at its key.
                    for field, at in (("tp", request.tp_where), ("link", request.link_where)):
                        if getattr(exc, "field", "") == field and at:
                            raise InputError(f"{at}: {exc}") from None
                    at_link = getattr(exc, "field", "") == "link" and request.link_where
                    raise InputError(f"{request.link_where if at_link else request.where}: {model.id} on "
                                     f"{preset.id}: {exc}") from None
                chosen = one
                if one.max_batch is None or one.max_batch >= 1 or isinstance(request.tp, int):
                    break
                chosen = None
            rows.append(TableRow(model, preset, chosen, tried[-1] if tried else 0))
    return rows


def inference_table_html(rows: Sequence[TableRow], request: InferenceTableRequest) -> str:
    """One row per model and GPU (so a new preset adds rows, never a column that widens the table past
    the page); each cell the largest batch whose KV cache fits at the context and the batch past which
    the matmuls turn compute-bound, the one that limits first in bold (and the chips, when the fence
    lets each cell take the fewest that hold the model). Names escaped."""

    body = []
    previous = None
    for row in rows:
        model = row.model
        # The model's name once, at its first row; its other rows leave the cell empty.
        name = (f"{html.escape(model.name)}<br><code>{html.escape(model.id)}</code>"
                if model.id != previous else "")
        previous = model.id
        preset = f'{html.escape(row.preset.name)}<br><code>{html.escape(row.preset.id)}</code>'
        body.append([name, preset, _table_cell(row, request)])
    head = ["model", "GPU", "largest batch that fits; compute-bound past"]
    return notes_table(head, body, "ainotes-inference", numeric_from=2)


def _table_cell(row: TableRow, request: InferenceTableRequest) -> str:
    one = row.setup
    if one is None or one.max_batch == 0:
        chips = row.tried_up_to if one is None else one.tp
        return f'<span class="ainotes-bound">weights do not fit {chips} chip{"s" if chips > 1 else ""}</span>'
    star = html.escape(number_text(one.compute_bound_batch))
    largest = one.max_batch
    fits = "capacity not given" if largest is None else f"fits {largest:,}"
    compute = f"compute past {star}"
    if one.model.is_moe:  # attention turns first, each expert later: both, the experts' the one that counts
        compute = f"compute past {html.escape(number_text(one.b_crit))} (attention), {star} (experts)"
    if row.limit == "memory":
        fits = f"<strong>{fits}</strong>"
    elif row.limit == "compute":
        compute = f"<strong>{compute}</strong>"
    on = f"<br><small>{one.tp} chip{'s' if one.tp > 1 else ''}</small>" if request.tp == AUTO_TP else ""
    return f"{fits}<br>{compute}{on}"


def _draw_inference_table(site: DrawSite, request: InferenceTableRequest, page: Page) -> Drawn:
    models = resolve_models(request.model_ids, site.models(), request.where)
    rows = table_rows(request, models, site.presets_by_id, site.links)
    return Drawn(inference_table_html(rows, request))


KIND = FenceKind("inference-table", parse_inference_table, _draw_inference_table, pure=True)  # models, GPUs, links
