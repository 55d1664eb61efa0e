"""The parallelism inline forms and ``bytes=`` naming a quantity of a model in ``collective-time``: the
published figures from tests/fixtures/parallel, and one line (page:line on a page) for each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.inline import figures
from ainotes.presets.gpus import load_presets
from ainotes.presets.links import load_links
from ainotes.presets.models import load_models

FIXTURES = Path(__file__).parent / "fixtures" / "parallel"
PRESETS = {p.id: p for p in load_presets(FIXTURES)}
LINKS = {link.id: link for link in load_links(FIXTURES / "links")}
MODELS = {m.id: m for m in load_models(FIXTURES / "models")}
LAYOUT = "lab-70b lab-h100 gpus=1024 tp=8 pp=8 micro_batches=32"


def ev(body: str) -> str:
    return figures.evaluate(body, PRESETS, lambda: LINKS, lambda: MODELS)


@pytest.mark.parametrize(("body", "text"), [
    (f"layout-collective {LAYOUT.replace(' gpus', ' tp gpus')}", "67.1 MB"),  # b·s·h·2 of Llama 3.1 70B
    ("layout-collective lab-70b lab-h100 tp gpus=8 tp=8 part=count", "320"),  # 4 × 80 layers
    ("layout-collective lab-70b lab-h100 tp gpus=8 tp=8 part=count per=layer", "4"),
    ("layout-collective lab-70b lab-h100 tp gpus=8 tp=8 part=link", "lab-nvlink"),
    (f"layout-step {LAYOUT} part=bubble-fraction", "17.9 %"),
    ("bubble pp=8 micro_batches=32", "17.9 %"),
    ("bubble pp=4 micro_batches=8 interleave=2 part=ratio", "18.8 %"),  # (p−1)/(v·m) = 3/16
    (f"layout-step {LAYOUT} part=layout", "dp 16 · tp 8 · pp 8"),
    (f"layout-step {LAYOUT} part=batch", "2,097,152 tokens"),
    (f"layout-step {LAYOUT} part=fits", "fits"),
    ("threshold dp book-v5p", "2,550 tokens"),
    ("threshold dp-axes book-v5p", "850 tokens"),
    ("threshold dp book-h100", "2,200 tokens"),
    ("threshold dp-inter book-h100", "2,475 tokens"),
    ("threshold dp book-h800", "3,300 tokens"),
    ("threshold tp book-v5p model=lab-70b", "11.2"),
    ("threshold moe book-h100 model=lab-moe", "8,800 tokens"),
    ("threshold-train book-v5p params=70e9 tokens=15e12 batch=16e6 mfu=0.5", "17 days"),
    ("threshold-train book-v5p params=70e9 tokens=15e12 batch=16e6 mfu=0.5 part=chips", "18,823"),
    ("threshold-train book-v5p params=70e9 tokens=15e12 batch=16e6 mfu=0.5 part=flops", "6.3·10²⁴ FLOPs"),
])
def test_the_forms_give_the_published_figures(body: str, text: str) -> None:
    assert ev(body) == text


def test_the_step_and_its_parts_agree_with_the_core() -> None:
    parts = {part: ev(f"layout-step {LAYOUT} part={part}") for part in ("step", "compute", "bubble", "exposed", "tp")}
    assert all(text.endswith(("s", "ms")) for text in parts.values())
    dp = ev(f"layout-collective {LAYOUT.replace(' gpus', ' dp gpus')} part=bytes")
    assert dp == "2.2 GB"  # 2Ψ/(tp·pp): Llama 3.1 70B's BF16 gradients over 64 shards


def test_bytes_takes_a_quantity_of_a_model() -> None:
    by_number = ev("collective-time all-reduce ranks=8 bytes=67108864 link=lab-nvlink")
    assert ev("collective-time all-reduce ranks=8 bytes=activation model=lab-70b link=lab-nvlink") == by_number
    shard = MODELS["lab-70b"].params * 2 / 64
    assert ev("collective-time all-reduce ranks=16 bytes=gradients model=lab-70b tp=8 pp=8 link=lab-ib") == ev(
        f"collective-time all-reduce ranks=16 bytes={shard!r} link=lab-ib")
    assert ev("collective-time all-gather ranks=16 bytes=weights model=lab-70b tp=8 pp=8 link=lab-ib") == ev(
        f"collective-time all-gather ranks=16 bytes={shard!r} link=lab-ib")


@pytest.mark.parametrize(("body", "message"), [
    ("collective-time all-reduce ranks=8 bytes=weights link=lab-nvlink", "bytes=weights needs model="),
    ("collective-time all-reduce ranks=8 bytes=1e6 model=lab-70b link=lab-nvlink", "model= goes with bytes="),
    ("collective-time all-reduce ranks=8 bytes=activation model=lab-70b tp=8 link=lab-nvlink",
     "tp= does not split one TP activation"),
    ("collective-time all-reduce ranks=8 bytes=weights model=llama-9 link=lab-nvlink", "unknown model 'llama-9'"),
    ("layout-step lab-70b lab-h100 gpus=1024 tp=3", "'layout-step': tp= 3 × pp= 1 × cp= 1 = 3 does not divide"),
    ("layout-step lab-70b lab-h100 gpus=96 tp=3", "tp= 3 does not divide the 64 attention heads"),
    ("layout-step lab-70b lab-h100 gpus=8 batch=4", "'layout-step' does not take batch="),
    ("layout-step lab-70b lab-h100 gpus=8 part=speed", "part= must be one of step,"),
    ("layout-step lab-70b gpus=8", "'layout-step' needs MODEL PRESET and gpus="),
    ("layout-collective lab-70b lab-h100 pp gpus=8 tp=8", "this layout issues no pp collective (pp is 1)"),
    ("layout-collective lab-70b lab-h100 xp gpus=8", "the axis must be one of dp, tp, pp, ep, cp"),
    ("threshold dp lab-loner", "names none"),
    ("threshold speed book-v5p", "'threshold' needs a threshold (dp, dp-inter"),
    ("threshold tp book-v5p", "the tp threshold needs a model"),
    ("bubble pp=8", "'bubble' needs micro_batches="),
])
def test_a_mistake_is_one_line(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        ev(body)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_page_names_the_line_of_a_bad_layout(tmp_path: Path) -> None:
    from ainotes.build.site import NotesSite
    from ainotes.markdown.extension import convert_page

    page = "# T\n\nThe step takes {{ layout-step lab-70b lab-h100 gpus=1000 tp=8 pp=8 }}.\n"
    with pytest.raises(InputError, match=r"^par\.md:3: .*'layout-step': tp= 8 × pp= 8 × cp= 1 = 64 does not divide "
                                         r"gpus= 1000"):
        convert_page(NotesSite(FIXTURES), page, "par.md", "par/")
