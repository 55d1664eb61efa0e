"""A roofline chart's stills: the plot size at which a still comes to its page's size, and the
phone-sized picture (:func:`narrow_static`)."""

from __future__ import annotations

import math
from typing import Any

from ainotes.charts.roofline.names import (
    ALL_PRESETS,
    NARROW_PLOT_PX,
    NARROW_STATIC_WIDTH_PX,
    NARROW_STILL_PLOT_HEIGHT_PX,
    SHOWN_STYLE,
    STILL_FRAME_HEIGHT_PX,
    STILL_FRAME_WIDTH_PX,
    STILL_GPU_LINE_PX,
    STILL_GPU_ROW_PX,
    STILL_KEY_FIRST_ROW_PX,
    STILL_KEY_LINE_PX,
    STILL_KEY_ROW_PX,
    STILL_MIN_PLOT_HEIGHT_PX,
    STILL_STYLE_LINE_PX,
    STILL_STYLE_ROW_PX,
    WIDE_LEGEND_PLOT_PX,
)

# -- stills ---------------------------------------------------------------------------------------


def _opening_styles(params: dict[str, Any]) -> list[tuple[str, str]]:
    """The line key's entries as a chart opens (style, label wrapped for a narrow plot)."""
    mode = f"{params['precision']}|{'s' if params['sparsity'] else 'd'}"
    styles = params["line_keys"].get(f"{params['kmode']}|{mode}|{ALL_PRESETS}", [SHOWN_STYLE])
    return [(s, params["style_names"][s][1]) for s in styles]


def _still_frame_height(plot_width: int, params: dict[str, Any]) -> int:
    """What the title, subtitle, x axis and legends take above and below a still's plot (px) at
    ``plot_width``, for the chart whose param values are ``params``: the legends' columns and
    lines follow the plot width as the grammar's expressions do."""
    narrow = plot_width < NARROW_PLOT_PX
    gpus = params["gpu_ids"]
    keys = list(params["kernel_keys"].get("own", {}).values())
    narrow_keys = [forms[0] for forms in params["narrow_keys"].get("own", {}).values()]  # every form as tall
    styles = _opening_styles(params)
    gpu_columns = 1 if plot_width < WIDE_LEGEND_PLOT_PX else 2
    frame = STILL_FRAME_HEIGHT_PX + STILL_GPU_ROW_PX * (math.ceil(len(gpus) / gpu_columns) - 1)
    frame += STILL_STYLE_ROW_PX * (len(styles) - 1)  # the line key: one entry a row
    if narrow:  # one entry a row: each adds its wrapped lines (a GPU's ridge is one more)
        frame += STILL_GPU_LINE_PX * sum(params["narrow_names"][g].count("\n") + 1 for g in gpus)
        frame += sum(math.floor(STILL_KEY_LINE_PX * key.count("\n")) for key in narrow_keys)
        frame += STILL_STYLE_LINE_PX * sum(label.count("\n") for _, label in styles)
    if keys:
        frame += STILL_KEY_FIRST_ROW_PX + STILL_KEY_ROW_PX * (len(keys) - 1)  # one kernel a row
    return frame


def still_plot_size(width_px: int, height_px: int, params: dict[str, Any]) -> dict[str, int]:
    """The plot size (``{"width", "height"}``) at which a still of the chart whose param values
    are ``params`` comes to ``width_px`` × ``height_px`` in all, its frame
    (:data:`STILL_FRAME_WIDTH_PX`, :func:`_still_frame_height`) around it."""
    plot_width = width_px - STILL_FRAME_WIDTH_PX
    frame = _still_frame_height(plot_width, params)
    return {"width": plot_width, "height": max(STILL_MIN_PLOT_HEIGHT_PX, height_px - frame)}


def narrow_static(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec drawn at a phone's width (:data:`NARROW_STATIC_WIDTH_PX`), for the static picture
    a phone shows before (or without) the script: a plot at least :data:`NARROW_STILL_PLOT_HEIGHT_PX`
    tall and its legends below it, as tall as they need."""
    params = {param["name"]: param.get("value") for param in spec.get("params", [])}
    meta = spec["usermeta"]["ainotes"]
    # The page's box on a phone takes this picture's proportions, and the live view fills the box:
    # the plot gets the room the line key may take in other states, so it never shrinks below
    # NARROW_STILL_PLOT_HEIGHT_PX as the reader moves the selects.
    opening = len(_opening_styles(params))
    most = max([len(styles) for styles in params["line_keys"].values()] + [opening]) + 2  # + the reader's two
    lines = max(text.count("\n") for _, text in params["style_names"].values()) if params["style_names"] else 0
    slack = (most - opening) * (STILL_STYLE_ROW_PX + STILL_STYLE_LINE_PX * lines)
    plot = NARROW_STILL_PLOT_HEIGHT_PX + slack
    still = {"width": NARROW_STATIC_WIDTH_PX - STILL_FRAME_WIDTH_PX, "height": plot}
    height = plot + _still_frame_height(still["width"], params)
    return {**spec, "width": NARROW_STATIC_WIDTH_PX, "height": height,
            "usermeta": {**spec["usermeta"], "ainotes": {**meta, "still": still}}}


def spec_meta(spec: dict[str, Any]) -> dict[str, Any] | None:
    """What the page needs beyond the picture (roofs, kernels' cells, dtypes), or None if not a roofline."""
    meta = spec.get("usermeta", {}).get("ainotes")
    return meta if isinstance(meta, dict) and meta.get("kind") == "roofline" else None
