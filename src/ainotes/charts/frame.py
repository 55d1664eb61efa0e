"""A standalone chart page in another site's ``<iframe>``: the page tells its host how tall it is.

A frame cannot size itself to its content, and the content's height depends on the width
the host gives it (the explorer's controls wrap, a phone gets a taller plot). So every
standalone page (:func:`ainotes.html.embed.standalone_html`,
:func:`ainotes.charts.collective.standalone_html`) runs :data:`HEIGHT_POSTER_JS`, which
posts ``{ainotesHeight: <CSS px>}`` to its parent whenever its height changes, and the
embed snippet carries :data:`HOST_LISTENER_HTML`, which sets the height of the frame
the message came from (and of no other element). The message holds one number; the
listener accepts a positive one, at most :data:`MAX_FRAME_HEIGHT_PX`, from a frame marked
with :data:`FRAME_ATTRIBUTE` only. Without the listener (a host that strips scripts) the
frame keeps the snippet's fallback height and scrolls inside itself.
"""

from __future__ import annotations

FRAME_ATTRIBUTE = "data-ainotes-embed"
MAX_FRAME_HEIGHT_PX = 20_000
MESSAGE_KEY = "ainotesHeight"

# The standalone page's side: its body's height (margins are 0), once at load and on every resize.
HEIGHT_POSTER_JS = (
    "(function () {\n"
    "  if (window.parent === window) return;\n"
    "  var last = 0;\n"
    "  function post() {\n"
    "    var height = Math.ceil(document.body.getBoundingClientRect().height);\n"
    "    if (height === last) return;\n"
    "    last = height;\n"
    f'    window.parent.postMessage({{{MESSAGE_KEY}: height}}, "*");\n'
    "  }\n"
    "  if (window.ResizeObserver) new ResizeObserver(post).observe(document.body);\n"
    '  window.addEventListener("load", post);\n'
    "  post();\n"
    "})();\n"
)

# The host's side, one line in the snippet (several copies on one page do no harm).
HOST_LISTENER_HTML = (
    '<script>addEventListener("message",function(e){'
    f"var h=e.data&&Number(e.data.{MESSAGE_KEY});if(!(h>0))return;"
    f'document.querySelectorAll("iframe[{FRAME_ATTRIBUTE}]").forEach(function(f){{'
    f'if(f.contentWindow===e.source)f.style.height=Math.min(Math.ceil(h),{MAX_FRAME_HEIGHT_PX})+"px"}})}})</script>'
)

# The frame's height before (or without) the listener: what each kind's standalone page takes in a
# 700 px column, measured in Chromium on the notes' own charts (the site's embed/*.html, fonts
# loaded), rounded up to 20 px; a roofline's grows with its kernels' table (about 2,100 to 3,100 px
# there): its frame takes the middle one and scrolls inside itself for a longer table.
FALLBACK_HEIGHT_PX = {"roofline": 2420, "collective-cost": 820, "collective": 740, "inference": 860,
                      "training-memory": 980}
DEFAULT_FALLBACK_HEIGHT_PX = 860
