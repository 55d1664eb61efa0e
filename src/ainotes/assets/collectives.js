/* Collective-communication steppers (ainotes).
 *
 * Progressive enhancement: without this script every frame of a
 * `.ainotes-stepper` is listed in order. With it, one frame shows at a time,
 * with Previous / Play / Next buttons, a "Frame k of n" counter, Left/Right
 * (and Home/End) keys while the stepper has focus, and the caption in an
 * aria-live="polite" region.
 *
 * Play never starts by itself. It advances one frame every 1.8 s and stops
 * on the final state. Under prefers-reduced-motion: reduce, Play still steps
 * (each step is a discrete change, no movement) and the CSS fade between
 * frames is switched off (see collectives.css).
 *
 * A stepper that carries its data (<template class="ainotes-stepper-data">,
 * written by ainotes.charts.collective.stepper_data) also gets a rank-count
 * select (2 to 8) and, for all-reduce, reduce-scatter and all-gather, a
 * schedule select (one logical exchange, or the ring step by step with the
 * chunks each link has carried). The frames it then shows are drawn here with
 * the geometry and CSS classes of ainotes.charts.collective.frame_svg.
 *
 * Idempotent: a stepper is enhanced once (data-ainotes-ready). The script
 * sits after the steppers in the page, so it enhances them as soon as it runs,
 * before the browser paints the full list; it runs again on every page that
 * Material's instant navigation loads (document$).
 */
(function () {
  "use strict";

  var STEP_MS = 1800;

  function button(label, action) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "ainotes-stepper-" + action;
    b.setAttribute("data-action", action);
    b.textContent = label;
    return b;
  }


  // --- drawing, as ainotes.charts.collective.frame_svg does -------------------------------------

  var SVG_NS = "http://www.w3.org/2000/svg";

  function esc(text) {
    return String(text).replace(/&/g, "&amp;").replace(/[<]/g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }

  function num(value) {
    return String(Math.round(value * 10) / 10);
  }

  function decode(code) {
    // index × 256 + one bit per contributing rank
    var sources = [];
    for (var r = 0; r < 8; r++) if (code & (1 << r)) sources.push(r);
    return { index: Math.floor(code / 256), sources: sources };
  }

  function layout(g, ranks, ring) {
    var gap = Math.min(10 + 4 * (ranks - 1), g.gap_max);
    var step = Math.min(4, (gap - 6) / Math.max(1, ranks - 1));
    var ringX = g.pad + g.label_w + ranks * (g.box_w + gap);
    return {
      gap: gap,
      ringX: ringX,
      width: ringX + (ring ? g.ring_w : 0) + g.pad - 4,
      gridHeight: g.header_h + ranks * g.row_pitch - (g.row_pitch - g.box_h),
      arcApex: function (span) { return 4 + step * span; },
      boxX: function (c) { return g.pad + g.label_w + c * (g.box_w + gap); },
      boxY: function (r, top) { return top + g.header_h + r * g.row_pitch; }
    };
  }

  function boxLabel(g, chunk) {
    var parts = chunk.sources.map(function (r) { return g.letters[r] + chunk.index; });
    if (parts.length === 1) return parts;
    if (parts.length > g.full_sum_parts) {
      var first = chunk.sources[0], last = chunk.sources[chunk.sources.length - 1];
      if (last - first === chunk.sources.length - 1) return ["Σ " + parts[0] + "…" + parts[parts.length - 1]];
      var gaps = [];
      for (var i = 1; i < chunk.sources.length; i++) if (chunk.sources[i] !== chunk.sources[i - 1] + 1) gaps.push(i);
      if (gaps.length === 1 && first === 0) return ["Σ " + parts[gaps[0]] + "…" + parts[gaps[0] - 1]];
      return ["Σ " + chunk.sources.map(function (r) { return g.letters[r]; }).join(""), "chunk " + chunk.index];
    }
    if (parts.length <= 2) return [parts.join("+")];
    var half = Math.ceil(parts.length / 2);
    return [parts.slice(0, half).join("+") + "+", parts.slice(half).join("+")];
  }

  function box(g, L, r, c, code, top, pid) {
    var x = L.boxX(c), y = L.boxY(r, top);
    var rect = 'x="' + num(x) + '" y="' + num(y) + '" width="' + g.box_w + '" height="' + g.box_h + '" rx="4"';
    if (code === null) return '<rect class="n" ' + rect + "/>";
    var chunk = decode(code), lines = boxLabel(g, chunk), cx = num(x + g.box_w / 2);
    var sum = chunk.sources.length > 1, lift = sum ? 2 : 0, text;
    if (lines.length === 1) {
      text = '<text x="' + cx + '" y="' + num(y + g.box_h / 2 + 4 - lift) + '">' + esc(lines[0]) + "</text>";
    } else {
      text = '<text x="' + cx + '" y="' + num(y + g.box_h / 2 - 2.5 - lift) + '">' + esc(lines[0]) +
        '<tspan x="' + cx + '" dy="12">' + esc(lines[1]) + "</tspan></text>";
    }
    if (!sum) return '<rect class="k c' + chunk.sources[0] + '" ' + rect + "/>" + text;
    var stripe = '<rect x="' + num(x + 4) + '" y="' + num(y + g.box_h - 6) + '" width="' + (g.box_w - 8) +
      '" height="3" fill="url(#' + pid + "g" + chunk.sources.join("") + ')"/>';
    return '<rect class="k s" ' + rect + "/>" + text + stripe;
  }

  function edge(g, cx, cy, vx, vy) {
    var scale = Math.min(vx ? (g.box_w / 2) / Math.abs(vx) : Infinity, vy ? (g.box_h / 2) / Math.abs(vy) : Infinity);
    return [cx + vx * scale, cy + vy * scale];
  }

  function arrow(g, L, t, top, pid) {
    var src = t[0], dst = t[1], sc = t[2], dc = t[3], marker = ' marker-end="url(#' + pid + 'a)"', d;
    if (sc === dc) {
      var down = dst > src, span = Math.abs(dst - src), right = L.boxX(sc) + g.box_w;
      var srcY = L.boxY(src, top) + g.box_h / 2, dstY = L.boxY(dst, top) + g.box_h / 2;
      var offset = Math.min(4 + 3 * (span - 1), g.box_h / 2 - 4);
      var sy = down ? srcY + offset : srcY - offset, ey = down ? dstY - offset : dstY + offset;
      var bulge = 2 * L.arcApex(span);
      d = "M" + num(right) + " " + num(sy) + "Q" + num(right + bulge) + " " + num((sy + ey) / 2) + " " +
        num(right + 1) + " " + num(ey);
      return '<path class="t" d="' + d + '"' + marker + "/>";
    }
    var sx = L.boxX(sc) + g.box_w / 2, syy = L.boxY(src, top) + g.box_h / 2;
    var dx = L.boxX(dc) + g.box_w / 2, dy = L.boxY(dst, top) + g.box_h / 2;
    var vx = dx - sx, vy = dy - syy, p0 = edge(g, sx, syy, vx, vy), p1 = edge(g, dx, dy, -vx, -vy);
    var length = Math.sqrt(vx * vx + vy * vy), bend = 0.16 * length;
    var qx = (p0[0] + p1[0]) / 2 - vy / length * bend, qy = (p0[1] + p1[1]) / 2 + vx / length * bend;
    d = "M" + num(p0[0]) + " " + num(p0[1]) + "Q" + num(qx) + " " + num(qy) + " " + num(p1[0]) + " " + num(p1[1]);
    return '<path class="t" d="' + d + '"' + marker + "/>";
  }

  function sumSets(variant) {
    var seen = {};
    variant.frames.forEach(function (frame) {
      frame.chunks.forEach(function (row) {
        row.forEach(function (code) {
          if (code === null) return;
          var chunk = decode(code);
          if (chunk.sources.length > 1) seen[chunk.sources.join("")] = chunk.sources;
        });
      });
    });
    return Object.keys(seen).sort().map(function (key) { return seen[key]; });
  }

  function defs(variant, pid) {
    var parts = ['<marker id="' + pid + 'a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" ' +
      'markerHeight="6" orient="auto"><path class="ah" d="M0 1L10 5L0 9z"/></marker>'];
    sumSets(variant).forEach(function (sources) {
      var stops = sources.map(function (rank, i) {
        var lo = Number((i / sources.length).toPrecision(3)), hi = Number(((i + 1) / sources.length).toPrecision(3));
        return '<stop offset="' + lo + '" class="c' + rank + '"/><stop offset="' + hi + '" class="c' + rank + '"/>';
      });
      parts.push('<linearGradient id="' + pid + "g" + sources.join("") + '">' + stops.join("") + "</linearGradient>");
    });
    return "<defs>" + parts.join("") + "</defs>";
  }

  function rankName(g, r) {
    var name = "rank " + r;
    return name.length <= g.name_chars ? name : name.slice(0, g.name_chars - 1) + "…";
  }

  function header(g, L, variant, ring, top) {
    var parts = ['<text class="m" x="' + g.pad + '" y="' + num(top + 11) + '">chunk</text>'];
    for (var c = 0; c < variant.ranks; c++) {
      parts.push('<text class="m" x="' + num(L.boxX(c) + g.box_w / 2) + '" y="' + num(top + 11) +
        '" text-anchor="middle">' + c + "</text>");
    }
    if (ring) parts.push('<text class="m" x="' + num(L.ringX) + '" y="' + num(top + 11) + '">sent on</text>');
    for (var r = 0; r < variant.ranks; r++) {
      var y = L.boxY(r, top) + g.box_h / 2;
      if (r === variant.root) {
        parts.push('<text x="' + g.pad + '" y="' + num(y - 2) + '">' + esc(rankName(g, r)) + "</text>");
        parts.push('<text class="rt" x="' + g.pad + '" y="' + num(y + 11) + '">root</text>');
      } else {
        parts.push('<text x="' + g.pad + '" y="' + num(y + 4) + '">' + esc(rankName(g, r)) + "</text>");
      }
    }
    return parts.join("");
  }

  function holdings(g, frame) {
    return frame.chunks.map(function (row, r) {
      var held = row.filter(function (code) { return code !== null; })
        .map(function (code) { var ch = decode(code); return ch.sources.map(function (s) { return g.letters[s] + ch.index; }).join("+"); });
      return "rank " + r + (held.length ? " holds " + held.join(", ") + "." : " holds nothing.");
    }).join(" ");
  }

  function frameSvg(data, variant, index, pid) {
    var g = data.geometry, ring = variant.schedule === "ring", L = layout(g, variant.ranks, ring);
    var frame = variant.frames[index], top = g.pad, height = g.pad + L.gridHeight + g.pad;
    var body = [];
    frame.chunks.forEach(function (row, r) {
      row.forEach(function (code, c) { body.push(box(g, L, r, c, code, top, pid)); });
    });
    frame.transfers.forEach(function (t) { body.push(arrow(g, L, t, top, pid)); });
    if (ring && frame.sent) {
      frame.sent.forEach(function (k, r) {
        body.push('<text class="lc" x="' + num(L.ringX) + '" y="' + num(L.boxY(r, top) + g.box_h / 2 + 4) + '">' +
          k + " × S/" + variant.ranks + "</text>");
      });
    }
    return '<svg xmlns="' + SVG_NS + '" class="ainotes-coll" viewBox="0 0 ' + num(L.width) + " " + num(height) +
      '" width="' + num(L.width) + '" height="' + num(height) +
      '" role="img" aria-labelledby="' + pid + "t " + pid + 'd">' +
      '<title id="' + pid + 't">' + esc(variant.title + ", step " + (index + 1) + " of " + variant.frames.length) +
      "</title>" + '<desc id="' + pid + 'd">' + esc(frame.caption + " " + holdings(g, frame)) + "</desc>" +
      defs(variant, pid) + header(g, L, variant, ring, top) + body.join("") + "</svg>";
  }

  function frameItems(data, variant, prefix) {
    var count = variant.frames.length;
    return variant.frames.map(function (frame, i) {
      var li = document.createElement("li");
      li.className = "ainotes-stepper-frame";
      li.innerHTML = '<figure class="ainotes-stepper-figure">' + frameSvg(data, variant, i, prefix + "-" + i + "-") +
        '<figcaption><span class="ainotes-step-no">Frame ' + (i + 1) + " of " + count + ".</span> " +
        '<span class="ainotes-step-caption">' + esc(frame.caption) + "</span></figcaption></figure>";
      return li;
    });
  }

  function readData(root) {
    var template = root.querySelector("template.ainotes-stepper-data");
    if (!template) return null;
    try { return JSON.parse(template.content ? template.content.textContent : template.textContent); }
    catch (error) { return null; }
  }

  function select(label, name, options, value) {
    var wrap = document.createElement("label");
    wrap.className = "ainotes-stepper-option";
    wrap.appendChild(document.createTextNode(label + " "));
    var s = document.createElement("select");
    s.setAttribute("data-control", name);
    options.forEach(function (option) {
      var o = document.createElement("option");
      o.value = option[0];
      o.textContent = option[1];
      if (option[0] === value) o.selected = true;
      s.appendChild(o);
    });
    wrap.appendChild(s);
    return wrap;
  }

  // The before/after table beside a stepper follows the rank count the reader picked.
  function showTable(root, ranks) {
    var tables = root.querySelector("template.ainotes-stepper-tables");
    var shown = root.parentNode && root.parentNode.querySelector(":scope > .ainotes-coll-table-wrap");
    if (!tables || !shown || shown.getAttribute("data-ranks") === ranks) return;
    var wanted = (tables.content || tables).querySelector('.ainotes-coll-table-wrap[data-ranks="' + ranks + '"]');
    if (wanted) shown.parentNode.replaceChild(wanted.cloneNode(true), shown);
  }

  function enhance(root) {
    if (root.hasAttribute("data-ainotes-ready")) return;
    var frames = Array.prototype.slice.call(root.querySelectorAll(".ainotes-stepper-frame"));
    if (frames.length < 2) return;
    root.setAttribute("data-ainotes-ready", "");
    if (!root.hasAttribute("tabindex")) root.setAttribute("tabindex", "0");

    var captions, count, current = 0, timer = null;
    function readCaptions() {
      captions = frames.map(function (frame) {
        var c = frame.querySelector(".ainotes-step-caption") || frame.querySelector("figcaption");
        return c ? c.textContent.trim() : "";
      });
      count = frames.length;
    }
    readCaptions();

    var controls = document.createElement("div");
    controls.className = "ainotes-stepper-controls";
    var prev = button("◀ Previous", "prev");
    var play = button("Play ▶", "play");
    play.setAttribute("aria-pressed", "false");
    var next = button("Next ▶", "next");
    var counter = document.createElement("span");
    counter.className = "ainotes-stepper-counter";
    counter.setAttribute("aria-hidden", "true");
    controls.appendChild(prev);
    controls.appendChild(play);
    controls.appendChild(next);
    controls.appendChild(counter);

    var live = document.createElement("p");
    live.className = "ainotes-stepper-live";
    // A frame is drawn at its own size; one wider than the column scrolls, and says so.
    var hint = document.createElement("p");
    hint.className = "ainotes-stepper-hint";
    hint.textContent = "Wider than the screen: scroll the picture sideways to see every chunk.";
    hint.hidden = true;

    function render() {
      frames.forEach(function (frame, i) { frame.hidden = i !== current; });
      var shown = frames[current].querySelector(".ainotes-stepper-figure");
      var scrolls = !!shown && shown.scrollWidth > shown.clientWidth + 1;
      hint.hidden = !scrolls;
      // A box that scrolls takes focus, so a keyboard can scroll it (its arrows then scroll, not step).
      if (shown && scrolls) shown.setAttribute("tabindex", "0");
      else if (shown) shown.removeAttribute("tabindex");
      prev.disabled = current === 0;
      next.disabled = current === count - 1;
      counter.textContent = "Frame " + (current + 1) + " of " + count;
      live.textContent = "Frame " + (current + 1) + " of " + count + ": " + captions[current];
    }

    function stop() {
      if (timer !== null) window.clearInterval(timer);
      timer = null;
      play.textContent = "Play ▶";
      play.setAttribute("aria-pressed", "false");
    }

    function go(index) {
      current = Math.max(0, Math.min(count - 1, index));
      root.setAttribute("data-ainotes-moved", "");
      var focused = document.activeElement;
      render();
      // A button that just became disabled drops keyboard focus: hand it to its partner.
      if (focused && focused.disabled && controls.contains(focused)) {
        (focused === prev ? next : prev).focus();
      }
    }

    function tick() {
      if (!root.isConnected || current >= count - 1) { stop(); return; }
      go(current + 1);
      if (current >= count - 1) stop();
    }

    function toggle() {
      if (timer !== null) { stop(); return; }
      if (current >= count - 1) go(0);
      play.textContent = "Pause ❚❚";
      play.setAttribute("aria-pressed", "true");
      timer = window.setInterval(tick, STEP_MS);
    }

    prev.addEventListener("click", function () { stop(); go(current - 1); });
    next.addEventListener("click", function () { stop(); go(current + 1); });
    play.addEventListener("click", toggle);
    root.addEventListener("keydown", function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.target !== root && event.target.classList.contains("ainotes-stepper-figure")) return;
      var target = { ArrowLeft: current - 1, ArrowRight: current + 1, Home: 0, End: count - 1 }[event.key];
      if (target === undefined) return;
      event.preventDefault();
      stop();
      go(target);
    });

    render();
    // Below the picture, so enhancing never moves the first frame down.
    var list = frames[0].parentNode;
    list.parentNode.insertBefore(controls, list.nextSibling);
    list.parentNode.insertBefore(hint, controls);
    render();

    var data = readData(root);
    if (data && data.variants[data.initial]) {
      var state = data.initial.split("-");
      var options = document.createElement("div");
      options.className = "ainotes-stepper-options";
      var ranksOptions = [];
      for (var n = 2; n <= 8; n++) if (data.variants[state[0] + "-" + n]) ranksOptions.push([String(n), String(n)]);
      options.appendChild(select("Ranks", "ranks", ranksOptions, state[1]));
      if (data.variants["ring-" + state[1]]) {
        options.appendChild(select("Schedule", "schedule",
          [["logical", "one logical exchange"], ["ring", "ring, step by step"]], state[0]));
      }
      options.addEventListener("change", function () {
        var ranks = options.querySelector('[data-control="ranks"]').value;
        var schedule = options.querySelector('[data-control="schedule"]');
        var key = (schedule ? schedule.value : "logical") + "-" + ranks;
        var variant = data.variants[key];
        if (!variant) return;
        stop();
        frames = frameItems(data, variant, root.id + "-" + key);
        while (list.firstChild) list.removeChild(list.firstChild);
        frames.forEach(function (li) { list.appendChild(li); });
        root.setAttribute("data-frames", String(frames.length));
        root.setAttribute("data-variant", key);
        root.setAttribute("aria-label", variant.title);
        readCaptions();
        current = 0;
        render();
        showTable(root, ranks);
      });
      controls.parentNode.insertBefore(options, controls.nextSibling);
    }
    root.appendChild(live);
    // Set after the first caption is in place, so that only changes are announced.
    live.setAttribute("aria-live", "polite");
  }

  function enhanceAll() {
    var roots = document.querySelectorAll(".ainotes-stepper");
    for (var i = 0; i < roots.length; i++) enhance(roots[i]);
  }

  enhanceAll();
  if (window.__ainotesSteppers) return; // instant navigation ran this file again
  window.__ainotesSteppers = true;

  function follow() {
    if (window.document$ && typeof window.document$.subscribe === "function") {
      window.document$.subscribe(enhanceAll);
    }
  }
  // Material's bundle (and document$) loads after the page content.
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", follow);
  } else {
    follow();
  }
})();
