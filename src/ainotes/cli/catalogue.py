"""``ainotes presets``, ``validate`` and ``models``: what the preset files hold, and whether they load."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ainotes.base import units
from ainotes.base.files import path_state
from ainotes.cli import shared
from ainotes.core.hardware import NEUTRAL_UNIT_TERMS, PRECISION_LABELS, UNITS, Preset
from ainotes.core.precision import PRECISIONS
from ainotes.presets.every import file_kind
from ainotes.presets.gpus import validate_paths


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommands."""
    presets = commands.add_parser("presets", parents=[common], help="list the GPU presets and their figures",
                                  description="List the GPU presets: per-GPU dense and sparse FP16/BF16 tensor "
                                  "rates, memory bandwidth and ridge points, then every precision's dense peak "
                                  "('no path' where the GPU has none, 'not given' where the file is silent).")
    presets.add_argument("--json", action="store_true", help="print JSON instead of a table")
    presets.set_defaults(handler=_cmd_presets)

    validate = commands.add_parser("validate", parents=[common], help="check preset files",
                                   description="Check preset files and folders (default: the presets folder), "
                                   "interconnect presets included (a folder's links/ subfolder, or a file in "
                                   "a links/ folder). Prints one OK line per valid preset and one line per "
                                   "error; exit status 2 if any file has an error.")
    validate.add_argument("paths", nargs="*", metavar="PATH", help="preset files or folders")
    validate.set_defaults(handler=_cmd_validate)

    models = commands.add_parser(
        "models", parents=[common], help="list the model presets and their parameter counts",
        description="List the model presets in <presets dir>/models: parameters counted from each architecture "
        "(all experts, and the active ones a token uses), the published count and how far apart they are "
        "(the loader refuses more than 1 %).",
    )
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")
    models.set_defaults(handler=_cmd_models)


NOT_GIVEN = "not given"


def _preset_record(preset: Preset) -> dict[str, Any]:
    sparse = preset.structured_sparsity
    return {
        "id": preset.id,
        "name": preset.name,
        "variant": preset.variant,
        "dense_fp16_tflops": preset.dense_fp16_tflops,
        "sparse_fp16_tflops": preset.peak_flops_per_s(True) / 1e12 if sparse else None,
        "memory_bandwidth_tbps": preset.memory_bandwidth_tbps,
        "dense_ridge_flop_per_byte": preset.ridge_flop_per_byte(False),
        "sparse_ridge_flop_per_byte": preset.ridge_flop_per_byte(True) if sparse else None,
        "structured_sparsity": sparse,
        "derivation": preset.derivation,
        "sources": [{"title": s.title, "url": s.url} for s in preset.sources],
        "path": preset.file,
        "memory_capacity_gb": preset.memory_capacity_gb,
        "unit_names": {unit: preset.unit_term(unit) for unit in UNITS},
        "peaks": _peaks_by_unit(preset),
        "precisions": [_precision_record(preset, unit, precision) for unit, precision, _ in preset.all_paths()],
    }


def _peaks_by_unit(preset: Preset) -> dict[str, dict[str, float | str | None]]:
    """Every precision's dense peak per unit: a number, null (no such path) or "not given"."""
    peaks: dict[str, dict[str, float | str | None]] = {unit: {} for unit in UNITS}
    for unit, precision, path in preset.all_paths():
        peaks[unit][precision] = NOT_GIVEN if path is None else path.dense_tflops
    return peaks


def _precision_record(preset: Preset, unit: str, precision: str) -> dict[str, Any]:
    path = preset.path(precision, unit)
    exists = path is not None and path.dense_tflops is not None
    sparse = path is not None and exists and path.sparse_supported
    return {
        "unit": unit,
        "precision": precision,
        "status": preset.status(precision, unit),
        "dense_tflops": path.dense_tflops if path is not None else None,
        "sparse_tflops": path.peak_tflops(True) if path is not None and sparse else None,
        "printed_sparse_tflops": path.printed_sparse_tflops if path is not None else None,
        "ridge_flop_per_byte": preset.ridge_flop_per_byte(precision=precision, unit=unit),
        "sparse_ridge_flop_per_byte": (
            preset.ridge_flop_per_byte(True, precision=precision, unit=unit) if sparse else None
        ),
        "source": ({"title": path.source.title, "url": path.source.url}
                   if path is not None and path.source is not None else None),
        "note": path.note if path is not None else None,
        "derivation": path.derivation if path is not None else None,
    }


def _peak_cell(preset: Preset, unit: str, precision: str) -> str:
    path = preset.path(precision, unit)
    if path is None:
        return NOT_GIVEN
    return "no path" if path.dense_tflops is None else f"{path.dense_tflops:.6g}"


def _cmd_presets(args: argparse.Namespace) -> int:
    presets = shared.load_gpu_presets(args)
    if args.json:
        print(json.dumps({"presets": [_preset_record(p) for p in presets]}, indent=2, ensure_ascii=False))
        return 0
    header = ["id", "name", "matrix / vector units", "memory", "dense TFLOP/s", "sparse TFLOP/s", "TB/s",
              "ridge FLOP/B", "sparse ridge FLOP/B"]
    rows = []
    for p in presets:
        record = _preset_record(p)
        rows.append([
            p.id,
            p.name,
            f"{p.unit_term('tensor')} / {p.unit_term('vector')}" if p.unit_names else "not named",
            p.memory_capacity_label or "not given",
            f"{p.dense_fp16_tflops:.6g}",
            f"{record['sparse_fp16_tflops']:.6g}" if p.structured_sparsity else "-",
            f"{p.memory_bandwidth_tbps:.6g}",
            # units.fixed: ties half-up, the rule pages and charts follow (281.25 → 281.3).
            units.fixed(record["dense_ridge_flop_per_byte"], 1),
            units.fixed(record["sparse_ridge_flop_per_byte"], 1) if p.structured_sparsity else "-",
        ])
    print(shared.table(header, rows, right={3, 4, 5, 6, 7, 8}))
    # Every (unit, precision) any preset states, in table order (a matrix FP32 rate where one file gives it).
    columns = list(dict.fromkeys((unit, precision) for p in presets for unit, precision, _ in p.all_paths()))
    columns.sort(key=lambda pair: (UNITS.index(pair[0]), PRECISIONS.index(pair[1])))
    print()
    print("dense peak per precision, TFLOP/s (TOPS for INT8), on the matrix units (NVIDIA's tensor cores, AMD's "
          "Matrix Cores, Google's MXUs) and the vector units; 'no path': the GPU has none; 'not given': the preset "
          "file is silent")
    print(shared.table(["id", *(f"{NEUTRAL_UNIT_TERMS[unit].split()[0]} {PRECISION_LABELS[precision]}"
                              for unit, precision in columns)],
                 [[p.id, *(_peak_cell(p, unit, precision) for unit, precision in columns)] for p in presets],
                 right=set(range(1, len(columns) + 1))))
    notes = [f"{p.id}: {p.derivation}" for p in presets if p.derivation]
    if notes:
        print()
        print("per-GPU figures derived from system totals:")
        for note in notes:
            print(f"  {note}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    """GPU, link and model presets: a presets folder (its ``links/`` and ``models/`` beside the GPU files),
    a ``links/`` or ``models/`` folder, or files, each checked as the kind its folder or its keys say
    (:func:`ainotes.presets.every.file_kind`). Each file gets an OK line or one error line."""
    outcomes: list[tuple[str, str | None]] = []  # (OK text, None) or ("", error)
    for given in args.paths or [shared.presets_dir(args)]:
        _validate_path(Path(given), outcomes)
    for ok, error in outcomes:
        if error is None:
            print(f"OK {ok}")
        else:
            print(f"ainotes validate: {error}", file=sys.stderr)
    failed = sum(1 for _, error in outcomes if error is not None)
    print(f"{len(outcomes) - failed} OK, {failed} with errors")
    return shared.EXIT_USER_ERROR if failed else 0


def _validate_path(path: Path, outcomes: list[tuple[str, str | None]]) -> None:
    from ainotes.presets import links, models

    state = path_state(path)
    if state == "file":
        kind = file_kind(path)
        if kind == "model":
            _model_outcomes([path], outcomes)
        elif kind == "link":
            _link_outcomes([path], outcomes)
        else:
            _gpu_outcomes(path, outcomes)
    elif state == "dir" and path.name == models.MODELS_SUBDIR:
        _model_outcomes([path], outcomes)
    elif state == "dir" and path.name == links.LINKS_SUBDIR:
        _link_outcomes([path], outcomes)
    else:  # a presets folder, or a path that is missing or cannot be looked at (its one line)
        _gpu_outcomes(path, outcomes)
        for sub, check in ((links.LINKS_SUBDIR, _link_outcomes), (models.MODELS_SUBDIR, _model_outcomes)):
            if state == "dir" and path_state(path / sub) == "dir":
                check([path / sub], outcomes)


def _gpu_outcomes(path: Path, outcomes: list[tuple[str, str | None]]) -> None:
    for check in validate_paths([path]):
        outcomes.append((f"{check.path}: {check.preset.id} ({check.preset.name})", None)
                        if check.preset is not None else ("", check.error))


def _link_outcomes(paths: list[Path], outcomes: list[tuple[str, str | None]]) -> None:
    from ainotes.presets import links

    for check in links.validate_link_files(paths):
        outcomes.append((f"{check.path}: link {check.link.id} ({check.link.name})", None)
                        if check.link is not None else ("", check.error))


def _model_outcomes(paths: list[Path], outcomes: list[tuple[str, str | None]]) -> None:
    from ainotes.presets import models

    for check in models.validate_model_files(paths):
        model = check.model
        outcomes.append((f"{check.path}: model {model.id} ({model.name}, {model.params / 1e9:.2f} B parameters)", None)
                        if model is not None else ("", check.error))


def _cmd_models(args: argparse.Namespace) -> int:
    from ainotes.presets.models import default_models_dir, load_models

    models = load_models(default_models_dir(shared.presets_dir(args)))
    if args.json:
        print(json.dumps({"models": [m.record() for m in models]}, indent=2, ensure_ascii=False))
        return 0
    header = ["id", "name", "params", "active params", "published", "difference"]
    rows = [[m.id, m.name, f"{m.params / 1e9:.2f} B", f"{m.active_params / 1e9:.2f} B",
             f"{m.published_params / 1e9:g} B", f"{m.params_difference * 100:+.2f} %"] for m in models]
    print(shared.table(header, rows, right={2, 3, 4, 5}))
    print()
    print("params: counted from the architecture (embeddings included; all experts of a mixture); active: what one")
    print("token uses; difference: counted against published, within ±1 % or the file does not load.")
    return 0
