"""Model presets: one YAML file per model in ``presets/models/``, loaded into frozen ``ModelPreset`` objects.

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

The rules and one-line errors are the GPU presets' (:mod:`ainotes.core.hardware`):
an unknown or missing key, a wrong type, zero, a negative, NaN or infinity is one
line naming the file and the key. The id is the file's stem and may hold dots
(``llama-3.1-70b``). The GPU loader reads only files directly in ``presets/``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core.hardware import (
    PRESET_SUFFIXES,
    Source,
    _check_sources,
    _check_text,
    _duplicate_message,
    _kind,
    _parse_yaml,
    default_presets_dir,
    item_by_id,
)

MODELS_SUBDIR = "models"
MODEL_ID_PATTERN = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")
MLP_KINDS = ("gelu", "swiglu")
# A published count and the architecture's must agree this closely (FACTS: "within 1 %").
PARAMS_TOLERANCE = 0.01
# Whole-number keys and the largest value any published transformer comes near, times a margin:
# large enough for any real model, small enough to catch a figure typed in the wrong unit.
INTEGER_KEYS = {
    "layers": 10_000, "d_model": 1_000_000, "heads": 100_000, "kv_heads": 100_000, "head_dim": 100_000,
    "d_ff": 10_000_000, "vocab": 100_000_000, "experts": 100_000, "active_experts": 100_000,
    "learned_positions": 100_000_000,
}
REQUIRED_KEYS = ("name", "layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab", "mlp",
                 "tied_embeddings", "published_params", "sources")
OPTIONAL_KEYS = ("notes", "experts", "active_experts", "biases", "learned_positions", "published_active_params")
MAX_PARAMS = 1e15
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
            _check_whole(where, key, getattr(self, key))
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


# -- loading -----------------------------------------------------------------


def default_models_dir(presets_dir: str | Path | None = None) -> Path:
    """``<presets dir>/models``, the presets folder being
    :func:`ainotes.core.hardware.default_presets_dir` by default."""
    base = Path(presets_dir) if presets_dir is not None else default_presets_dir()
    return base / MODELS_SUBDIR


def model_files(directory: str | Path) -> tuple[Path, ...]:
    """The model files in ``directory`` (not recursive), sorted by name."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"{folder}: models folder does not exist")
    files = sorted(p for p in folder.iterdir() if p.suffix in PRESET_SUFFIXES)
    if not files:
        raise InputError(f"{folder}: models folder holds no model files (*.yaml, *.yml)")
    return tuple(files)


def load_models(directory: str | Path | None = None) -> tuple[ModelPreset, ...]:
    """Every model in ``directory`` (default :func:`default_models_dir`), largest first, then by id.

    Raises :class:`InputError` for the first problem: a missing or empty folder, a bad
    file, or two files with the same id.
    """
    folder = Path(directory) if directory is not None else default_models_dir()
    models = [load_model(path) for path in model_files(folder)]
    seen: dict[str, str] = {}
    for model in models:
        earlier = seen.setdefault(model.id, model.file)
        if earlier != model.file:
            raise InputError(_duplicate_message(model.file, model.id, earlier, "model"))
    return tuple(sorted(models, key=lambda m: (-m.params, m.id)))


def model_by_id(models: Iterable[ModelPreset], model_id: str) -> ModelPreset:
    """The model called ``model_id``; an :class:`InputError` lists the known ids otherwise."""
    return item_by_id(models, model_id, "model")


def is_model_path(path: str | Path) -> bool:
    """Whether ``path`` is a model file by where it lives (``.../models/<id>.yaml``)."""
    return Path(path).parent.name == MODELS_SUBDIR


@dataclass(frozen=True)
class ModelCheck:
    """The outcome of validating one model file: the model, or the one-line error."""

    path: str
    model: ModelPreset | None
    error: str | None


def validate_model_files(files: Iterable[str | Path]) -> tuple[ModelCheck, ...]:
    """Check model files without stopping at the first error; a later file repeating an id is an error."""
    checks: list[ModelCheck] = []
    seen: dict[str, str] = {}
    for file in files:
        try:
            model = load_model(file)
        except InputError as exc:
            checks.append(ModelCheck(str(file), None, str(exc)))
            continue
        earlier = seen.setdefault(model.id, model.file)
        if earlier != model.file:
            checks.append(ModelCheck(model.file, None, _duplicate_message(model.file, model.id, earlier, "model")))
        else:
            checks.append(ModelCheck(model.file, model, None))
    return tuple(checks)


def load_model(path: str | Path) -> ModelPreset:
    """Read, check and convert one model file; the id is the file's stem."""
    path = Path(path)
    where = str(path)
    if path.suffix not in PRESET_SUFFIXES:
        raise InputError(f"{where}: a model file must end in .yaml or .yml")
    if not MODEL_ID_PATTERN.fullmatch(path.stem):
        raise InputError(
            f"{where}: the file name must be a model id (lowercase letters and digits, "
            f"words joined by single hyphens or dots, as in llama-3.1-70b): {short(path.stem)}"
        )
    data = _parse_yaml(path, where)
    _check_model_document(data, where)
    model = ModelPreset(
        id=path.stem,
        name=data["name"].strip(),
        **{key: int(data[key]) for key in ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab")},
        mlp=data["mlp"],
        tied_embeddings=data["tied_embeddings"],
        published_params=float(data["published_params"]),
        sources=tuple(Source(title=s["title"].strip(), url=s["url"].strip()) for s in data["sources"]),
        file=where,
        experts=data.get("experts"),
        active_experts=data.get("active_experts"),
        biases=data.get("biases", False),
        learned_positions=data.get("learned_positions", 0),
        published_active_params=(float(data["published_active_params"])
                                 if "published_active_params" in data else None),
        notes=data.get("notes"),
    )
    _check_published(where, "published_params", model.params, model.published_params)
    if model.published_active_params is not None:
        _check_published(where, "published_active_params", model.active_params, model.published_active_params)
    return model


def _check_model_document(data: Any, where: str) -> None:
    if data is None:
        raise InputError(f"{where}: the file is empty; expected a mapping with {', '.join(REQUIRED_KEYS)}")
    if not isinstance(data, dict):
        raise InputError(f"{where}: must be a mapping of keys to values, not {_kind(data)}")
    allowed = (*REQUIRED_KEYS, *OPTIONAL_KEYS)
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(f"{where}: unknown key {short(key)}{hint}; allowed keys: {', '.join(allowed)}")
    for key in REQUIRED_KEYS:
        if key not in data:
            raise InputError(f"{where}: missing required key {short(key)}")
    _check_model_values(data, where)


def _check_model_values(data: dict[str, Any], where: str) -> None:
    _check_text(where, "name", data["name"])
    for key in INTEGER_KEYS:
        if key in data:
            _check_whole(where, key, data[key])
    if data["mlp"] not in MLP_KINDS:
        raise InputError(f"{where}: 'mlp' must be one of {', '.join(MLP_KINDS)}: {short(data['mlp'])}")
    for key in ("tied_embeddings", "biases"):
        if key in data and not isinstance(data[key], bool):
            raise InputError(f"{where}: {short(key)} must be true or false: {short(data[key])}")
    for key in ("published_params", "published_active_params"):
        if key in data:
            _check_param_count(where, key, data[key])
    _check_sources(where, data["sources"])
    if "notes" in data:
        _check_text(where, "notes", data["notes"], one_line=False)


def _check_whole(where: str, key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        # 96.0 or 1e3: YAML reads a dot or an exponent as a fraction, even when it is whole.
        hint = f" (write {value:.0f})" if isinstance(value, float) and value.is_integer() else ""
        raise InputError(f"{where}: {short(key)} must be a whole number, not {_kind(value)}: {short(value)}{hint}")
    high = INTEGER_KEYS[key]
    if not 1 <= value <= high:
        raise InputError(f"{where}: {short(key)} must be between 1 and {high:,}: {short(value)}")


def _check_param_count(where: str, key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {short(key)} must be a number of parameters (e.g. 70.6e9), "
                         f"not {_kind(value)}: {short(value)}")
    if math.isnan(value) or math.isinf(value) or value <= 0:
        raise InputError(f"{where}: {short(key)} must be a finite number > 0: {short(value)}")
    if value < 1e3:
        raise InputError(f"{where}: {short(key)} is a count of parameters, not billions: {short(value)} "
                         f"(write {value:g}e9 for {value:g} B)")
    if value > MAX_PARAMS:
        raise InputError(f"{where}: {short(key)} must be at most {MAX_PARAMS:g}: {short(value)}")


def _check_published(where: str, key: str, counted: int, published: float) -> None:
    """The architecture's count must match the paper's within :data:`PARAMS_TOLERANCE`."""
    off = counted / published - 1.0
    if abs(off) > PARAMS_TOLERANCE:
        raise InputError(
            f"{where}: the architecture counts {counted / 1e9:.3f} B parameters, {off:+.1%} from "
            f"{short(key)} {published / 1e9:.3f} B (allowed: ±{PARAMS_TOLERANCE:.0%}); "
            "check layers, d_model, d_ff, heads, kv_heads, vocab and tied_embeddings"
        )
