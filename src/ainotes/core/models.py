"""Model presets as values: frozen ``ModelPreset`` objects, one per file of ``presets/models/`` (read and
checked by :mod:`ainotes.presets.models`), each validated once, in its constructor.

A model preset is a transformer's published architecture: what the parameter count,
the memory of a training run (:mod:`ainotes.core.memory`) and the cost of inference
(:mod:`ainotes.core.inference`) need. Keys (``../shared/CONTRACT.md``, third and fourth rounds):

* ``name``, ``sources`` (non-empty list of ``{title, url}``), optional ``notes``;
* ``layers`` L, ``d_model`` h, ``heads`` a, ``kv_heads`` (= ``heads`` without
  grouped-query attention, 1 for multi-query), ``head_dim`` d_head, ``d_ff``
  (per expert for a mixture of experts), ``vocab`` V;
* ``mlp``: ``gelu`` (two matrices, h×d_ff and d_ff×h), ``swiglu`` or ``geglu`` (gated: three);
* ``tied_embeddings``: whether the output head reuses the input embedding;
* optional ``experts`` E and ``active_experts`` (a token's top-k), ``learned_positions``
  (rows of a learned position embedding, GPT-3: 2,048);
* optional ``biases``: ``true`` (every linear layer and norm, as GPT-3's), ``false``, or the
  projections that carry one, from ``q, k, v, o, mlp, norms`` (Qwen2: ``[q, k, v]``);
* optional ``dropout``: whether the model was trained with dropout (PaLM and Llama 3.1 were not);
  left out, the memory estimate counts Korthikanti et al.'s dropout masks, as their paper does;
* optional ``mla``: multi-head latent attention (DeepSeek-V2 and V3), ``{kv_latent, rope_head_dim,
  q_latent}``: the KV cache holds the compressed latent (``kv_latent`` elements) and one decoupled
  RoPE key (``rope_head_dim``) per token per layer, shared by all heads; ``q_latent`` (optional) is
  the queries' own compression. ``head_dim`` is then each head's non-rotary query/key and value width;
* optional ``shared_experts``: experts of width ``d_ff`` every token passes through (DeepSeek-V3: 1);
* optional ``dense_layers``: ``{count, d_ff}``, the first layers of a mixture of experts that are
  dense, with their own MLP width (DeepSeek-V3: 3 layers of 18,432);
* optional ``sliding_window``: ``{window, layers}``, how many layers attend only to the last
  ``window`` tokens (Mistral 7B: all 32 over 4,096; Gemma 2: every other layer over 4,096);
  their KV cache stops growing at the window;
* ``published_params`` (and, for a mixture of experts, ``published_active_params``, required):
  the count where the source prints it, in parameters. ``published_active_excludes_embedding``
  says the publisher leaves the input embedding out of the active count (DeepSeek's 36.6 B).
  The loader counts parameters from the architecture (:func:`count_params`) and refuses a file
  whose count is more than 1 % away from the published one.

The rules and one-line errors are the GPU presets' (:mod:`ainotes.presets.folder`):
an unknown or missing key, a wrong type, zero, a negative, NaN or infinity is one
line naming the file and the key. The id is the file's stem and may hold dots
(``llama-3.1-70b``). The GPU loader reads only files directly in ``presets/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core.hardware import Source, item_by_id

MLP_KINDS = ("gelu", "swiglu", "geglu")
GATED_MLPS = ("swiglu", "geglu")
#: Where a model may carry biases: the four attention projections, the MLP's matrices, the norms.
BIAS_PARTS = ("q", "k", "v", "o", "mlp", "norms")
# Whole-number keys and the largest value any published transformer comes near, times a margin:
# large enough for any real model, small enough to catch a figure typed in the wrong unit.
INTEGER_KEYS = {
    "layers": 10_000, "d_model": 1_000_000, "heads": 100_000, "kv_heads": 100_000, "head_dim": 100_000,
    "d_ff": 10_000_000, "vocab": 100_000_000, "experts": 100_000, "active_experts": 100_000,
    "learned_positions": 100_000_000, "shared_experts": 100_000,
}
#: The whole numbers inside the mapping keys, with the same kind of limit.
MAPPING_KEYS: dict[str, dict[str, int]] = {
    "mla": {"kv_latent": 1_000_000, "rope_head_dim": 100_000, "q_latent": 1_000_000},
    "dense_layers": {"count": 10_000, "d_ff": 10_000_000},
    "sliding_window": {"window": 100_000_000, "layers": 10_000},
}
MAPPING_REQUIRED = {"mla": ("kv_latent", "rope_head_dim"), "dense_layers": ("count", "d_ff"),
                    "sliding_window": ("window", "layers")}
# The keys that describe the architecture, in the order tables and JSON list them.
ARCHITECTURE_KEYS = ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab", "mlp",
                     "tied_embeddings", "experts", "active_experts", "shared_experts", "biases",
                     "learned_positions", "dropout", "mla", "dense_layers", "sliding_window")


@dataclass(frozen=True)
class LatentAttention:
    """Multi-head latent attention (DeepSeek-AI 2024, DeepSeek-V2, section 2.1): a KV latent of
    ``kv_latent`` elements and a decoupled RoPE key of ``rope_head_dim`` per token, per layer."""

    kv_latent: int
    rope_head_dim: int
    q_latent: int | None = None


@dataclass(frozen=True)
class DenseLayers:
    """The first ``count`` layers of a mixture of experts are dense, with an MLP of width ``d_ff``."""

    count: int
    d_ff: int


@dataclass(frozen=True)
class SlidingWindow:
    """``layers`` of the model's layers attend only to the last ``window`` tokens."""

    window: int
    layers: int


@dataclass(frozen=True)
class ModelPreset:
    """One transformer's architecture, as published; counts derived in properties.

    Symbols follow FACTS and Korthikanti et al.: L layers, h = ``d_model``, a = ``heads``,
    ``kv_heads`` key/value heads, d_head = ``head_dim``, V = ``vocab``.
    """

    id: str
    name: str
    layers: int
    d_model: int
    heads: int
    kv_heads: int
    head_dim: int
    d_ff: int
    vocab: int
    mlp: Literal["gelu", "swiglu", "geglu"]
    tied_embeddings: bool
    published_params: float
    sources: tuple[Source, ...]
    file: str = ""
    experts: int | None = None
    active_experts: int | None = None
    biases: tuple[str, ...] = ()
    learned_positions: int = 0
    published_active_params: float | None = None
    notes: str | None = None
    dropout: bool | None = None
    mla: LatentAttention | None = None
    shared_experts: int = 0
    dense_layers: DenseLayers | None = None
    sliding_window: SlidingWindow | None = None
    published_active_excludes_embedding: bool = False

    def __post_init__(self) -> None:
        where = self.file or f"model {short(self.id)}"
        for key in ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab"):
            check_whole(where, key, getattr(self, key))
        if self.mlp not in MLP_KINDS:
            raise InputError(f"{where}: 'mlp' must be one of {', '.join(MLP_KINDS)}: {short(self.mlp)}")
        if isinstance(self.biases, bool):  # a caller's true/false: every part, or none
            object.__setattr__(self, "biases", BIAS_PARTS if self.biases else ())
        if any(part not in BIAS_PARTS for part in self.biases):
            raise InputError(f"{where}: 'biases' parts must be among {', '.join(BIAS_PARTS)}: {short(self.biases)}")
        if self.heads % self.kv_heads:
            raise InputError(f"{where}: 'heads' ({self.heads}) must be a multiple of 'kv_heads' ({self.kv_heads}): "
                             "each key/value head serves a whole group of query heads")
        if (self.experts is None) != (self.active_experts is None):
            raise InputError(f"{where}: 'experts' and 'active_experts' go together (a mixture of experts "
                             "names how many experts it has and how many a token uses)")
        if self.experts is not None and self.active_experts is not None and self.active_experts > self.experts:
            raise InputError(f"{where}: 'active_experts' ({self.active_experts}) cannot exceed "
                             f"'experts' ({self.experts})")
        self._check_moe_keys(where)
        if self.sliding_window is not None and self.sliding_window.layers > self.layers:
            raise InputError(f"{where}: 'sliding_window.layers' ({self.sliding_window.layers}) cannot exceed "
                             f"'layers' ({self.layers})")

    def _check_moe_keys(self, where: str) -> None:
        if self.experts is None:
            for key, value in (("published_active_params", self.published_active_params),
                               ("shared_experts", self.shared_experts or None), ("dense_layers", self.dense_layers)):
                if value is not None:
                    raise InputError(f"{where}: {short(key)} is for a mixture of experts; "
                                     "give 'experts' and 'active_experts' too")
            return
        if self.dense_layers is not None and self.dense_layers.count >= self.layers:
            raise InputError(f"{where}: 'dense_layers.count' ({self.dense_layers.count}) must leave some of the "
                             f"{self.layers} layers to the experts")

    # -- counts --------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.experts is not None

    @property
    def params(self) -> int:
        """Every parameter the model stores (all experts), counted from the architecture."""
        return count_params(self)

    @property
    def active_params(self) -> int:
        """Parameters one token uses: all of them for a dense model, the active experts' for MoE."""
        return count_params(self, active_only=True)

    @property
    def embedding_params(self) -> int:
        """Input embedding V·h, plus the output head V·h when it is not tied, plus learned positions."""
        return self.vocab * self.d_model * (1 if self.tied_embeddings else 2) + self.learned_positions * self.d_model

    @property
    def lookup_only_params(self) -> int:
        """The tables a token reads one row of and no matmul uses: the input embedding when the output
        head is separate, and learned positions (a tied table is read whole, as the output head)."""
        table = 0 if self.tied_embeddings else self.vocab * self.d_model
        return table + self.learned_positions * self.d_model

    @property
    def params_difference(self) -> float:
        """How far the counted parameters sit from the published count, as a fraction (+0.001 = 0.1 % more)."""
        return self.params / self.published_params - 1.0

    @property
    def active_params_as_published(self) -> int:
        """The active count under the publisher's convention (without the input embedding where
        ``published_active_excludes_embedding``)."""
        return self.active_params - (self.vocab * self.d_model if self.published_active_excludes_embedding else 0)

    @property
    def active_params_difference(self) -> float | None:
        """The same for the active count, where the file gives ``published_active_params``."""
        if self.published_active_params is None:
            return None
        return self.active_params_as_published / self.published_active_params - 1.0

    @property
    def trained_with_dropout(self) -> bool:
        """``dropout`` where the file states it; else True (Korthikanti et al. count dropout masks)."""
        return True if self.dropout is None else self.dropout

    def record(self) -> dict[str, Any]:
        """The model as JSON-ready data (``ainotes models --json``): the counts, every architecture
        key, the sources and the file it came from."""
        def plain(value: Any) -> Any:
            if isinstance(value, (LatentAttention, DenseLayers, SlidingWindow)):
                return {k: v for k, v in vars(value).items() if v is not None}
            return list(value) if isinstance(value, tuple) else value

        return {
            "id": self.id, "name": self.name,
            "params": self.params, "active_params": self.active_params,
            "published_params": self.published_params, "params_difference": self.params_difference,
            "published_active_params": self.published_active_params,
            "active_params_difference": self.active_params_difference,
            "embedding_params": self.embedding_params,
            **{key: plain(getattr(self, key)) for key in ARCHITECTURE_KEYS},
            "notes": self.notes,
            "sources": [{"title": s.title, "url": s.url} for s in self.sources],
            "path": self.file,
        }

    # -- widths --------------------------------------------------------------

    @property
    def q_dim(self) -> int:
        """Width of all query heads together, a·d_head (equal to h in most models, not in PaLM's)."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the key (or value) heads together, kv_heads·d_head."""
        return self.kv_heads * self.head_dim

    @property
    def score_dim(self) -> int:
        """Query/key width summed over the heads, as the scores Q·Kᵀ use it: a·d_head, plus a·d_rope
        with latent attention's decoupled RoPE key."""
        return self.heads * (self.head_dim + (self.mla.rope_head_dim if self.mla is not None else 0))

    @property
    def kv_elements_per_token_per_layer(self) -> int:
        """What one token adds to one layer's KV cache: 2·kv_heads·d_head (K and V), or, with latent
        attention, the latent and the RoPE key, d_c + d_rope (DeepSeek-V3: 512 + 64 = 576)."""
        if self.mla is not None:
            return self.mla.kv_latent + self.mla.rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    @property
    def windowed_layers(self) -> int:
        return self.sliding_window.layers if self.sliding_window is not None else 0

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (0 for a dense model)."""
        if self.experts is None:
            return 0
        return self.layers - (self.dense_layers.count if self.dense_layers is not None else 0)

    @property
    def expert_params(self) -> int:
        """One expert's MLP (or a dense model's MLP): 2·h·d_ff (GELU) or 3·h·d_ff (gated), with its biases."""
        return mlp_params(self, self.d_ff)

    @property
    def routed_expert_params(self) -> int:
        """Every routed expert of every MoE layer: what a decode step reads only where tokens go."""
        return self.moe_layers * (self.experts or 0) * self.expert_params

    def kv_tokens_held(self, context: int) -> int:
        """Token-layers of KV cache at ``context``: L·S, with each windowed layer capped at its window."""
        window = self.sliding_window
        if window is None:
            return self.layers * context
        return (self.layers - window.layers) * context + window.layers * min(context, window.window)

    def attention_pairs(self, prompt: int) -> int:
        """Query–key pairs a causal prefill of ``prompt`` tokens scores, summed over the layers:
        T(T+1)/2 per layer, or, over a window w, Σᵢ min(i, w)."""
        full = prompt * (prompt + 1) // 2
        window = self.sliding_window
        if window is None:
            return self.layers * full
        w = min(window.window, prompt)
        windowed = w * (w + 1) // 2 + (prompt - w) * w
        return (self.layers - window.layers) * full + window.layers * windowed


def mlp_params(model: ModelPreset, d_ff: int) -> int:
    """One MLP of width ``d_ff``: 2·h·d_ff (GELU) or 3·h·d_ff (gated), plus its biases where it has them."""
    matrices = 3 if model.mlp in GATED_MLPS else 2
    params = matrices * model.d_model * d_ff
    if "mlp" in model.biases:
        params += (matrices - 1) * d_ff + model.d_model
    return params


def attention_params(model: ModelPreset) -> int:
    """One layer's attention projections.

    Standard: h·(a·d_head) for Q, h·(kv·d_head) each for K and V, (a·d_head)·h for the output.
    Latent attention (DeepSeek-V2, section 2.1; V3's config): the query h·a·(d_head + d_rope), or
    through its latent, h·d_q + d_q + d_q·a·(d_head + d_rope) (the latent's norm included); the KV
    down-projection h·(d_c + d_rope) and its norm d_c; the up-projection of keys and values
    d_c·a·2·d_head; the output a·d_head·h. Biases add each projection's output width.
    """
    h, mla = model.d_model, model.mla
    if mla is None:
        params = h * model.q_dim + 2 * h * model.kv_dim + model.q_dim * h
    else:
        q_width = model.score_dim
        query = (h * mla.q_latent + mla.q_latent + mla.q_latent * q_width) if mla.q_latent else h * q_width
        params = (query + h * (mla.kv_latent + mla.rope_head_dim) + mla.kv_latent
                  + mla.kv_latent * model.heads * 2 * model.head_dim + model.q_dim * h)
    widths = {"q": model.q_dim, "k": model.kv_dim, "v": model.kv_dim, "o": h}
    return params + sum(widths[part] for part in model.biases if part in widths)


def count_params(model: ModelPreset, *, active_only: bool = False) -> int:
    """Parameters from the architecture (the counting rule of FACTS, "Model architectures").

    Per layer: :func:`attention_params`; the MLP, :func:`mlp_params` (the first
    ``dense_layers`` at their own width; the rest, for a mixture of experts, E routed experts
    (the k active with ``active_only``), the shared experts and a router h·E); two norms of h
    weights (twice with biases on the norms). Then the embeddings V·h (twice when the output
    head is not tied), learned positions, and a final norm. Reproduces the published counts of
    GPT-3 (Brown et al. 2020, Table 2.1), PaLM (Chowdhery et al. 2022, Table 1), LLaMA-2,
    Llama 3.1, Mixtral, DeepSeek-V3, Qwen2.5 and Gemma 2 within 1 %.
    """
    h = model.d_model
    norm = h * (2 if "norms" in model.biases else 1)
    per_layer = attention_params(model) + 2 * norm
    if model.experts is None or model.active_experts is None:
        mlps = model.layers * model.expert_params
    else:
        routed = model.active_experts if active_only else model.experts
        moe = (routed + model.shared_experts) * model.expert_params + h * model.experts
        dense = model.dense_layers
        mlps = model.moe_layers * moe + (dense.count * mlp_params(model, dense.d_ff) if dense is not None else 0)
    return model.layers * per_layer + mlps + model.embedding_params + norm


def model_by_id(models: Iterable[ModelPreset], model_id: str) -> ModelPreset:
    """The model called ``model_id``; an :class:`InputError` lists the known ids otherwise."""
    return item_by_id(models, model_id, "model")


def check_whole(where: str, key: str, value: Any, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        # 96.0 or 1e3: YAML reads a dot or an exponent as a fraction, even when it is whole.
        hint = f" (write {value:.0f})" if isinstance(value, float) and value.is_integer() else ""
        raise InputError(f"{where}: {short(key)} must be a whole number, not {checks.kind(value)}: "
                         f"{short(value)}{hint}")
    high = INTEGER_KEYS[key] if high is None else high
    if not 1 <= value <= high:
        raise InputError(f"{where}: {short(key)} must be between 1 and {high:,}: {short(value)}")
