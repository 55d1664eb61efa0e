"""The Python-Markdown extension (``markdown_extensions: [ainotes.markdown]`` in ``mkdocs.yml``).

The extension itself lives in :mod:`ainotes.markdown.extension`; Python-Markdown looks an
extension up by this package's ``makeExtension``.
"""

from ainotes.markdown.extension import NotesExtension, makeExtension

__all__ = ["NotesExtension", "makeExtension"]
