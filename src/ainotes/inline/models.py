"""Models in pages: the ``models-table`` fence and the inline forms that name a model preset.

The fence's parser only validates the body's shape (``FenceKind.parse`` receives the GPU
presets, not the models); the drawer looks the ids up in :meth:`ainotes.build.site.NotesSite.models`
and raises at the line of the ``models`` key. Every number comes from :mod:`ainotes.core.models`.

=============================================  ===========================================
``{{ params MODEL [PART] [UNIT] [digits=N] }}``  PART: ``total`` (default), ``active`` (what a
                                               token uses: the active experts of a mixture),
                                               ``published`` (the paper's count),
                                               ``embeddings``, ``non-embedding``;
                                               UNIT: ``B`` (default: ``70.6 B``), ``M``,
                                               ``billion``, ``exact`` (``70,553,706,496``);
                                               N significant figures, 1 to 6 (default 3)
``{{ model-name MODEL }}``                     the model's display name
``{{ models }}``                               every model's name, in words
``{{ mfu KEY=VALUE ... }}``                    MFU of a training job (:class:`ainotes.core.jobs.TrainingJob`:
                                               ``params=`` or ``model=``), e.g. ``46.2 %``
``{{ hfu KEY=VALUE ... }}``                    HFU of the same job (``recompute=``)
``{{ flops-per-token KEY=VALUE ... }}``        model FLOPs per token
``{{ train-time KEY=VALUE ... }}``             :func:`ainotes.inline.cost.train_time`, with ``model=``
=============================================  ===========================================

The job forms live here because a job may name a model (``model=palm-540b seq_len=2048``),
which only a :class:`~ainotes.inline.formcontext.FormContext` can look up.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ainotes.base import units
from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core.jobs import JOB_FIELDS, ModelsLoader, TrainingJob
from ainotes.core.models import ModelPreset
from ainotes.inline import cost as cost_forms
from ainotes.inline.formcontext import Form, FormContext

if TYPE_CHECKING:
    pass


# --- numbers as a page reads them ----------------------------------------------------------

PARAM_UNITS = {"B": (1e9, " B"), "M": (1e6, " M"), "billion": (1e9, " billion")}
PARAM_UNIT_WORDS = (*PARAM_UNITS, "exact")


def params_text(count: float, unit: str = "B", digits: int = 3) -> str:
    """A parameter count as prose reads it: ``70.6 B``, ``70,554 M``, ``70.6 billion``, or every digit
    (``70,553,706,496``) with ``exact``. ``digits`` significant figures, ties half-up (:mod:`ainotes.base.units`)."""
    if unit == "exact":
        return units.fixed(count, grouping=True)
    scale, suffix = PARAM_UNITS[unit]
    value = count / scale
    if unit == "M" and value >= 10 ** digits:  # no "7.06e4 M": whole millions, grouped
        return units.fixed(value, grouping=True) + suffix
    return units.significant(value, digits) + suffix


def params_short(count: float, digits: int = 3) -> str:
    """``540.4 B`` or, under a billion, ``262 M``."""
    return params_text(count, "B" if count >= 1e9 else "M", digits)


def difference_text(fraction: float) -> str:
    """``+0.12 %``, ``−0.07 %``, ``0.00 %``: how far a count sits from the published one."""
    text = units.fixed(abs(fraction) * 100, 2)
    sign = "" if text == "0.00" else ("+" if fraction > 0 else "−")
    return f"{sign}{text} %"


def attention_words(model: ModelPreset) -> str:
    """``64 query heads of 128; 8 key/value heads (grouped-query)``, the latent of latent attention, the
    window of windowed layers."""
    if model.mla is not None:
        words = (f"{model.heads:,} heads of {model.head_dim:,}; latent attention: a {model.mla.kv_latent:,}-element "
                 f"KV latent and a {model.mla.rope_head_dim:,}-element RoPE key cached per token")
    else:
        kind = ("multi-head" if model.kv_heads == model.heads
                else "multi-query" if model.kv_heads == 1 else "grouped-query")
        kv = "1 key/value head" if model.kv_heads == 1 else f"{model.kv_heads:,} key/value heads"
        words = f"{model.heads:,} query heads of {model.head_dim:,}; {kv} ({kind})"
    if model.sliding_window is not None:
        window = model.sliding_window
        words += f"; {window.layers:,} of {model.layers:,} layers attend over a {window.window:,}-token window"
    return words


def mlp_words(model: ModelPreset) -> str:
    """``SwiGLU MLP, d_ff 28,672`` or ``SwiGLU experts: 8 × d_ff 14,336, 2 per token``."""
    mlp = {"gelu": "GELU", "swiglu": "SwiGLU", "geglu": "GeGLU"}[model.mlp]
    if model.experts is None:
        return f"{mlp} MLP, d_ff {model.d_ff:,}"
    words = f"{mlp} experts: {model.experts:,} × d_ff {model.d_ff:,}, {model.active_experts:,} per token"
    if model.shared_experts:
        words += f", {model.shared_experts:,} shared"
    if model.dense_layers is not None:
        words += f"; the first {model.dense_layers.count:,} layers dense, d_ff {model.dense_layers.d_ff:,}"
    return words


def embedding_words(model: ModelPreset) -> str:
    """``vocabulary 128,256, separate output head`` (plus learned positions where the model has them)."""
    head = "shared with the output head" if model.tied_embeddings else "separate output head"
    words = f"vocabulary {model.vocab:,}, {head}"
    if model.learned_positions:
        words += f"; {model.learned_positions:,} learned positions"
    return words


# --- the fence ---------------------------------------------------------------------------------


# --- inline forms --------------------------------------------------------------------------------

PARAM_PARTS = ("total", "active", "published", "embeddings", "non-embedding")


def _one_model(args: list[str], form: str, usage: str, context: FormContext) -> tuple[ModelPreset, list[str]]:
    if not args:
        raise InputError(f"'{form}' needs a model id: {usage}")
    return context.model(args[0]), args[1:]


def _no_options(options: Mapping[str, str], form: str) -> None:
    if options:
        raise InputError(f"'{form}' takes no key=value options: {next(iter(options))}= (allowed: nothing more)")


def params_form(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ params MODEL [PART] [UNIT] [digits=N] }}`` (see the module docstring)."""
    form, usage = "params", "{{ params MODEL [PART] [UNIT] [digits=N] }}"
    for key in options:
        if key != "digits":
            hint = "; a part or unit is a plain word: {{ params MODEL active B }}" if key in ("part", "unit") else ""
            raise InputError(f"'{form}' does not take {key}= (allowed: digits=){hint}")
    model, words = _one_model(args, form, usage, context)
    part, unit = "total", "B"
    seen: set[str] = set()
    allowed = f"a part, {', '.join(PARAM_PARTS)}; a unit, {', '.join(PARAM_UNIT_WORDS)}; digits="
    for word in words:
        kind = "part" if word in PARAM_PARTS else "unit" if word in PARAM_UNIT_WORDS else None
        if kind is None:
            close = difflib.get_close_matches(word, (*PARAM_PARTS, *PARAM_UNIT_WORDS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"'{form}' does not take {short(word)} (allowed: {allowed}){hint}")
        if kind in seen:
            raise InputError(f"'{form}' takes one {kind}: {short(' '.join(words))}")
        seen.add(kind)
        part, unit = (word, unit) if kind == "part" else (part, word)
    digits = checks.whole_number(options.get("digits", "3"), "digits=", "digits", low=1, high=6)
    if part == "published":
        count: float = model.published_params
    elif part == "active":
        count = model.active_params
    elif part == "embeddings":
        count = model.embedding_params
    elif part == "non-embedding":
        count = model.params - model.embedding_params
    else:
        count = model.params
    return params_text(count, unit, digits)


def model_name_form(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ model-name MODEL }}``: the display name."""
    _no_options(options, "model-name")
    model, rest = _one_model(args, "model-name", "{{ model-name MODEL }}", context)
    if rest:
        raise InputError(f"'model-name' does not take {short(rest[0])} (allowed: nothing more)")
    return model.name


def models_form(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ models }}``: every model's name in words, largest first."""
    _no_options(options, "models")
    if args:
        raise InputError(f"'models' does not take {short(args[0])} (allowed: nothing more)")
    names = [model.name for model in context.models().values()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --- training jobs that may name a model: mfu, hfu, flops-per-token, train-time -----------------

_UTILIZATION_FIELDS = tuple(key for key in JOB_FIELDS if key != "tokens")  # tokens: only for time to train


def _models_loader(context: FormContext) -> ModelsLoader | None:
    return context.models if context.models_loader is not None else None


def _job(form: str, args: list[str], options: dict[str, str], context: FormContext) -> TrainingJob:
    """The job of a ``{{ mfu ... }}``-style form (:class:`ainotes.core.jobs.TrainingJob`), strict about its words."""
    allowed = ", ".join(f"{key}=" for key in _UTILIZATION_FIELDS)
    if args:
        raise InputError(f"'{form}' does not take {short(args[0])} (allowed: {allowed})")
    for key in options:
        if key not in _UTILIZATION_FIELDS:
            raise InputError(f"'{form}' does not take {key}= (allowed: {allowed})")
    return TrainingJob.from_fields(options, context.presets, label=lambda key: f"{key}=",
                                   models=_models_loader(context))


def mfu_form(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ mfu KEY=VALUE ... }}``: the job's MFU, e.g. ``46.2 %``."""
    return units.percent(_job("mfu", args, options, context).utilization().mfu)


def hfu_form(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ hfu KEY=VALUE ... }}``: the job's HFU (counting what ``recompute=`` runs again)."""
    return units.percent(_job("hfu", args, options, context).utilization().hfu)


def flops_per_token_form(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ flops-per-token KEY=VALUE ... }}``: model FLOPs per token, e.g. ``3.278 TFLOP``."""
    return units.si(_job("flops-per-token", args, options, context).utilization().model_flops_per_token, "FLOP")


def train_time_form(args: list[str], options: dict[str, str], context: FormContext) -> str:
    """``{{ train-time ... }}`` (:func:`ainotes.inline.cost.train_time`), which may name ``model=``
    (with ``seq_len=`` and ``embeddings=``) instead of ``params=`` and ``layers= heads= head_dim=``."""
    return cost_forms.train_time(args, options, context.presets, context.links_loader, _models_loader(context))


FORMS: dict[str, Form] = {
    "params": params_form,
    "model-name": model_name_form,
    "models": models_form,
    "mfu": mfu_form,
    "hfu": hfu_form,
    "flops-per-token": flops_per_token_form,
    "train-time": train_time_form,
}
