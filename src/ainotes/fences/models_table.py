"""``models-table``: the model presets, each row with its architecture, counted and published
parameters, and the notes that use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core.hardware import Preset, item_by_id
from ainotes.core.models import BIAS_PARTS, ModelPreset
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import backlinks
from ainotes.html.page import Drawn, Page, relative_prefix
from ainotes.html.tables import notes_table, safe_link
from ainotes.inline.models import (
    attention_words,
    difference_text,
    embedding_words,
    mlp_words,
    params_short,
    params_text,
)

MAX_MODELS_PER_TABLE = 32


@dataclass(frozen=True)
class ModelsTableRequest:
    """Which models to list (``None``: all), and where the ``models`` key sits for errors."""

    model_ids: tuple[str, ...] | None
    where: str
    line: int


def parse_models_table(fence: Fence, where: str, presets: Mapping[str, Preset] | None = None) -> ModelsTableRequest:
    """``models-table`` fence: optional ``models``, a list of model ids (or ``all``; default all).
    The ids are checked when the table is drawn, against ``<presets>/models``."""
    data, lines = load_body(fence, where)
    reader = BodyReader(fence, where, data, ("models",), lines)
    key_line = reader.lines.get("models")
    line = fence.start_line if key_line is None else fence.start_line + 1 + key_line
    value = data.get("models")
    if value is None or value == "all":
        return ModelsTableRequest(None, where, line)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        reader.fail("models", f"'models' must be a list of model ids or 'all': {short(value)}")
    if len(value) > MAX_MODELS_PER_TABLE:
        reader.fail("models", f"'models' may name at most {MAX_MODELS_PER_TABLE}: {len(value)}")
    return ModelsTableRequest(tuple(dict.fromkeys(value)), where, line)


def draw_models_table(site: DrawSite, request: ModelsTableRequest, page: Page) -> Drawn:
    """The models, as :func:`models_table_html` draws them; an unknown id names the page:line."""

    known = site.models()
    if request.model_ids is None:
        chosen = list(known.values())
    else:
        try:
            chosen = [item_by_id(known.values(), model_id, "model") for model_id in request.model_ids]
        except InputError as exc:
            raise InputError(f"{request.where}:{request.line}: 'models': {exc}") from None
    return Drawn(models_table_html(chosen))


def models_table_html(models: Sequence[ModelPreset]) -> str:
    """One row per model in two columns, so that the table reads on a phone: the model (name, id,
    its counted parameters, active ones for a mixture, the published count and how far apart, the
    embeddings' share), then its architecture in words and its sources."""
    rows = []
    for model in models:
        counted = f"<strong>{escape(params_text(model.params, digits=4))}</strong> parameters"
        published = params_text(model.published_params, digits=5)
        difference = difference_text(model.params_difference)
        if model.is_moe:
            counted += f", {escape(params_text(model.active_params, digits=4))} active"
            if model.published_active_params is not None and model.active_params_difference is not None:
                published += f" / {params_text(model.published_active_params, digits=5)}"
                difference += f" / {difference_text(model.active_params_difference)}"
        architecture = [f"{model.layers:,} layers, d_model {model.d_model:,}", attention_words(model),
                        mlp_words(model), embedding_words(model)]
        if set(model.biases) == set(BIAS_PARTS):
            architecture.append("biases in linear layers and norms")
        elif model.biases:
            architecture.append(f"biases on {', '.join(model.biases)} only")
        if model.dropout is not None:
            architecture.append("trained with dropout" if model.dropout else "trained without dropout")
        sources = "<br>".join(f"[{n}] {safe_link(s.title, s.url)}" for n, s in enumerate(model.sources, start=1))
        rows.append([
            f"{escape(model.name)}<br><code>{escape(model.id)}</code><br>{counted}<br><small>published "
            f"{escape(published)} ({escape(difference)}); embeddings {escape(params_short(model.embedding_params))}"
            "</small>",
            "<small>" + "<br>".join(escape(line) for line in architecture) + "</small>"
            f'<br><small class="ainotes-sources">{sources}</small>',
        ])
    head = ["model and parameters", "architecture and sources"]
    table = notes_table(head, rows, "ainotes-models", numeric_from=len(head))
    key = ("Parameters are counted from the architecture (embeddings included; every expert of a mixture) "
           "and checked within 1 % of the published count.")
    return table.replace("</table></div>", f'</table><p class="ainotes-table-key">{escape(key)}</p></div>')


def _draw_models_table(site: DrawSite, request: ModelsTableRequest, page: Page) -> Drawn:
    drawn = draw_models_table(site, request, page)
    ids = list(site.models()) if request.model_ids is None else request.model_ids
    drawn.html += backlinks.used_in_html(site, "model", ids, relative_prefix(page.links_from))
    return drawn


KIND = FenceKind("models-table", parse_models_table, _draw_models_table, chart=False)
