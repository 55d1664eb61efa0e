"""A fence name that is a letter or two from one of the fence kinds: the strict build's "did you mean"."""

from __future__ import annotations

import functools

from ainotes.fences.registry import FENCE_KINDS


@functools.lru_cache(maxsize=1024)  # a function of the name alone; mkdocs serve meets the same names at each rebuild
def misspelt_kind(name: str | None) -> str | None:
    """"did you mean 'roofline'?" for a fence name a letter or two from one of ours, else None.

    A name Pygments knows is a language, never a misspelling."""
    if not name or name in FENCE_KINDS:
        return None
    lowered = name.lower()
    distance, kind = min((_edit_distance(lowered, kind), kind) for kind in FENCE_KINDS)
    if distance > (1 if len(kind) <= 5 else 2) or _is_language(name):
        return None
    return f"'{name}' is not a fence kind: did you mean '{kind}'? (fence kinds: {', '.join(sorted(FENCE_KINDS))})"


def _edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) that turn ``a`` into ``b``."""
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        earlier, before, row = before, row, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(before[j] + 1, row[j - 1] + 1, before[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], earlier[j - 2] + 1)
    return row[-1]


def _is_language(name: str) -> bool:
    try:
        from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
        from pygments.util import ClassNotFound  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover (Material and pymdown-extensions bring Pygments)
        return False
    try:
        get_lexer_by_name(name)
    except ClassNotFound:
        return False
    return True
