"""The fence registry, and CONTRIBUTING.md's promise: a new fence kind is one module and one line."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ainotes
from ainotes.fences import kind as fence_kind
from ainotes.fences.registry import CHART_KINDS, FENCE_KINDS, FENCE_MODULES, VEGA_KINDS

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(ainotes.__file__).resolve().parent
FIXTURE_PRESETS = Path(__file__).resolve().parent / "fixtures" / "presets"


def _defines_kind(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "KIND" for t in node.targets)
               for node in tree.body)


def test_every_fence_module_is_registered_and_every_registered_module_is_a_kind() -> None:
    """A module that defines a KIND but is missing from FENCE_MODULES would be a fence no page can use."""
    defining = {path.stem for path in (PACKAGE / "fences").glob("*.py") if _defines_kind(path)}
    assert defining == set(FENCE_MODULES)
    assert len(FENCE_KINDS) == len(FENCE_MODULES)
    assert all(isinstance(kind, fence_kind.FenceKind) for kind in FENCE_KINDS.values())
    assert set(VEGA_KINDS) <= set(CHART_KINDS)
    # The kinds the notes are written with (README, CONTRACT.md) are all there.
    assert {"roofline", "collective", "collective-cost", "presets-table", "mfu-table", "kernels-table",
            "links-table", "models-table", "training-memory", "memory-fit-table", "inference",
            "inference-table", "whats-new", "tags-index", "preset-check"} <= set(FENCE_KINDS)


def _contributing_example() -> tuple[str, str, str]:
    """The module, its registry line and the page that uses it, as CONTRIBUTING.md gives them."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a fence kind"):]
    blocks = re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)
    page = re.search(r"^````markdown\n(.*?)^````", section, flags=re.M | re.S)
    assert len(blocks) >= 2 and page is not None, "CONTRIBUTING.md lost its fence-kind example"
    module_name = re.search(r"Save\s+it\s+as\s+`src/ainotes/fences/(\w+)\.py`", section)
    assert module_name is not None
    return module_name.group(1) + "\n" + blocks[0], blocks[1].strip(), page.group(1)


def test_contributing_s_new_fence_kind_works_with_one_module_and_one_registry_line(tmp_path: Path) -> None:
    module, registry_line, page = _contributing_example()
    module_name, _, module_code = module.partition("\n")
    copy = tmp_path / "src" / "ainotes"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "fences" / f"{module_name}.py").write_text(module_code, encoding="utf-8")
    registry = copy / "fences" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    assert "FENCE_MODULES: tuple[str, ...] = (\n" in text
    registry.write_text(text.replace("FENCE_MODULES: tuple[str, ...] = (\n",
                                     f"FENCE_MODULES: tuple[str, ...] = (\n    {registry_line}\n"), encoding="utf-8")
    misspelt = page.replace("title:", "titel:")
    script = f"""
import sys
from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.markdown.extension import convert_page
site = NotesSite({str(FIXTURE_PRESETS)!r})
print(convert_page(site, {page!r}, "ridges.md", "ridges/"))
for text in ({misspelt!r}, {page.replace("ridge-list", "ridge-lst")!r}):
    try:
        convert_page(site, text, "ridges.md", "ridges/")
    except InputError as exc:
        print("ERROR", exc)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env={"PYTHONPATH": str(tmp_path / "src"), "PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # The fixture H100 (989.4 TFLOP/s dense FP16, 3.35 TB/s): the published ridge of about 295 FLOP/byte.
    assert "NVIDIA H100 SXM5 80 GB: 295 FLOP/byte" in out
    assert "Where each GPU turns compute-bound" in out
    errors = [line for line in out.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2
    assert errors[0] == ("ERROR ridges.md:3: unknown key 'titel' in ridge-list fence (allowed: presets, title): "
                         "did you mean 'title'?")
    assert "did you mean 'ridge-list'?" in errors[1]


def _contributing_chart_example() -> tuple[str, str]:
    """The chart module and its fence module, as CONTRIBUTING.md's "Adding a chart" gives them."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index("## Adding a chart")
    section = text[start:text.index("\n## ", start + 1)]
    blocks = re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)
    assert len(blocks) == 2, "CONTRIBUTING.md lost its chart example"
    assert "Save it as\n`src/ainotes/charts/ridges.py`" in section
    assert "Save it as `src/ainotes/fences/ridge_chart.py`" in section
    return blocks[0], blocks[1]


def test_contributing_s_new_chart_is_one_chart_module_and_one_fence_module(tmp_path: Path) -> None:
    chart_code, fence_code = _contributing_chart_example()
    copy = tmp_path / "src" / "ainotes"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "charts" / "ridges.py").write_text(chart_code, encoding="utf-8")
    (copy / "fences" / "ridge_chart.py").write_text(fence_code, encoding="utf-8")
    registry = copy / "fences" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    registry.write_text(text.replace("FENCE_MODULES: tuple[str, ...] = (\n",
                                     'FENCE_MODULES: tuple[str, ...] = (\n    "ridge_chart",\n'), encoding="utf-8")
    page = "# Ridges\n\n```ridge-chart\npresets: [h100]\ntitle: Where <b>GPUs</b> turn\n```\n"
    site_dir = tmp_path / "site"
    script = f"""
import json
from ainotes.build.site import NotesSite
from ainotes.markdown.extension import convert_page
site = NotesSite({str(FIXTURE_PRESETS)!r})
html = convert_page(site, {page!r}, "ridges.md", "ridges/")
site.write_outputs({str(site_dir)!r})
print(json.dumps({{"html": html}}))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            env={"PYTHONPATH": str(tmp_path / "src"), "PATH": "/usr/bin:/bin",
                                 **{k: v for k, v in os.environ.items() if k.startswith(("AINOTES_", "XDG_"))}},
                            check=False)
    assert result.returncode == 0, result.stderr
    html_text = json.loads(result.stdout.splitlines()[-1])["html"]
    # The one drawer's figure: both stills, both phone stills, both live views, caption, downloads.
    for still in ("--light", "--dark", "--light ainotes-chart__still--narrow", "--dark ainotes-chart__still--narrow"):
        assert f'class="ainotes-chart__still ainotes-chart__still{still}"' in html_text
    assert html_text.count('<template class="ainotes-chart__spec"') == 2
    assert "Dense FP16/BF16 ridge points of NVIDIA H100 SXM5 80 GB." in html_text
    assert "Where <b>GPUs" not in html_text  # the title, escaped wherever it is shown
    assert sorted(p.name for p in (site_dir / "embed").iterdir()) == [
        "manifest.json", "ridges-ridges-dark.svg", "ridges-ridges.html", "ridges-ridges.json", "ridges-ridges.png",
        "ridges-ridges.svg"]
    embed_page = (site_dir / "embed" / "ridges-ridges.html").read_text(encoding="utf-8")
    assert "<title>Where &lt;b&gt;GPUs&lt;/b&gt; turn</title>" in embed_page
