"""Reading the YAML a user writes (preset files, fence bodies, front matter) so that every mistake is
one line at the line the author must fix, in plain words.

* :func:`load_text`: compose, refuse nesting deeper than :data:`MAX_NESTING_LEVELS` (a 5,000-deep
  ``notes:`` would otherwise exhaust Python's recursion while the document is built), then construct.
* :func:`error_line`: the 0-based line that holds the mistake, which is not always where the parser
  noticed it (a key without ``:`` is noticed on the next line, an unclosed ``[`` at the next key).
* :func:`problem_words`: what is wrong and what was likely meant, one line, instead of PyYAML's
  multi-line "while parsing ... in <unicode string>" report.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_NESTING_LEVELS", "YamlMistakeError", "error_line", "load_text", "problem_words", "too_deep"]

# The deepest a shipped file or fence goes is four (peaks.tensor.fp16.dense_tflops); 32 leaves room for
# anything an author means and stops long before Python's recursion limit (1,000 frames).
MAX_NESTING_LEVELS = 32


class YamlMistakeError(Exception):
    """YAML that does not parse or nests too deep: ``line`` (0-based, in the text given), ``words`` (what
    is wrong) and ``parse`` (whether the text is not YAML at all, rather than YAML the loader refuses:
    a repeated key, nesting too deep)."""

    def __init__(self, line: int | None, words: str, *, parse: bool = True) -> None:
        super().__init__(words)
        self.line = line
        self.words = words
        self.parse = parse


def too_deep(root: yaml.Node, limit: int = MAX_NESTING_LEVELS) -> yaml.Node | None:
    """The first node nested more than ``limit`` collections deep under ``root``, or ``None``
    (walked with a stack, not recursion, so any depth is safe to measure)."""
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:  # an alias: its anchor was measured where it stood
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            continue
        if depth > limit:
            return node
        stack.extend((child, depth + 1) for child in children)
    return None


def load_text(text: str, loader: yaml.SafeLoader) -> Any:
    """The one document of ``loader`` (made over ``text``), or :class:`YamlMistakeError` at its line.

    The node tree is composed first (libyaml's composer does not recurse in Python; a Python composer
    recursing too deep is caught), measured with :func:`too_deep`, and only then built."""
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlMistakeError(None, f"nested more than {MAX_NESTING_LEVELS} levels deep", parse=False) from None
        if node is None:
            return None
        deep = too_deep(node)
        if deep is not None:
            raise YamlMistakeError(deep.start_mark.line, f"nested more than {MAX_NESTING_LEVELS} levels deep "
                                   "(lists or mappings inside each other)", parse=False)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        words = problem_words(exc)
        parse = not words.startswith(("duplicate key", "nested more than"))
        raise YamlMistakeError(error_line(exc, text), words, parse=parse) from None


def error_line(exc: yaml.YAMLError, text: str) -> int | None:
    """The 0-based line of ``text`` that holds the mistake YAML found (``None`` if YAML gives no place).

    An unclosed ``[`` or ``{`` is noticed at the next ``key:``, lines on: the mistake ends the last value
    read before that. An unclosed quote is noticed at the end, a ``key`` without ``:`` on the next line:
    the mistake is where the quote or the key began. Otherwise the problem's own mark is the line (a
    key indented too far or not far enough is reported at that key)."""
    problem = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context_mark", None)
    if problem is None:
        return None if context is None else context.line
    if isinstance(exc, yaml.parser.ParserError) and str(exc.context or "").startswith("while parsing a flow"):
        last = None
        try:
            for token in yaml.scan(text, Loader=yaml.SafeLoader):
                if token.start_mark.index >= problem.index:
                    break
                last = token
        except yaml.YAMLError:
            pass
        return problem.line if last is None else last.start_mark.line
    stated = str(getattr(exc, "problem", "") or "")
    if context is not None and ("end of stream" in stated or "could not find expected ':'" in stated):
        return context.line
    return problem.line


# (what PyYAML or libyaml says, what the author reads); first match wins.
_WORDS: tuple[tuple[str, str], ...] = (
    ("duplicate key", ""),  # the loaders' own one-line message, kept as it is
    ("mapping values are not allowed",
     "a 'key: value' where a plain value was expected: this line is indented under a value, or a value "
     "holds ': ' (indent keys of one mapping to the same column; quote a value that holds ': ')"),
    ("expected '-' indicator", "this line does not line up with the list above it (start every item of "
                               "one list with '- ' in the same column)"),
    ("found a tab", "a tab in the indentation (YAML indents with spaces only)"),
    ("'\\t' that cannot start", "a tab in the indentation (YAML indents with spaces only)"),
    ("could not find expected ':'", "a key without ':' (write key: value)"),
    ("did not find expected key", "this line does not line up with the keys above it (indent the keys "
                                  "of one mapping to the same column)"),
    ("expected <block end>", "this line does not line up with the lines above it (indent the keys of "
                             "one mapping, and the '- ' items of one list, to the same column)"),
    ("maximum nesting depth", f"nested more than {MAX_NESTING_LEVELS} levels deep"),
    ("found undefined alias", "an alias (*name) with no anchor (&name) before it"),
    ("found unexpected end of stream", "a quote that is never closed"),
    ("found unknown escape", "an unknown escape after '\\' in double quotes (use single quotes, or '\\\\')"),
    ("special characters are not allowed", "a control character, which no page or SVG can show"),
    ("control characters are not allowed", "a control character, which no page or SVG can show"),
    ("could not determine a constructor", "a YAML tag (!something) no preset or fence reads: write a plain value"),
)


def problem_words(exc: yaml.YAMLError) -> str:
    """What is wrong, in one line of plain words (the parser's own words, on one line, where none fit)."""
    raw = " ".join(str(getattr(exc, "problem", None) or getattr(exc, "context", None) or "").split())
    context = " ".join(str(getattr(exc, "context", None) or "").split())
    if not raw:
        raw = " ".join((str(exc).splitlines() or ["invalid YAML"])[0].split())
    if context.startswith("while parsing a flow") and ("expected ',' or" in raw or "node content" in raw):
        return "a '[' or '{' that is never closed, or items without ',' between them"
    for said, words in _WORDS:
        if said in raw:
            return words or raw
    return raw
