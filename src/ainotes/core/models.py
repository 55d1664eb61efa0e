"""Model presets as values: frozen ``ModelPreset`` objects, one per file of ``presets/models/`` (read and
checked by :mod:`ainotes.presets.models`), each validated once, in its constructor.

A model preset is a transformer's published architecture: what the parameter count,
the memory of a training run (:mod:`ainotes.core.memory`) and the cost of inference
(:mod:`ainotes.core.inference`) need. Keys (``../shared/CONTRACT.md``, third round):

* ``name``, ``sources`` (non-empty list of ``{title, url}``), optional ``notes``;
* ``layers`` L, ``d_model`` h, ``heads`` a, ``kv_heads`` (= ``heads`` without
  grouped-query attention, 1 for multi-query), ``head_dim`` d_head, ``d_ff``
  (per expert for a mixture of experts), ``vocab`` V;
* ``mlp``: ``gelu`` (two matrices, h×d_ff and d_ff×h) or ``swiglu`` (three);
* ``tied_embeddings``: whether the output head reuses the input embedding;
* optional ``experts`` E and ``active_experts`` (a token's top-k), ``biases``
  (linear layers and norms carry biases, as GPT-3's do), ``learned_positions``
  (rows of a learned position embedding, GPT-3: 2,048);
* ``published_params`` (and, for a mixture of experts, optional
  ``published_active_params``): the paper's count, in parameters. The loader
  counts parameters from the architecture (:func:`count_params`) and refuses a
  file whose count is more than 1 % away from the published one.

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

MLP_KINDS = ("gelu", "swiglu")
# Whole-number keys and the largest value any published transformer comes near, times a margin:
# large enough for any real model, small enough to catch a figure typed in the wrong unit.
INTEGER_KEYS = {
    "layers": 10_000, "d_model": 1_000_000, "heads": 100_000, "kv_heads": 100_000, "head_dim": 100_000,
    "d_ff": 10_000_000, "vocab": 100_000_000, "experts": 100_000, "active_experts": 100_000,
    "learned_positions": 100_000_000,
}
# The keys that describe the architecture, in the order tables and JSON list them.
ARCHITECTURE_KEYS = ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab", "mlp",
                     "tied_embeddings", "experts", "active_experts", "biases", "learned_positions")


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
    mlp: Literal["gelu", "swiglu"]
    tied_embeddings: bool
    published_params: float
    sources: tuple[Source, ...]
    file: str = ""
    experts: int | None = None
    active_experts: int | None = None
    biases: bool = False
    learned_positions: int = 0
    published_active_params: float | None = None
    notes: str | None = None

    def __post_init__(self) -> None:
        where = self.file or f"model {short(self.id)}"
        for key in ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab"):
            check_whole(where, key, getattr(self, key))
        if self.mlp not in MLP_KINDS:
            raise InputError(f"{where}: 'mlp' must be one of {', '.join(MLP_KINDS)}: {short(self.mlp)}")
        if self.heads % self.kv_heads:
            raise InputError(f"{where}: 'heads' ({self.heads}) must be a multiple of 'kv_heads' ({self.kv_heads}): "
                             "each key/value head serves a whole group of query heads")
        if (self.experts is None) != (self.active_experts is None):
            raise InputError(f"{where}: 'experts' and 'active_experts' go together (a mixture of experts "
                             "names how many experts it has and how many a token uses)")
        if self.experts is not None and self.active_experts is not None and self.active_experts > self.experts:
            raise InputError(f"{where}: 'active_experts' ({self.active_experts}) cannot exceed "
                             f"'experts' ({self.experts})")
        if self.published_active_params is not None and self.experts is None:
            raise InputError(f"{where}: 'published_active_params' is for a mixture of experts; "
                             "give 'experts' and 'active_experts' too")

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
    def params_difference(self) -> float:
        """How far the counted parameters sit from the published count, as a fraction (+0.001 = 0.1 % more)."""
        return self.params / self.published_params - 1.0

    @property
    def active_params_difference(self) -> float | None:
        """The same for the active count, where the file gives ``published_active_params``."""
        if self.published_active_params is None:
            return None
        return self.active_params / self.published_active_params - 1.0

    def record(self) -> dict[str, Any]:
        """The model as JSON-ready data (``ainotes models --json``): the counts, every architecture
        key, the sources and the file it came from."""
        return {
            "id": self.id, "name": self.name,
            "params": self.params, "active_params": self.active_params,
            "published_params": self.published_params, "params_difference": self.params_difference,
            "published_active_params": self.published_active_params,
            "active_params_difference": self.active_params_difference,
            "embedding_params": self.embedding_params,
            **{key: getattr(self, key) for key in ARCHITECTURE_KEYS},
            "notes": self.notes,
            "sources": [{"title": s.title, "url": s.url} for s in self.sources],
            "path": self.file,
        }

    @property
    def q_dim(self) -> int:
        """Width of all query heads together, a·d_head (equal to h in most models, not in PaLM's)."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the key (or value) heads together, kv_heads·d_head."""
        return self.kv_heads * self.head_dim


def count_params(model: ModelPreset, *, active_only: bool = False) -> int:
    """Parameters from the architecture (the counting rule of FACTS, "Model architectures").

    Per layer: attention h·(a·d_head) for Q, 2·h·(kv·d_head) for K and V, (a·d_head)·h
    for the output projection; MLP 2·h·d_ff (GELU) or 3·h·d_ff (SwiGLU), times the
    expert count for MoE (the active experts with ``active_only``) plus a router h·E;
    two norms of h weights. Then the embeddings V·h (twice when the output head is not
    tied), learned positions, and a final norm. With ``biases``, each linear layer adds
    its output width and each norm h more. Reproduces the published counts of GPT-3
    (Brown et al. 2020, Table 2.1), PaLM (Chowdhery et al. 2022, Table 1), LLaMA-2,
    Llama 3.1 and Mixtral within 1 %.
    """
    h, d_ff = model.d_model, model.d_ff
    attention = h * model.q_dim + 2 * h * model.kv_dim + model.q_dim * h
    matrices = 2 if model.mlp == "gelu" else 3
    expert = matrices * h * d_ff
    norms = 2 * h
    if model.biases:
        attention += model.q_dim + 2 * model.kv_dim + h
        expert += (matrices - 1) * d_ff + h
        norms *= 2
    if model.experts is None or model.active_experts is None:
        mlp = expert
    else:
        router = h * model.experts
        mlp = expert * (model.active_experts if active_only else model.experts) + router
    final_norm = h * (2 if model.biases else 1)
    return model.layers * (attention + mlp + norms) + model.embedding_params + final_norm


def model_by_id(models: Iterable[ModelPreset], model_id: str) -> ModelPreset:
    """The model called ``model_id``; an :class:`InputError` lists the known ids otherwise."""
    return item_by_id(models, model_id, "model")


def check_whole(where: str, key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        # 96.0 or 1e3: YAML reads a dot or an exponent as a fraction, even when it is whole.
        hint = f" (write {value:.0f})" if isinstance(value, float) and value.is_integer() else ""
        raise InputError(f"{where}: {short(key)} must be a whole number, not {checks.kind(value)}: "
                         f"{short(value)}{hint}")
    high = INTEGER_KEYS[key]
    if not 1 <= value <= high:
        raise InputError(f"{where}: {short(key)} must be between 1 and {high:,}: {short(value)}")
