"""Reading model presets: one YAML file per model in ``presets/models/``, checked and converted into
:class:`ainotes.core.models.ModelPreset` values (the keys are listed in that module's docstring).

The rules and one-line errors are the GPU presets' (:mod:`ainotes.presets.folder`): an unknown or
missing key, a wrong type, zero, a negative, NaN or infinity is one line naming the file and the key.
The id is the file's stem and may hold dots (``llama-3.1-70b``). The loader counts parameters from the
architecture (:func:`ainotes.core.models.count_params`) and refuses a file whose count is more than
1 % away from the published one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core.models import INTEGER_KEYS, MLP_KINDS, ModelPreset, check_whole
from ainotes.presets import folder
from ainotes.presets.folder import check_boolean, check_file_name, check_mapping, check_sources, check_text, kind

MODELS_SUBDIR = "models"
MODEL_ID_PATTERN = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")
# A published count and the architecture's must agree this closely (FACTS: "within 1 %").
PARAMS_TOLERANCE = 0.01
REQUIRED_KEYS = ("name", "layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab", "mlp",
                 "tied_embeddings", "published_params", "sources")
OPTIONAL_KEYS = ("notes", "experts", "active_experts", "biases", "learned_positions", "published_active_params")
MAX_PARAMS = 1e15


def default_models_dir(presets_dir: str | Path | None = None) -> Path:
    """``<presets dir>/models``, the presets folder being
    :func:`ainotes.presets.folder.default_presets_dir` by default."""
    return folder.subfolder(MODELS_SUBDIR, presets_dir)


def model_files(directory: str | Path) -> tuple[Path, ...]:
    """The model files in ``directory`` (not recursive), sorted by name."""
    return folder.folder_files(directory, "model")


def load_models(directory: str | Path | None = None) -> tuple[ModelPreset, ...]:
    """Every model in ``directory`` (default :func:`default_models_dir`), largest first, then by id.

    Raises :class:`InputError` for the first problem: a missing or empty folder, a bad
    file, or two files with the same id.
    """
    models = folder.load_folder(directory if directory is not None else default_models_dir(), load_model,
                                what="model", id_of=_model_id, file_of=_model_file)
    return tuple(sorted(models, key=lambda m: (-m.params, m.id)))


def _model_id(model: ModelPreset) -> str:
    return model.id


def _model_file(model: ModelPreset) -> str:
    return model.file


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
    found = folder.validate_paths(files, load_model, what="model", id_of=_model_id)
    return tuple(ModelCheck(check.path, check.item, check.error) for check in found)


def load_model(path: str | Path) -> ModelPreset:
    """Read, check and convert one model file; the id is the file's stem."""
    path = Path(path)
    where = str(path)
    model_id = check_file_name(path, "model", MODEL_ID_PATTERN, "lowercase letters and digits, words joined by "
                               "single hyphens or dots, as in llama-3.1-70b")
    data = folder.parse_yaml(path, where)
    check_mapping(data, where, (*REQUIRED_KEYS, *OPTIONAL_KEYS), REQUIRED_KEYS, suggest=True)
    _check_model_values(data, where)
    model = ModelPreset(
        id=model_id,
        name=data["name"].strip(),
        **{key: int(data[key]) for key in ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab")},
        mlp=data["mlp"],
        tied_embeddings=data["tied_embeddings"],
        published_params=float(data["published_params"]),
        sources=folder.sources_of(data),
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


def _check_model_values(data: dict[str, Any], where: str) -> None:
    check_text(where, "name", data["name"])
    for key in INTEGER_KEYS:
        if key in data:
            check_whole(where, key, data[key])
    if data["mlp"] not in MLP_KINDS:
        raise InputError(f"{where}: 'mlp' must be one of {', '.join(MLP_KINDS)}: {short(data['mlp'])}")
    for key in ("tied_embeddings", "biases"):
        if key in data:
            check_boolean(where, key, data[key])
    for key in ("published_params", "published_active_params"):
        if key in data:
            _check_param_count(where, key, data[key])
    check_sources(where, data["sources"])
    if "notes" in data:
        check_text(where, "notes", data["notes"], one_line=False)


def _check_param_count(where: str, key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {short(key)} must be a number of parameters (e.g. 70.6e9), "
                         f"not {kind(value)}: {short(value)}")
    checks.positive_number(value, f"{where}: {short(key)}", key, text=False)
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
