/* Live Vega views for the notes' charts (markup: ainotes/charts/embed.py and charts/roofline.py).
 *
 * Each <figure class="ainotes-chart"> holds two static SVGs (light, dark) and the two
 * compiled Vega specs. This script renders the spec for the reader's colour scheme into
 * the figure's box with the Vega-only runtime (window.vega, from vega.min.js), hides the
 * static SVG only once the view has rendered, re-renders when the reader flips
 * data-md-color-scheme (keeping the reader's choices), and runs again after Material's
 * instant navigation (document$).
 *
 * A roofline figure also holds a form (the explorer's controls). Its values become the
 * view's input signals; every number the form then shows is one the chart computed from them
 * with the core's own formulas (see "the explorer's form" below): this file holds none.
 * The form's code is keyed by its figure, so another page (a standalone embed) can reuse it.
 */
(function () {
  "use strict";
  if (window.__ainotesVegaCharts) {
    window.__ainotesVegaCharts.renderAll();
    return;
  }

  var live = []; // {figure, view, scheme, pending, state}

  function scheme() {
    var body = document.body;
    return body && body.getAttribute("data-md-color-scheme") === "slate" ? "dark" : "light";
  }

  function specFor(figure, which) {
    var node = figure.querySelector('template.ainotes-chart__spec[data-scheme="' + which + '"]');
    return node ? JSON.parse(node.content ? node.content.textContent : node.textContent) : null;
  }

  function boundSignals(spec) {
    return (spec.signals || []).filter(function (s) { return s.bind; }).map(function (s) { return s.name; });
  }

  function entryFor(figure) {
    for (var i = 0; i < live.length; i += 1) {
      if (live[i].figure === figure) return live[i];
    }
    return null;
  }

  // -- the explorer's form ---------------------------------------------------------------------
  //
  // Every number the form shows comes from the chart: the page sets the view's input signals
  // (the roof, the GPUs, the reader's typed figures) and reads back what the chart's own
  // expressions made of them (charts/roofline.py writes them from the core's formulas): the
  // headings from signals, one line per GPU from the rows of the layers that draw the marks.
  // What the script adds is words the core wrote at build time (why a GPU draws nothing).

  var TEXT_FIELDS = ["readout_text", "own_text", "batch_text", "cross_text"];

  // The compiled datasets whose rows hold each text field (a formula's "as" in the Vega spec).
  function textDatasets(spec) {
    var found = {};
    (spec.data || []).forEach(function (data) {
      (data.transform || []).forEach(function (t) {
        if (t.type === "formula" && TEXT_FIELDS.indexOf(t.as) >= 0) found[t.as] = data.name;
      });
    });
    return found;
  }

  function rowsWith(entry, field) {
    var name = entry.dataNames && entry.dataNames[field];
    if (!entry.view || !name) return [];
    try { return entry.view.data(name) || []; } catch (e) { return []; }
  }

  function initialState(form) {
    var kmode = form.elements.kmode;
    return {
      precision: form.elements.precision.value,
      preset: form.elements.preset.value,
      sparsity: form.elements.sparsity.checked,
      kmode: kmode ? kmode.value : "own",
      intensity: parseFloat(form.elements.intensity.value),
      own: null,
      batch: null
    };
  }

  function parseNumber(text) {
    var cleaned = String(text).trim().replace(/[,_\s]/g, "");
    if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(cleaned)) return NaN;
    return Number(cleaned);
  }

  function setMessage(form, role, text) {
    var node = form.querySelector('[data-role="' + role + '"]');
    if (node) node.textContent = text || "";
  }

  function list(items) {
    var ul = document.createElement("ul");
    items.forEach(function (text) {
      var li = document.createElement("li");
      li.textContent = text;
      ul.appendChild(li);
    });
    return ul;
  }

  function fill(node, heading, items) {
    if (!node) return;
    node.textContent = "";
    if (heading) {
      var p = document.createElement("p");
      p.textContent = heading;
      node.appendChild(p);
    }
    if (items && items.length) node.appendChild(list(items));
  }

  function visibleIds(entry) {
    var preset = entry.state.preset;
    return entry.meta.ids.filter(function (id) { return preset === "*" || id === preset; });
  }

  function lacks(entry, id, roof) {
    var missing = (entry.meta.missing || {})[roof] || {};
    return Object.prototype.hasOwnProperty.call(missing, id) ? missing[id] : null;
  }

  // One line per GPU shown: the chart's row for it, or why it has none (in the core's words).
  function gpuLines(entry, field, markRoof, extraField) {
    var meta = entry.meta, shown = entry.state.precision;
    var byId = {};
    rowsWith(entry, field).forEach(function (row) { byId[row.p] = row; });
    var lines = [];
    visibleIds(entry).forEach(function (id) {
      var row = byId[id];
      if (row) {
        lines.push(row[field]);
        if (extraField && row[extraField]) lines.push(row[extraField]);
        return;
      }
      var why = lacks(entry, id, shown);
      if (why !== null) lines.push(meta.names[id] + ": not drawn (" + why + ")");
      else if (markRoof) lines.push(meta.names[id] + ": unsupported, " + (lacks(entry, id, markRoof) || "no such path"));
    });
    return lines;
  }

  function updateReadouts(entry) {
    var form = entry.form, state = entry.state, meta = entry.meta, view = entry.view;
    var lacking = visibleIds(entry).filter(function (id) { return lacks(entry, id, state.precision) !== null; })
      .map(function (id) { return meta.names[id] + ": " + lacks(entry, id, state.precision); });
    form.querySelector('[data-role="missing"]').textContent = lacking.length
      ? "Not drawn at " + meta.roof_names[state.precision] + ": " + lacking.join("; ") + "." : "";
    if (!view) return;
    fill(form.querySelector('[data-role="readout"]'), view.signal("readout_heading"), gpuLines(entry, "readout_text"));
    fill(form.querySelector('[data-role="own"]'), state.own ? view.signal("own_heading") : "",
         state.own ? gpuLines(entry, "own_text", state.own.roof || state.precision) : []);
    fill(form.querySelector('[data-role="batch"]'), state.batch ? view.signal("batch_heading") : "",
         state.batch ? gpuLines(entry, "batch_text", state.batch.roof, "cross_text") : []);
    updateTable(entry);
  }

  // The kernels' table follows the kernels' mode and the GPU select; its texts are the core's.
  function updateTable(entry) {
    var table = entry.figure.querySelector("table.ainotes-kernel-bounds");
    if (!table || !entry.view) return;
    var state = entry.state, meta = entry.meta;
    var mode = state.kmode === "own" ? "own" : state.precision;
    var rows = [];
    try { rows = entry.view.data("kernels") || []; } catch (e) { rows = []; }
    var cells = {};
    rows.forEach(function (row) {
      if (row.m.indexOf(" " + mode + " ") >= 0) cells[row.k + "|" + row.p] = row;
    });
    var kernels = {};
    (meta.kernels || []).forEach(function (k) { kernels[k.n] = k.modes[mode] || k.modes.own; });
    Array.prototype.forEach.call(table.querySelectorAll("td[data-k]"), function (td) {
      var row = cells[td.getAttribute("data-k") + "|" + td.getAttribute("data-p")];
      var info = kernels[td.getAttribute("data-k")];
      td.textContent = row ? row.tx : (info.why[td.getAttribute("data-p")] || "");
      td.className = "ainotes-kb ainotes-kb--" + (row ? row.b : "unsupported");
    });
    Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (tr, index) {
      var info = kernels[index + 1];
      if (!info) return;
      tr.querySelector('[data-role="kernel-label"]').textContent = info.label;
      tr.querySelector('[data-role="kernel-intensity"]').textContent = info.intensity_text;
    });
    Array.prototype.forEach.call(table.querySelectorAll("[data-p]"), function (cell) {
      cell.hidden = !(state.preset === "*" || cell.getAttribute("data-p") === state.preset);
    });
    var words = table.querySelector('[data-role="kernel-mode"]');
    if (words) words.textContent = state.kmode === "own" ? "own data type"
      : "data type re-typed to " + meta.roof_names[state.precision];
  }

  function applyState(entry, view) {
    var state = entry.state;
    view.signal("precision", state.precision);
    view.signal("preset", state.preset);
    view.signal("sparsity", state.sparsity);
    view.signal("kmode", state.kmode);
    view.signal("intensity", state.intensity);
    view.signal("readout_on", true);
    var own = state.own;
    view.signal("own_on", !!own);
    if (own) {
      view.signal("own_kind", own.kind);
      view.signal("own_roof", own.kind === "gemm" ? own.roof : state.precision);
      if (own.kind === "gemm") {
        view.signal("own_m", own.m); view.signal("own_n", own.n); view.signal("own_k", own.k);
        view.signal("own_s", own.bytes); view.signal("own_dtype", own.dtype);
      } else {
        view.signal("own_typed_x", own.x);
      }
    }
    var batch = state.batch;
    view.signal("batch_on", !!batch);
    if (batch) {
      view.signal("batch_tokens", batch.tokens); view.signal("batch_d", batch.d);
      view.signal("batch_s", batch.bytes); view.signal("batch_dtype", batch.dtype);
      view.signal("batch_roof", batch.roof);
    }
  }

  // Set the view to the state and show what it computed; resolves once the readouts are filled.
  function redraw(entry) {
    if (!entry.view) { updateReadouts(entry); return Promise.resolve(); }
    var view = entry.view;
    applyState(entry, view);
    // Twice: a legend whose entries changed is laid out on the pass after (Vega places the
    // legends around the plot from their sizes as the previous pass left them).
    var done = view.runAsync().then(function () { return view.runAsync(); })
      .then(function () { if (entry.view === view) updateReadouts(entry); });
    entry.settled = (entry.settled || Promise.resolve()).then(function () { return done; });
    return done;
  }

  // Try a reader's mark: keep it if the chart puts it on its axis, else restore the one before.
  function tryMark(entry, which, mark, role) {
    var previous = entry.state[which];
    entry.state[which] = mark;
    return redraw(entry).then(function () {
      var view = entry.view;
      if (view && view.signal(which + "_off_axis")) {
        var where = view.signal(which + "_x_text");
        entry.state[which] = previous;
        setMessage(entry.form, role, "That lands at " + where + ", off this chart's axis (" + entry.meta.axis_text
                   + "). The chart is unchanged.");
        return redraw(entry);
      }
      setMessage(entry.form, role, "");
      return null;
    });
  }

  function placeGemm(entry) {
    var form = entry.form, meta = entry.meta;
    var dims = {};
    var names = ["m", "n", "k"];
    for (var i = 0; i < names.length; i += 1) {
      var text = form.elements[names[i]].value, value = parseNumber(text);
      if (!(Number.isInteger(value) && value >= 1 && value <= meta.max_dimension)) {
        setMessage(form, "own-message", "GEMM " + names[i].toUpperCase() + " must be a whole number from 1 to "
                   + meta.max_dimension.toLocaleString("en-US") + ": " + JSON.stringify(text)
                   + ". The chart is unchanged.");
        return Promise.resolve();
      }
      dims[names[i]] = value;
    }
    var dtype = form.elements.dtype.value;
    var info = meta.dtypes[dtype];
    if (!info) {
      setMessage(form, "own-message", "Unknown data type " + JSON.stringify(dtype) + ". The chart is unchanged.");
      return Promise.resolve();
    }
    return tryMark(entry, "own", {kind: "gemm", m: dims.m, n: dims.n, k: dims.k, dtype: dtype, bytes: info.bytes,
                                  roof: info.roof}, "own-message");
  }

  function placeIntensity(entry) {
    var form = entry.form;
    var text = form.elements.own_intensity.value;
    var value = parseNumber(text);
    if (!(value > 0) || !isFinite(value)) {
      setMessage(form, "own-message", "The intensity must be a number of FLOP/byte above 0: " + JSON.stringify(text)
                 + ". The chart is unchanged.");
      return Promise.resolve();
    }
    return tryMark(entry, "own", {kind: "intensity", x: value}, "own-message");
  }

  function updateBatch(entry) {
    var form = entry.form, meta = entry.meta, state = entry.state;
    var tokens = Math.pow(2, parseInt(form.elements.batch.value, 10));
    form.elements.batch_tokens.value = String(tokens);
    if (!form.elements.batch_on.checked) {
      state.batch = null;
      setMessage(form, "batch-message", "");
      return redraw(entry);
    }
    var text = form.elements.d_model.value, d = parseNumber(text);
    if (!(Number.isInteger(d) && d >= 1 && d * meta.ffn_factor <= meta.max_dimension)) {
      setMessage(form, "batch-message", "d_model must be a whole number from 1 to "
                 + Math.floor(meta.max_dimension / meta.ffn_factor).toLocaleString("en-US") + ": "
                 + JSON.stringify(text) + ". The chart is unchanged.");
      return Promise.resolve();
    }
    // The projection runs in the precision shown, where that is a data type; BF16 otherwise.
    var dtype = state.precision.split(":")[1];
    if (!meta.dtypes[dtype]) dtype = "bf16";
    var info = meta.dtypes[dtype];
    return tryMark(entry, "batch", {tokens: tokens, d: d, dtype: dtype, bytes: info.bytes, roof: info.roof},
                   "batch-message");
  }

  // The typed intensity: a number on the axis, or a message and the chart left as it is.
  function readIntensity(entry) {
    var form = entry.form, els = form.elements, meta = entry.meta;
    var text = els.intensity.value, value = parseNumber(text);
    var domain = meta.x_domain;
    if (!(value > 0) || !isFinite(value)) {
      setMessage(form, "intensity-message", "Type a number of FLOP/byte above 0 (e.g. 300): "
                 + JSON.stringify(text) + ". The chart is unchanged.");
      return Promise.resolve();
    }
    if (value < domain[0] || value > domain[1]) {
      setMessage(form, "intensity-message", "The axis runs from " + meta.axis_text + ": "
                 + JSON.stringify(text) + ". The chart is unchanged.");
      return Promise.resolve();
    }
    setMessage(form, "intensity-message", "");
    entry.state.intensity = value;
    els.log_intensity.value = String(Math.log10(value));
    return redraw(entry);
  }

  function debounced(entry, key, callback) {
    entry.timers = entry.timers || {};
    clearTimeout(entry.timers[key]);
    entry.timers[key] = setTimeout(callback, entry.meta.debounce_ms || 250);
  }

  function wire(entry) {
    var form = entry.form;
    if (form.hasAttribute("data-ainotes-wired")) return;
    form.setAttribute("data-ainotes-wired", "");
    var els = form.elements;

    els.precision.addEventListener("change", function () {
      entry.state.precision = els.precision.value;
      if (entry.state.batch) updateBatch(entry); else redraw(entry);
    });
    els.preset.addEventListener("change", function () { entry.state.preset = els.preset.value; redraw(entry); });
    els.sparsity.addEventListener("change", function () { entry.state.sparsity = els.sparsity.checked; redraw(entry); });
    if (els.kmode) {
      els.kmode.addEventListener("change", function () { entry.state.kmode = els.kmode.value; redraw(entry); });
    }
    els.log_intensity.addEventListener("input", function () {
      entry.state.intensity = Math.pow(10, parseFloat(els.log_intensity.value));
      setMessage(form, "intensity-message", "");
      // The field beside the slider shows the value as the chart writes it.
      redraw(entry).then(function () { if (entry.view) els.intensity.value = entry.view.signal("intensity_field"); });
    });
    // As the reader types (after a pause), on leaving the field, and on Enter.
    els.intensity.addEventListener("input", function () { debounced(entry, "intensity", function () { readIntensity(entry); }); });
    els.intensity.addEventListener("change", function () { readIntensity(entry); });
    els.d_model.addEventListener("input", function () { debounced(entry, "d_model", function () { updateBatch(entry); }); });
    ["batch_on", "batch"].forEach(function (name) {
      els[name].addEventListener("input", function () { updateBatch(entry); });
    });

    // Enter acts on the field it is in (a form's implicit submission would press its first button).
    var onEnter = {intensity: function () { readIntensity(entry); },
                   own_intensity: function () { setMessage(form, "own-message", ""); placeIntensity(entry); },
                   m: function () { placeGemm(entry); }, n: function () { placeGemm(entry); },
                   k: function () { placeGemm(entry); }, d_model: function () { updateBatch(entry); }};
    form.addEventListener("keydown", function (event) {
      var target = event.target;
      if (event.key !== "Enter" || !target || !onEnter[target.name]) return;
      event.preventDefault();
      if (entry.timers) clearTimeout(entry.timers[target.name]);
      onEnter[target.name]();
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var which = event.submitter ? event.submitter.value : null;
      if (which === "intensity") placeIntensity(entry);
      else if (which === "gemm") placeGemm(entry);
    });
    form.querySelector('[data-action="clear"]').addEventListener("click", function () {
      entry.state.own = null;
      setMessage(form, "own-message", "");
      redraw(entry);
    });
    form.hidden = false;
    redraw(entry).then(function () { form.setAttribute("data-ainotes-ready", ""); });
  }

  // -- the cost chart's caption (ainotes/charts/cost.py: caption_states, fill_caption) ----------------
  // The caption follows the primitive, rank count and link selects: the same sentences as the core's
  // fill_caption, filled with the figures the core computed for that state at build time.

  function sentenceStart(text) { return text.charAt(0).toUpperCase() + text.slice(1); }

  function andList(items) {
    return items.length === 1 ? items[0] : items.slice(0, -1).join(", ") + " and " + items[items.length - 1];
  }

  function fillSentence(template, values) {
    return template.replace(/\{([a-z]+)\}/g, function (whole, key) { return key in values ? String(values[key]) : whole; });
  }

  function costCaption(data, op, ranks, link) {
    var t = data.t, about = data.ops[op], facts = data.states[op + "|" + ranks + "|" + link];
    if (!about || !facts) return null;
    var names = about.names;
    var parts = [fillSentence(t.setting, {op: about.title, ranks: ranks, link: facts.l || data.links[link], first: names[0]})];
    if (about.note) parts.push(about.note);
    if (facts.s.length) {
      parts.push(fillSentence(t.changes, {list: facts.s.map(function (c) {
        return fillSentence(t.change, {above: names[c[1]], below: names[c[0]], size: c[2]});
      }).join("; ")}));
    } else {
      parts.push(fillSentence(t.winner, {winner: sentenceStart(names[facts.w])}));
      if (facts.r >= 1) parts.push(fillSentence(t["same-bytes"], {first: names[0]}));
      if (facts.r === 2) parts.push(t.rings);
    }
    if (facts.m.length) {
      parts.push(fillSentence(t.meets, {first: names[0], list: andList(facts.m.map(function (m) {
        return fillSentence(t.meet, {other: names[m[0]], size: m[1]});
      }))}));
    }
    parts.push(t.tail);
    return parts.join(" ");
  }

  function followCaption(figure, view) {
    var node = figure.querySelector("[data-cost-caption]");
    var template = figure.querySelector("template.ainotes-cost-captions");
    if (!node || !template) return;
    var data = JSON.parse(template.content ? template.content.textContent : template.textContent);
    function update() {
      var text = costCaption(data, view.signal("op"), view.signal("ranks"), view.signal("link"));
      if (text !== null && node.textContent !== text) node.textContent = text;
    }
    ["op", "ranks", "link"].forEach(function (name) { view.addSignalListener(name, update); });
    update();
  }

  // -- a caption the chart writes (charts/inference.py: CAPTION_EXPRESSION) --------------------------
  // The chart's own expressions put the state's sentences in a "caption_text" field; the caption's
  // [data-live-caption] span takes them whenever that dataset changes.
  function liveCaption(figure, view, spec) {
    var node = figure.querySelector("[data-live-caption]");
    if (!node) return;
    var name = null;
    (spec.data || []).forEach(function (data) {
      (data.transform || []).forEach(function (t) { if (t.type === "formula" && t.as === "caption_text") name = data.name; });
    });
    if (!name) return;
    function update() {
      var rows;
      try { rows = view.data(name) || []; } catch (e) { return; }
      for (var i = 0; i < rows.length; i += 1) {
        var text = rows[i].caption_text;
        if (typeof text === "string" && text) { if (node.textContent !== text) node.textContent = text; return; }
      }
    }
    view.addDataListener(name, update);
    update();
  }

  // -- a caption per state of the selects (ainotes/charts/parallelism.py: caption_states) ------------
  // The build writes each state's caption, keyed by the selects' values joined with "|".

  function followStateCaption(figure, view) {
    var node = figure.querySelector("[data-state-caption]");
    var template = figure.querySelector("template.ainotes-state-captions");
    if (!node || !template) return;
    var data = JSON.parse(template.content ? template.content.textContent : template.textContent);
    function update() {
      var key = data.signals.map(function (name) { return String(view.signal(name)); }).join("|");
      var text = data.captions[key];
      if (typeof text === "string" && node.textContent !== text) node.textContent = text;
    }
    data.signals.forEach(function (name) { view.addSignalListener(name, update); });
    update();
  }

  // -- views -------------------------------------------------------------------------------------

  function render(figure) {
    var which = scheme();
    var entry = entryFor(figure);
    if (entry && entry.scheme === which) { entry.pending = null; return; } // flipped back: drop the pending one
    if (entry && entry.pending === which) return;
    if (typeof window.vega === "undefined") { afterRuntime(renderAll); return; }
    var spec = specFor(figure, which);
    if (!spec) return;
    var form = figure.querySelector("form.ainotes-explorer");

    // Carry the reader's choices over to the new view (a chart without a form: its bound inputs).
    var values = {};
    if (!form && entry && entry.view) {
      boundSignals(spec).forEach(function (name) {
        try { values[name] = entry.view.signal(name); } catch (e) { /* not in this view */ }
      });
    }
    if (form) {
      // The page's own form drives the signals; Vega's inputs are for the standalone page.
      (spec.signals || []).forEach(function (s) { delete s.bind; });
    }

    // Render into fresh, invisible elements; swap them in once drawn, so nothing flashes.
    var box = figure.querySelector(".ainotes-chart__box");
    var oldView = box.querySelector(".ainotes-chart__view");
    var oldControls = form ? null : figure.querySelector(".ainotes-chart__controls");
    var container = document.createElement("div");
    container.className = "ainotes-chart__view ainotes-chart__view--pending";
    box.appendChild(container);
    var controls = null;
    if (oldControls) {
      controls = document.createElement("div");
      controls.className = "ainotes-chart__controls";
      controls.setAttribute("style", oldControls.getAttribute("style") || "");  // its reserved height
      controls.hidden = true;
      oldControls.parentNode.insertBefore(controls, oldControls.nextSibling);
    }

    if (!entry) {
      entry = {figure: figure, view: null, scheme: null, pending: null, form: form, state: null};
      if (form) {
        entry.meta = JSON.parse(form.getAttribute("data-explorer"));
        entry.state = initialState(form);
      }
      live.push(entry);
    }
    entry.pending = which;
    var options = {renderer: "svg", container: container, hover: true};
    if (controls) options.bind = controls;
    var names = textDatasets(spec);
    var view = new vega.View(vega.parse(spec), options);
    Object.keys(values).forEach(function (name) { view.signal(name, values[name]); });
    if (form) applyState(entry, view);
    view.runAsync().then(function () {
      if (entry.pending !== which) { view.finalize(); container.remove(); if (controls) controls.remove(); return; }
      if (entry.view) entry.view.finalize();
      if (oldView) oldView.remove();
      if (oldControls) oldControls.remove();
      container.classList.remove("ainotes-chart__view--pending");
      if (controls) controls.hidden = false;
      entry.view = view;
      entry.dataNames = names;
      entry.scheme = which;
      entry.pending = null;
      figure.classList.add("ainotes-chart--live");
      if (form) {
        if (form.hasAttribute("data-ainotes-wired")) updateReadouts(entry);
        else wire(entry);
      } else {
        followCaption(figure, view);
        followStateCaption(figure, view);
        liveCaption(figure, view, spec);
      }
    }).catch(function (error) {
      // The static SVG stays; the chart is still readable.
      view.finalize();
      container.remove();
      if (controls) controls.remove();
      entry.pending = null;
      if (window.console) console.warn("ainotes: chart " + figure.id + " stays static:", error);
    });
  }

  // Instant navigation inserts this file and vega.min.js without keeping their order:
  // when the runtime is not there yet, render once it has loaded.
  function afterRuntime(callback) {
    var tag = document.querySelector('script[src$="assets/ainotes/vega.min.js"]');
    if (!tag || tag.hasAttribute("data-ainotes-waited")) return;
    tag.setAttribute("data-ainotes-waited", "");
    tag.addEventListener("load", callback, {once: true});
  }

  function absolutiseSnippets() {
    var snippets = document.querySelectorAll(".ainotes-embed__snippet[data-urls]");
    Array.prototype.forEach.call(snippets, function (code) {
      var text = code.textContent;
      code.getAttribute("data-urls").split(" ").forEach(function (url) {
        if (!url) return;
        var absolute = new URL(url, document.baseURI).href;
        text = text.split('"' + url + '"').join('"' + absolute + '"');
      });
      code.textContent = text;
      code.removeAttribute("data-urls");
    });
  }

  function renderAll() {
    // Views of figures that instant navigation removed.
    live = live.filter(function (entry) {
      if (document.contains(entry.figure)) return true;
      if (entry.view) entry.view.finalize();
      return false;
    });
    Array.prototype.forEach.call(document.querySelectorAll("figure.ainotes-chart"), render);
    absolutiseSnippets();
  }

  // settled(figure): a promise that resolves once the figure's explorer has drawn and read out
  // everything asked of it so far (for the browser tests, and for pages that drive the form).
  window.__ainotesVegaCharts = {renderAll: renderAll, settled: function (figure) {
    var entry = entryFor(figure);
    return entry && entry.settled ? entry.settled.then(function () { return entry.settled; }) : Promise.resolve();
  }};
  // For the browser tests: the live view of a figure, by id.
  window.__ainotesRooflineView = function (id) {
    var entry = entryFor(document.getElementById(id));
    return entry ? entry.view : null;
  };

  function watchScheme() {
    new MutationObserver(function () {
      live.forEach(function (entry) { render(entry.figure); });
    }).observe(document.body, {attributes: true, attributeFilter: ["data-md-color-scheme"]});
  }

  // The charts' font (charts.css @font-face, font-display: block) has Arial's metrics, so a live view
  // drawn before it has loaded lays its text out as the stills were laid out: no wait for it here
  // (one delayed the first draw past a framed page's first height report, and the frame stayed short).

  function start() {
    watchScheme();
    if (window.document$ && typeof window.document$.subscribe === "function") {
      window.document$.subscribe(renderAll);
    } else {
      renderAll();
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
