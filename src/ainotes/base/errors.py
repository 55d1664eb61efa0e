"""The one exception type for mistakes a user can fix."""


class InputError(ValueError):
    """Bad user input: a preset file, a fence body, a command-line flag.

    The message is one line that names the place (file and key, page and line,
    or flag) and states the rule and the offending value, e.g.
    ``presets/h100.yaml: 'memory_bandwidth_tbps' must be > 0: -3.0``.
    Adapters (CLI, MkDocs hooks) print it as it is, without a traceback.
    """


class PresetFileError(InputError):
    """A preset file (a GPU, link or model) is wrong: its message names the file and the key's line, so
    no page prefixes its own place when a build meets it (``presets/models/x.yaml:7: 'vocab' ...``)."""
