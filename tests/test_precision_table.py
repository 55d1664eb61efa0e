"""The one precision table (ainotes.core.precision): the shipped JSON Schema, the chart's roofs, the
kernels' dtypes and the command line's choices all hold exactly its precisions, so a precision added
to the table but forgotten in one of them (a roof that silently disappears) fails here."""

from __future__ import annotations

import argparse

from ainotes import cli
from ainotes.charts.roofline.names import ALL_ROOFS, ROOF_ORDER
from ainotes.core import precision
from ainotes.core.kernels import DTYPE_BYTES, STORAGE_DTYPE_BYTES, parse_kernel_spec
from ainotes.presets.gpus import preset_schema


def _choices(command: str, flag: str) -> tuple[str, ...] | None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    action = next(a for a in sub._actions if flag in a.option_strings)
    return tuple(action.choices) if action.choices is not None else None


def test_the_schema_lists_each_units_precisions_as_the_table_does() -> None:
    peaks = preset_schema()["$defs"]["peaks"]["properties"]
    assert tuple(peaks) == precision.UNITS
    for unit in precision.UNITS:
        assert tuple(peaks[unit]["properties"]) == precision.FILE_PRECISIONS[unit], unit


def test_every_stated_precision_has_a_roof_on_the_chart_once() -> None:
    pairs = [(unit, name) for unit in precision.UNITS for name in precision.UNIT_PRECISIONS[unit]]
    assert sorted(ROOF_ORDER) == sorted(pairs)
    assert ROOF_ORDER[0] == ("tensor", "bf16")  # the notes' pages open on BF16
    assert set(ALL_ROOFS) == {f"{unit}:{name}" for unit, name in pairs}


def test_kernels_compute_in_every_precision_and_store_int4_too() -> None:
    assert tuple(DTYPE_BYTES) == precision.PRECISIONS
    assert set(STORAGE_DTYPE_BYTES) - set(DTYPE_BYTES) == {"int4"}
    for name in precision.PRECISIONS:
        kernel = parse_kernel_spec(f"add:1024:{name}")
        assert kernel.bytes_moved == 3 * 1024 * precision.BY_NAME[name].bytes_per_element


def test_the_command_line_offers_the_tables_precisions() -> None:
    assert _choices("roofline", "--precision") == precision.PRECISIONS
    assert _choices("train-time", "--precision") == precision.UNIT_PRECISIONS["tensor"]


def test_a_bare_precision_means_its_first_unit() -> None:
    assert precision.default_unit("fp32") == "vector"  # FP32 matrix work is TF32 on NVIDIA parts
    assert precision.default_unit("fp64") == "tensor"
    assert precision.rate_unit("int8") == "TOPS" and precision.rate_unit("fp8") == "TFLOP/s"
