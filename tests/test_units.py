"""How figures read: one rounding rule (ties half-up, as the live charts' d3-format rounds) everywhere."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base import units
from ainotes.presets.gpus import load_presets
from preset_support import FIXTURE_PRESETS


@pytest.mark.parametrize(
    ("value", "decimals", "expected"),
    [
        (562.5, 0, "563"),  # exactly representable: a true tie, rounded up
        (281.25, 1, "281.3"),
        (281.25, 0, "281"),
        (0.125, 2, "0.13"),
        (2.5, 0, "3"),  # Python's round() and format() give "2"
        (-2.5, 0, "-3"),
        (-0.0001, 2, "0.00"),  # no "-0.00"
        (0.1 + 0.2, 1, "0.3"),
        (1.005, 2, "1.00"),  # 1.005 is stored as 1.00499999...: not a tie, as JavaScript agrees
    ],
)
def test_fixed_rounds_ties_half_up(value, decimals, expected):
    assert units.fixed(value, decimals) == expected


def test_fixed_groups_thousands_on_request():
    assert units.fixed(1125.0, grouping=True) == "1,125"
    assert units.fixed(1125.0) == "1125"


def test_b200_sparse_ridge_reads_563_not_562():
    b200 = {p.id: p for p in load_presets(FIXTURE_PRESETS)}["b200"]
    assert b200.ridge_flop_per_byte(True) == 562.5
    assert units.intensity(b200.ridge_flop_per_byte(True)) == "563 FLOP/byte"
    assert units.intensity(b200.ridge_flop_per_byte(False)) == "281 FLOP/byte"  # 281.25: no tie


def test_published_figures_read_as_published():
    presets = {p.id: p for p in load_presets(FIXTURE_PRESETS)}
    assert units.intensity(presets["h100"].ridge_flop_per_byte()) == "295 FLOP/byte"
    assert units.intensity(presets["b200"].ridge_flop_per_byte()) == "281 FLOP/byte"
    assert units.percent(0.4620) == "46.2 %"
    assert units.flops_per_s(989.4e12) == "989.4 TFLOP/s"
    assert units.significant(0.16666, 3) == "0.167"


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.integers(min_value=0, max_value=4))
def test_fixed_is_never_more_than_half_a_unit_off(value, decimals):
    text = units.fixed(value, decimals)
    assert not text.startswith("-0") or float(text) != 0
    assert abs(float(text) - value) <= 0.5 * 10.0 ** -decimals * (1 + 1e-9) + abs(value) * 1e-15
    assert text.count(".") == (1 if decimals else 0) and len(text.partition(".")[2]) == decimals


@given(st.floats(min_value=1e-6, max_value=999.9, allow_nan=False))
def test_significant_keeps_at_most_the_digits_asked_for(value):
    # Below 1000, as si() always calls it (whole numbers above keep their digits).
    text = units.significant(value, 4)
    digits = text.replace(".", "").lstrip("0")
    assert len(digits.rstrip("0")) <= 4
    assert math.isclose(float(text), value, rel_tol=5e-4)
