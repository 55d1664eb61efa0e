"""``ainotes site-assets`` and ``cache``: a site built without hooks, and the render cache."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ainotes.base import cache


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's subcommands."""
    assets = commands.add_parser(
        "site-assets", parents=[common], help="write the charts' shared files into a site built without hooks",
        description="For builders that run no MkDocs hooks (Zensical): convert the pages as mkdocs.yml says and "
        "write the shared assets, every chart's embed files and embed/manifest.json into SITE_DIR, as "
        "hooks/notes.py does after a MkDocs build.",
    )
    assets.add_argument("site_dir", metavar="SITE_DIR", help="the built site folder")
    assets.add_argument("--config", default="mkdocs.yml", metavar="FILE", help="the project's mkdocs.yml")
    assets.set_defaults(handler=_cmd_site_assets)
    cache_parser = commands.add_parser("cache", parents=[common], help="the chart render cache",
                                description="Show or clear the content-hash cache of rendered charts.")
    cache_parser.add_argument("action", choices=("info", "clear"), metavar="ACTION", help="info or clear")
    cache_parser.set_defaults(handler=_cmd_cache)


def _cmd_site_assets(args: argparse.Namespace) -> int:
    from ainotes import render
    from ainotes.project import write_site_assets

    site = write_site_assets(args.config, args.site_dir, progress=render.stderr_progress)
    print(f"wrote {len(site.charts)} charts' files and embed/manifest.json into {args.site_dir}")
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:

    folder = Path(cache.cache_dir())
    if args.action == "clear":
        removed = cache.clear_cache()
        detail = f": {removed} files removed" if isinstance(removed, int) else ""
        print(f"cleared the render cache at {folder}{detail}")
        return 0
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    size_bytes = sum(p.stat().st_size for p in files)
    print(f"render cache: {folder}")
    print(f"{len(files)} files, {size_bytes / 1e6:.1f} MB")
    return 0
