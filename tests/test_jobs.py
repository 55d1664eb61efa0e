"""The scalar checks and the training-job value that the fence, the inline forms and the CLI share."""

from __future__ import annotations

import math

import pytest

from ainotes import checks
from ainotes.checks import FieldError
from ainotes.hardware import load_presets
from ainotes.jobs import TrainingJob
from preset_support import FIXTURE_PRESETS

PRESETS = {p.id: p for p in load_presets(FIXTURE_PRESETS)}
PALM = {"params": "540e9", "tokens_per_second": "238.3e3", "gpus": "6144", "peak_tflops": "275",
        "layers": "118", "heads": "48", "head_dim": "256", "seq_len": "2048"}


@pytest.mark.parametrize("value", [1, 2.5, "540e9", " 3 ", 10**30])
def test_positive_numbers_pass_as_floats(value):
    assert checks.positive_number(value, "'x'") == float(value)


@pytest.mark.parametrize(
    "value", [0, -1, -0.0, math.nan, math.inf, "nan", "-inf", "fast", "", True, None, [1], 10**400]
)
def test_non_positive_or_non_numbers_are_refused_with_the_rule(value):
    with pytest.raises(FieldError, match=r"^--x must be a finite number > 0: ") as info:
        checks.positive_number(value, "--x", "x")
    assert info.value.field == "x"


@pytest.mark.parametrize(("value", "expected"), [(8, 8), (8.0, 8), ("8", 8), ("1e3", 1000)])
def test_whole_numbers(value, expected):
    assert checks.whole_number(value, "'n'") == expected


@pytest.mark.parametrize(("value", "low", "high", "rule"),
                         [(2.5, 1, None, ">= 1"), ("two", 1, None, ">= 1"), (True, 1, None, ">= 1"),
                          (0, 1, None, ">= 1"), (9, 2, 8, "from 2 to 8"), (1, 2, 8, "from 2 to 8")])
def test_bad_whole_numbers_state_the_range(value, low, high, rule):
    with pytest.raises(FieldError, match=f"^'n' must be a whole number {rule}: "):
        checks.whole_number(value, "'n'", low=low, high=high)


def test_text_checks():
    assert checks.one_line_text("  Title ", "'title'", max_chars=10) == "Title"
    for value, message in [("a\nb", "must be one line"), ("x" * 11, "at most 10 characters: 11"),
                           ("a\x01", r"control character \(U\+0001\)"), (3, "must be text: 3")]:
        with pytest.raises(FieldError, match=message):
            checks.one_line_text(value, "'title'", max_chars=10)
    assert checks.one_of("full", "'recompute'", choices=("none", "full")) == "full"
    with pytest.raises(FieldError, match="'recompute' must be one of none, full: 'Full'"):
        checks.one_of("Full", "'recompute'", choices=("none", "full"))


def test_palm_540b_from_text_fields_is_46_2_percent():
    job = TrainingJob.from_fields(PALM, PRESETS)
    assert (job.params, job.gpus, job.layers, job.precision) == (540e9, 6144, 118, "bf16")
    assert round(job.utilization().mfu * 100, 1) == 46.2


def test_a_preset_gives_its_dense_peak_at_the_precision():
    fields = {"params": 7e9, "tokens_per_second": 3000, "gpus": 1, "preset": "b200"}
    job = TrainingJob.from_fields(fields, PRESETS)
    assert (job.peak_tflops, job.preset_id) == (2250.0, "b200")
    assert TrainingJob.from_fields({**fields, "precision": "fp16"}, PRESETS).peak_tflops == 2250.0


def test_the_value_is_frozen_and_checked_when_built_directly():
    job = TrainingJob(params=1e9, tokens_per_second=1e4, gpus=8, peak_tflops=100)
    with pytest.raises(AttributeError):
        job.gpus = 9  # type: ignore[misc]
    with pytest.raises(FieldError, match=r"^'gpus' must be a whole number >= 1: 0$"):
        TrainingJob(params=1e9, tokens_per_second=1e4, gpus=0, peak_tflops=100)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"gpu": "8"}, "gpu", "unknown key --gpu (allowed: --params, --tokens-per-second, --gpus,"),
        ({"params": None}, "params", "--params is required"),
        ({"preset": "h100"}, "preset", "needs exactly one of --preset and --peak-tflops"),
        ({"layers": None}, "layers", "--layers, --heads, --head-dim, --seq-len go together: --heads, --head-dim, "
                                     "--seq-len given, --layers missing"),
        ({"recompute": "half"}, "recompute", "--recompute must be one of none, selective, full: 'half'"),
    ],
)
def test_field_errors_use_the_callers_names_and_say_which_field(change, field, message):
    fields = {key: value for key, value in {**PALM, **change}.items() if value is not None}
    with pytest.raises(FieldError) as info:
        TrainingJob.from_fields(fields, PRESETS, label=lambda key: "--" + key.replace("_", "-"))
    assert str(info.value).startswith(message), str(info.value)
    assert info.value.field == field
