"""What every ``ainotes`` command shares: the one-line-error parser, flag types, preset loading,
output checks and plain-text tables.

Every user mistake ends as one line on stderr, ``ainotes <command>: <what and where>``, exit status
2, no traceback; output files are written atomically (temporary file, then ``os.replace``) and only
once everything has succeeded.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ainotes.base.errors import InputError
from ainotes.base.files import write_atomic
from ainotes.base.textcheck import MAX_NAME_CHARS, short
from ainotes.core import checks, collective_cost
from ainotes.core.hardware import Preset, preset_by_id
from ainotes.presets.gpus import default_presets_dir, load_presets

EXIT_USER_ERROR = 2


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: ``ainotes mfu: argument --gpus: ...``, exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse takes "-5e9" for an option; read it as a (negative) number so the
        # value check can say what is wrong with it.
        self._negative_number_matcher = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")

    def error(self, message: str) -> NoReturn:
        message = " ".join(message.split())
        self.exit(EXIT_USER_ERROR, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def integer(text: str) -> int:
    """A flag's value as a whole number, written with digits (the one rule, ``ainotes.core.checks``);
    its range is the core's to check."""
    try:
        return checks.whole_number(text, "", low=-(2**63))
    except InputError:
        raise argparse.ArgumentTypeError(f"must be a whole number: {text!r}") from None


def ranks(text: str) -> int:
    """``--ranks``: a rank count under the α–β model's one rule (:func:`ainotes.core.collective_cost.check_ranks`),
    the rule and words of the ``collective-cost`` fence and the inline forms too."""
    try:
        return collective_cost.check_ranks(text, "")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def positive_number(text: str) -> float:
    """A flag's value as a finite number > 0 (``ainotes.core.checks``; argparse names the flag)."""
    try:
        return checks.positive_number(text, "")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def count(text: str) -> int:
    """A flag's value as a whole number >= 1 (``ainotes.core.checks``; argparse names the flag)."""
    try:
        return checks.whole_number(text, "")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def number(text: str) -> float:
    """A flag's text as a float, unchecked: the core's rule (and message) decides what it may be."""
    try:
        return float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number: {text!r}") from None


def one_line(text: str) -> str:
    """A title: one non-empty line, at most the one cap of names and titles, no control character
    (``ainotes.core.checks.one_line_text``, as in a fence)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must be one non-empty line: {short(text)}")
    try:
        return checks.one_line_text(text, "", max_chars=MAX_NAME_CHARS)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def flag(key: str) -> str:
    """How a core field is named on the command line: ``tokens_per_second`` → ``--tokens-per-second``.
    The one mapping: builders take it as their ``label``, and :func:`flagged` applies it to the core's
    own messages."""
    return "--no-embeddings" if key == "embeddings" else "--" + key.replace("_", "-")


_QUOTED_FIELD = re.compile(r"^'([a-z][a-z_]*)'")


def flagged(message: str, parser: argparse.ArgumentParser, command: str) -> str:
    """A core message that opens with a quoted field (``'ranks' must be ...``), with the field named as
    the command names it: its flag (``--ranks``), or its positional argument (``OP``)."""
    match = _QUOTED_FIELD.match(message)
    if match is None:
        return message
    sub = next((a.choices[command] for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if not isinstance(sub, argparse.ArgumentParser):
        return message
    key = match.group(1)
    for action in sub._actions:
        if flag(key) in action.option_strings or (not action.option_strings and action.dest == key):
            name = flag(key) if action.option_strings else str(action.metavar or key.upper())
            return name + message[match.end():]
    return message


def presets_dir(args: argparse.Namespace) -> Path:
    given = getattr(args, "presets_dir", None)
    return Path(given) if given is not None else default_presets_dir()


def load_gpu_presets(args: argparse.Namespace) -> tuple[Preset, ...]:
    return load_presets(presets_dir(args))


def load_link_presets(args: argparse.Namespace) -> Any:
    from ainotes.presets.links import default_links_dir, load_links

    return load_links(default_links_dir(presets_dir(args)))


class RunPresets:
    """What a command that builds a run from flags (``ainotes inference``, ``ainotes parallel``) reads first,
    by id: the model presets of ``<presets dir>/models``, then the GPU presets; the links of
    ``<presets dir>/links`` only when :meth:`links` is first asked for (a run on one chip needs none)."""

    def __init__(self, args: argparse.Namespace) -> None:
        from ainotes.presets.models import default_models_dir, load_models

        folder = presets_dir(args)
        self.models: dict[str, Any] = {m.id: m for m in load_models(default_models_dir(folder))}
        self.presets: dict[str, Preset] = {p.id: p for p in load_presets(folder)}
        self._args = args
        self._links: dict[str, Any] | None = None

    def links(self) -> dict[str, Any]:
        """The link presets by id, read once."""
        if self._links is None:
            self._links = {link.id: link for link in load_link_presets(self._args)}
        return self._links


def models_loader(args: argparse.Namespace) -> Callable[[], dict[str, Any]]:
    def load() -> dict[str, Any]:
        from ainotes.presets.models import default_models_dir, load_models

        return {m.id: m for m in load_models(default_models_dir(presets_dir(args)))}

    return load


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    """--model and --no-embeddings, for mfu and train-time (ainotes.core.jobs.model_count)."""
    parser.add_argument("--model", metavar="ID", help="a model preset (see 'ainotes models') instead of --params "
                        "and --layers/--heads/--head-dim: N is the parameters a token uses (a mixture's active "
                        "experts), embeddings included; give --seq-len for the attention term")
    parser.add_argument("--no-embeddings", dest="embeddings", action="store_const", const=False,
                        help="with --model: leave the embedding matrices out of N")


def preset_flag(presets: Sequence[Preset], preset_id: str) -> Preset:
    try:
        return preset_by_id(presets, preset_id)
    except InputError as exc:
        raise InputError(f"--preset: {exc}") from None


def chosen_presets(args: argparse.Namespace) -> tuple[Preset, ...]:
    """The presets named by --preset, in the order given, without repeats; all of them without it."""
    presets = load_gpu_presets(args)
    if not args.preset:
        return presets
    chosen: list[Preset] = []
    for preset_id in args.preset:
        preset = preset_flag(presets, preset_id)
        if preset not in chosen:
            chosen.append(preset)
    return tuple(chosen)


def check_output(path_text: str, suffixes: tuple[str, ...]) -> Path:
    path = Path(path_text)
    if path.is_dir():
        raise InputError(f"-o {path_text}: is a folder, not a file")
    suffix = path.suffix.lower()
    if suffix not in suffixes:
        choices = f"{', '.join(suffixes[:-1])} or {suffixes[-1]}"
        raise InputError(f"-o {path_text}: the file name must end in {choices}; got {suffix or 'no suffix'!r}")
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"-o {path_text}: folder {str(parent)!r} does not exist")
    return path


def write_output(path: Path, content: str | bytes) -> None:
    """Write the output file atomically; a failure is the user's one-line error."""
    try:
        write_atomic(path, content)
    except OSError as exc:
        raise InputError(f"-o {path}: cannot write the file: {exc.strerror or exc}") from None


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def seconds(value_s: float) -> str:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value_s >= scale:
            return f"{value_s / scale:.4g} {unit}"
    return f"{value_s / 1e-9:.4g} ns"
