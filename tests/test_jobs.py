"""The scalar checks and the training-job value that the fence, the inline forms and the CLI share;
jobs that name a model preset (fixture presets in tests/fixtures/models-chapter)."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.core import checks
from ainotes.core.checks import FieldError
from ainotes.core.jobs import TrainingJob
from ainotes.markdown.extension import convert_page
from ainotes.presets.gpus import load_presets
from ainotes.presets.models import load_models
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


@pytest.mark.parametrize(("value", "expected"), [(8, 8), ("8", 8), (" 12 ", 12)])
def test_whole_numbers(value, expected):
    assert checks.whole_number(value, "'n'") == expected


@pytest.mark.parametrize(("value", "meant"), [(8.0, "8"), ("8.0", "8"), ("1e3", "1000"), ("7.9999999999999999", "8"),
                                              ("1.9999999999999999", "2")])
def test_whole_numbers_written_as_fractions_are_refused_with_what_was_meant(value, meant):
    """One rule for flags, fences and files: 7.9999999999999999 reads as 8.0, so no fraction passes."""
    with pytest.raises(FieldError, match=rf"^'n' must be a whole number >= 1 \(write {meant}\): "):
        checks.whole_number(value, "'n'")


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


# --- jobs that name a model preset (fixture presets: tests/fixtures/models-chapter) -------

CHAPTER_PRESETS = Path(__file__).parent / "fixtures" / "models-chapter"
FIXTURE_MODELS = {m.id: m for m in load_models(CHAPTER_PRESETS / "models")}
PALM_MODEL_ROW = ("  - name: PaLM 540B\n    model: palm-540b\n    tokens_per_second: 238.3e3\n    gpus: 6144\n"
                  "    preset: tpu-v4\n    seq_len: 2048\n")


@pytest.fixture(scope="module")
def site() -> NotesSite:
    return NotesSite(CHAPTER_PRESETS)


def _page(site: NotesSite, text: str) -> str:
    return convert_page(site, text, "jobs.md", "jobs/")


def _text(html_text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_text)).split())


def _models() -> dict:
    return FIXTURE_MODELS


def test_the_palm_row_names_its_model_and_chip_and_gives_the_papers_46_2_percent(site: NotesSite) -> None:
    typed = "  - name: typed\n    params: 7e9\n    tokens_per_second: 3e6\n    gpus: 1024\n    preset: h100\n"
    out = _page(site, f"```mfu-table\njobs:\n{PALM_MODEL_ROW}{typed}```\n")
    row = _text(re.findall(r"<tr role=\"row\">(.*?)</tr>", out)[1])
    assert row.startswith("PaLM 540B 46.2 % 46.2 % recompute: none 540.4 billion parameters")
    assert "6,144 × 275 TFLOP/s BF16 tpu-v4" in row  # the chip's peak from its preset, not typed
    # Under the table, what each row counts.
    key = _text(out.split('class="ainotes-table-key">')[1].split("</p>")[0])
    assert key == ("What each row counts as N and model FLOPs per token: PaLM 540B: palm-540b: every parameter, "
                   "embeddings included; 6N + 12·L·H·Q·S: L 118, H 48 query heads, Q 256 (L, H, Q from palm-540b), "
                   "S 2,048. typed: N as given; 6N, no attention term.")


def test_the_inline_forms_take_a_model(site: NotesSite) -> None:
    job = "model=palm-540b tokens_per_second=238.3e3 gpus=6144 preset=tpu-v4"
    out = _text(_page(site, f"{{{{ mfu {job} seq_len=2048 }}}}; {{{{ mfu {job} }}}}; "
                            f"{{{{ hfu {job} seq_len=2048 recompute=full }}}}\n")).split("; ")
    with_attention, six_n, full = (float(part.split()[0]) for part in out)
    assert with_attention == 46.2
    assert six_n < with_attention  # no seq_len: 6N alone, no attention term
    # The paper's 57.8 % HFU lies between MFU and the full-recomputation ceiling.
    assert with_attention < 57.8 < full


def test_a_mixture_of_experts_counts_the_experts_a_token_uses(site: NotesSite) -> None:
    job = "model=mixtral-8x7b tokens_per_second=1e5 gpus=64 preset=h100"
    flops = _text(_page(site, f"{{{{ flops-per-token {job} }}}}\n"))
    value, unit = flops.split()
    assert unit == "GFLOP"
    assert abs(float(value) * 1e9 / (6 * 12.9e9) - 1) < 0.01  # 6 × Mixtral's published 12.9 B active


def test_embeddings_may_be_left_out() -> None:
    fields = {"model": "llama-3.1-8b", "tokens_per_second": "1e6", "gpus": "64", "peak_tflops": "989.4"}
    with_embeddings = TrainingJob.from_fields(fields, {}, models=_models)
    without = TrainingJob.from_fields({**fields, "embeddings": "false"}, {}, models=_models)
    # Llama 3.1 8B's two 128,256 × 4,096 matrices (input embedding, output head) are left out.
    assert with_embeddings.params - without.params == 2 * 128_256 * 4_096
    assert abs(with_embeddings.params / 8.03e9 - 1) < 0.01
    assert without.params_convention == "llama-3.1-8b: every parameter, embeddings (1.05 B) left out"


def test_train_time_with_a_model_is_train_time_with_its_count(site: NotesSite) -> None:
    exact = _text(_page(site, "{{ params llama-3.1-70b exact }}\n")).replace(",", "")
    rest = "tokens=1.4e12 gpus=2048 peak_tflops=312 mfu=0.4 part=flops"
    out = _text(_page(site, f"{{{{ train-time model=llama-3.1-70b {rest} }}}}; "
                            f"{{{{ train-time params={exact} {rest} }}}}"))
    first, second = out.split("; ")
    assert first == second


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  - name: a\n    model: palm-540b\n    params: 540e9\n    tokens_per_second: 1e5\n    gpus: 8\n"
         "    preset: h100\n", "jobs.md:7: job 'a': give 'model' or 'params', not both: N is its parameter count"),
        ("  - name: a\n    model: palm-540b\n    layers: 118\n    tokens_per_second: 1e5\n    gpus: 8\n"
         "    preset: h100\n", "jobs.md:7: job 'a': give 'model' or 'layers', not both: the model gives it"),
        ("  - name: a\n    model: palm-541b\n    tokens_per_second: 1e5\n    gpus: 8\n    preset: h100\n",
         "jobs.md:6: job 'a': 'model': unknown model 'palm-541b' (did you mean 'palm-540b'? known: gpt-3-175b,"),
        ("  - name: a\n    model: palm-540b\n    tokens_per_second: 1e5\n    gpus: 0\n    preset: h100\n",
         "jobs.md:8: job 'a': 'gpus' must be a whole number >= 1: 0"),
        ("  - name: a\n    model: palm-540b\n    embeddings: maybe\n    tokens_per_second: 1e5\n    gpus: 8\n"
         "    preset: h100\n", "jobs.md:7: job 'a': 'embeddings' must be true or false: 'maybe'"),
        ("  - name: a\n    params: 7e9\n    embeddings: false\n    tokens_per_second: 1e5\n    gpus: 8\n"
         "    preset: h100\n", "jobs.md:7: job 'a': 'embeddings' goes with 'model'"),
        ("  - name: a\n    tokens_per_second: 1e5\n    gpus: 8\n    preset: h100\n",
         "jobs.md:5: job 'a': 'params' is required (or 'model', a model preset)"),
    ],
)
def test_model_job_errors_name_the_page_and_line(site: NotesSite, body: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        _page(site, f"# J\n\n```mfu-table\njobs:\n{body}```\n")
    assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ("mfu model=palm-540b params=5e11 tokens_per_second=1e5 gpus=8 preset=h100",
         "jobs.md:1: give model= or params=, not both"),
        ("mfu model=palm-540b tokens_per_second=1e5 gpus=8 preset=h100 heads=48",
         "jobs.md:1: give model= or heads=, not both"),
        ("mfu model=llama-9 tokens_per_second=1e5 gpus=8 preset=h100", "jobs.md:1: model=: unknown model 'llama-9'"),
        ("mfu model=palm-540b tokens_per_second=1e5 gpus=8 preset=h100 sparse",
         "jobs.md:1: 'mfu' does not take 'sparse'"),
        ("train-time model=palm-540b params=5e11 tokens=1e12 gpus=8 preset=h100 mfu=0.4",
         "jobs.md:1: give model= or params=, not both"),
        ("train-time embeddings=false params=5e11 tokens=1e12 gpus=8 preset=h100 mfu=0.4",
         "jobs.md:1: embeddings= goes with model="),
    ],
)
def test_model_form_errors(site: NotesSite, form: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        _page(site, f"{{{{ {form} }}}}\n")
    assert str(info.value).startswith(message), str(info.value)


def test_a_job_built_directly_must_agree_with_its_model() -> None:
    palm = FIXTURE_MODELS["palm-540b"]
    with pytest.raises(FieldError, match=r"^'params' 5.4e\+11 is not palm-540b's count under this convention"):
        TrainingJob(params=540e9, tokens_per_second=1e5, gpus=8, peak_tflops=100, model=palm)
    with pytest.raises(FieldError, match=r"^'heads' 96 is not palm-540b's \(48\)"):
        TrainingJob(params=palm.params, tokens_per_second=1e5, gpus=8, peak_tflops=100, model=palm, layers=118,
                    heads=96, head_dim=256, seq_len=2048)


def test_without_the_models_a_model_job_says_so() -> None:
    with pytest.raises(FieldError, match=r"^'model': no model presets are loaded here"):
        TrainingJob.from_fields({"model": "palm-540b", "tokens_per_second": 1, "gpus": 1, "peak_tflops": 1}, {})


def test_the_command_line_takes_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--presets-dir", str(CHAPTER_PRESETS), "mfu", "--model", "palm-540b", "--tokens-per-second", "238.3e3",
            "--gpus", "6144", "--preset", "tpu-v4", "--seq-len", "2048", "--json"]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert round(record["mfu"] * 100, 1) == 46.2
    assert (record["model"], record["embeddings"]) == ("palm-540b", True)
    assert record["attention"] == {"layers": 118, "heads": 48, "head_dim": 256, "seq_len": 2048}
    assert record["params_convention"] == "palm-540b: every parameter, embeddings included"
    assert main([*argv[:-1], "--params", "540e9"]) == 2
    err = capsys.readouterr().err
    assert err == "ainotes mfu: give --model or --params, not both: N is its parameter count\n"
    train = ["--presets-dir", str(CHAPTER_PRESETS), "train-time", "--model", "mixtral-8x7b", "--tokens", "1e12",
             "--gpus", "64", "--peak-tflops", "989.4", "--mfu", "0.4", "--json"]
    assert main(train) == 0
    flops = json.loads(capsys.readouterr().out)["flops"]
    assert abs(flops / (6 * 12.9e9 * 1e12) - 1) < 0.01  # 6 × the active 12.9 B × D
    assert main([*train[:-1], "--layers", "32"]) == 2
    assert capsys.readouterr().err == "ainotes train-time: give --model or --layers, not both: the model gives it\n"


# --- the one rule library: the peak a preset lacks, a training run, the op name -----------------------


def test_a_missing_peak_names_the_preset_the_ceiling_and_the_peaks_it_has() -> None:
    a100 = PRESETS["a100"]  # the fixture's A100: no FP8 path
    message = a100.missing_peak("fp8")
    assert message.startswith("preset a100 has no FP8 tensor path (its peaks: ")
    assert "FP16 tensor" in message and "FP8" not in message.split("(its peaks: ")[1]
    with pytest.raises(FieldError, match=r"^precision= fp8: preset a100 has no FP8 tensor path") as info:
        TrainingJob.from_fields({**{k: PALM[k] for k in ("params", "tokens_per_second", "gpus")},
                                 "preset": "a100", "precision": "fp8"}, PRESETS, label=lambda k: f"{k}=")
    assert info.value.field == "precision"


def test_a_training_run_from_typed_fields_reproduces_the_facts_example() -> None:
    from ainotes.core.jobs import TrainingRun

    # FACTS, "Time to train": 70e9 parameters, 1.4e12 tokens, 2,048 GPUs at 312 TFLOP/s, 40 % MFU: 26.6 days.
    run = TrainingRun.from_fields({"params": "70e9", "tokens": "1.4e12", "gpus": "2048", "mfu": "0.4",
                                   "peak_tflops": "312"}, {})
    assert f"{run.time().days:.1f}" == "26.6"
    assert run.precision is None and run.preset_id is None


@pytest.mark.parametrize(("fields", "message"), [
    ({"mfu": "40"}, "--mfu must be a fraction from 0 to 1 (40 % is 0.4): '40'"),
    ({"gpus": "2.5"}, "--gpus must be a whole number >= 1: '2.5'"),
    ({"precision": "fp8"}, "--precision goes with --preset; --peak-tflops is already the peak to use"),
    ({"speed": "1"}, "unknown key --speed"),
])
def test_a_training_run_refuses_bad_fields_in_the_callers_words(fields: dict, message: str) -> None:
    from ainotes.core.jobs import TrainingRun

    base = {"params": "70e9", "tokens": "1.4e12", "gpus": "2048", "mfu": "0.4", "peak_tflops": "312"}
    with pytest.raises(FieldError) as info:
        TrainingRun.from_fields({**base, **fields}, {}, label=lambda k: "--" + k.replace("_", "-"))
    assert str(info.value).startswith(message)


def test_one_op_check_names_the_callers_field() -> None:
    from ainotes.core import collective_cost, collectives

    for check in (collectives.check_op, collective_cost.check_op):
        with pytest.raises(FieldError, match=r"^OP must be one of all-reduce, .*: 'all-sum'$") as info:
            check("all-sum", "OP")
        assert info.value.field == "op"
    assert collectives.check_op("all-gather") == "all-gather"
