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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ainotes.base.errors import InputError
from ainotes.base.textcheck import short
from ainotes.core import checks
from ainotes.core.models import (
    BIAS_PARTS,
    INTEGER_KEYS,
    MAPPING_KEYS,
    MAPPING_REQUIRED,
    MLP_KINDS,
    DenseLayers,
    LatentAttention,
    ModelPreset,
    SlidingWindow,
    check_whole,
)
from ainotes.presets import folder
from ainotes.presets.folder import check_boolean, check_file_name, check_mapping, check_sources, check_text, kind

MODELS_SUBDIR = "models"
MODEL_ID_PATTERN = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")
# A published count and the architecture's must agree this closely (FACTS: "within 1 %").
PARAMS_TOLERANCE = 0.01
REQUIRED_KEYS = ("name", "layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab", "mlp",
                 "tied_embeddings", "published_params", "sources")
OPTIONAL_KEYS = ("notes", "experts", "active_experts", "biases", "learned_positions", "published_active_params",
                 "published_active_excludes_embedding", "dropout", "mla", "shared_experts", "dense_layers",
                 "sliding_window")
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
    """Read, check and convert one model file; the id is the file's stem.

    A mistake in a key's value is reported at the key's line, ``presets/models/x.yaml:7: 'vocab' ...``
    (:func:`key_lines`), whoever asked for the models (a page's fence, a command)."""
    path = Path(path)
    where = str(path)
    model_id = check_file_name(path, "model", MODEL_ID_PATTERN, "lowercase letters and digits, words joined by "
                               "single hyphens or dots, as in llama-3.1-70b")
    data = folder.parse_yaml(path, where)
    lines = key_lines(path)
    try:
        check_mapping(data, where, (*REQUIRED_KEYS, *OPTIONAL_KEYS), REQUIRED_KEYS, suggest=True)
    except InputError as exc:  # an unknown key: say at which line it is
        stray = next((key for key in data if key not in (*REQUIRED_KEYS, *OPTIONAL_KEYS)), None) \
            if isinstance(data, dict) else None
        if stray is None or str(stray) not in lines:
            raise
        raise InputError(str(exc).replace(f"{where}: ", f"{where}:{lines[str(stray)]}: ", 1)) from None

    def at(*keys: str) -> str:
        """``file:LINE`` of the first of ``keys`` the file has (the file alone where none is)."""
        found = next((lines[key] for key in keys if key in lines), None)
        return where if found is None else f"{where}:{found}"

    _check_model_values(data, at)
    try:
        model = ModelPreset(
            id=model_id,
            name=data["name"].strip(),
            **{key: int(data[key]) for key in ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff",
                                                "vocab")},
            mlp=data["mlp"],
            tied_embeddings=data["tied_embeddings"],
            published_params=float(data["published_params"]),
            sources=folder.sources_of(data),
            file=where,
            experts=data.get("experts"),
            active_experts=data.get("active_experts"),
            biases=_biases(data.get("biases", False)),
            learned_positions=data.get("learned_positions", 0),
            published_active_params=(float(data["published_active_params"])
                                     if "published_active_params" in data else None),
            published_active_excludes_embedding=data.get("published_active_excludes_embedding", False),
            notes=data.get("notes"),
            dropout=data.get("dropout"),
            mla=LatentAttention(**data["mla"]) if "mla" in data else None,
            shared_experts=data.get("shared_experts", 0),
            dense_layers=DenseLayers(**data["dense_layers"]) if "dense_layers" in data else None,
            sliding_window=SlidingWindow(**data["sliding_window"]) if "sliding_window" in data else None,
        )
    except InputError as exc:  # the constructor names the file; add the line of the key it names
        text = str(exc)
        named = next((key for key in (*REQUIRED_KEYS, *OPTIONAL_KEYS)
                      if text.startswith((f"{where}: '{key}", f"{where}: {key}"))), None)
        raise InputError(text.replace(f"{where}: ", f"{at(named)}: ", 1) if named else text) from None
    if "experts" in data and "published_active_params" not in data:
        raise InputError(f"{at('experts')}: a mixture of experts needs 'published_active_params', the parameters one "
                         "token uses as its source prints them (e.g. published_active_params: 12.9e9), so that the "
                         "active count, which sets its FLOPs, is checked as the total is")
    _check_published(at("published_params"), "published_params", model.params, model.published_params)
    if model.published_active_params is not None:
        _check_published(at("published_active_params"), "published_active_params",
                         model.active_params_as_published, model.published_active_params)
    return model


def key_lines(path: Path) -> dict[str, int]:
    """The 1-based line of each top-level key of a YAML file, and of each ``key.sub`` key of a mapping
    value (``mla.kv_latent``); empty where the file does not compose (the parser has said why already)."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=folder.SAFE_LOADER)  # libyaml where built
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        return {}
    found: dict[str, int] = {}
    if not isinstance(root, yaml.MappingNode):
        return found
    for key_node, value_node in root.value:
        key = str(key_node.value)
        found[key] = key_node.start_mark.line + 1
        if isinstance(value_node, yaml.MappingNode):
            for sub_key, _ in value_node.value:
                found[f"{key}.{sub_key.value}"] = sub_key.start_mark.line + 1
    return found


def _biases(value: Any) -> tuple[str, ...]:
    if value is True:
        return BIAS_PARTS
    if value is False:
        return ()
    return tuple(value)


def _check_model_values(data: dict[str, Any], at: Callable[..., str]) -> None:
    check_text(at("name"), "name", data["name"])
    for key in INTEGER_KEYS:
        if key in data:
            check_whole(at(key), key, data[key])
    if data["mlp"] not in MLP_KINDS:
        raise InputError(f"{at('mlp')}: 'mlp' must be one of {', '.join(MLP_KINDS)}: {short(data['mlp'])}")
    for key in ("tied_embeddings", "dropout", "published_active_excludes_embedding"):
        if key in data:
            check_boolean(at(key), key, data[key])
    if "biases" in data and not isinstance(data["biases"], bool):
        value = data["biases"]
        if (not isinstance(value, list) or not value
                or any(not isinstance(part, str) or part not in BIAS_PARTS for part in value)):
            raise InputError(f"{at('biases')}: 'biases' must be true, false or a list of the projections that carry "
                             f"one, from {', '.join(BIAS_PARTS)} (Qwen2: [q, k, v]): {short(value)}")
    for key, allowed in MAPPING_KEYS.items():
        if key in data:
            _check_structure(data[key], key, allowed, at)
    for key in ("published_params", "published_active_params"):
        if key in data:
            _check_param_count(at(key), key, data[key])
    check_sources(at("sources"), data["sources"])
    if "notes" in data:
        check_text(at("notes"), "notes", data["notes"], one_line=False)


def _check_structure(value: Any, key: str, allowed: dict[str, int], at: Callable[..., str]) -> None:
    """A mapping key (``mla``, ``dense_layers``, ``sliding_window``): whole numbers under its own names."""
    required = MAPPING_REQUIRED[key]
    example = ", ".join(f"{name}: N" for name in required)
    if not isinstance(value, dict):
        raise InputError(f"{at(key)}: {short(key)} must be a mapping such as {{{example}}}, not {kind(value)}")
    for name in value:
        if name not in allowed:
            raise InputError(f"{at(f'{key}.{name}', key)}: {short(key)} has no key {short(name)} "
                             f"(allowed: {', '.join(allowed)})")
    for name in required:
        if name not in value:
            raise InputError(f"{at(key)}: {short(key)} needs {short(name)} ({{{example}}})")
    for name, high in allowed.items():
        if name in value:
            check_whole(at(f"{key}.{name}", key), f"{key}.{name}", value[name], high)


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
    """The architecture's count must match the published one within :data:`PARAMS_TOLERANCE`.

    A vocabulary or width typed 1 % off moves the count by less than 1 % (the embeddings are a few
    per cent of a large model), so this check catches a wrong layer count, width or expert count, not
    every slip; the models table prints each count beside the published one for the rest."""
    off = counted / published - 1.0
    if abs(off) > PARAMS_TOLERANCE:
        raise InputError(
            f"{where}: the architecture counts {counted / 1e9:.3f} B parameters, {off:+.1%} from "
            f"{short(key)} {published / 1e9:.3f} B (allowed: ±{PARAMS_TOLERANCE:.0%}); "
            "check layers, d_model, d_ff, heads, kv_heads, vocab, experts and tied_embeddings"
        )
