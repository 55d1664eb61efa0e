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
 * view's signals; the readouts under it are computed here from the chart's own data
 * (the "ceilings" rows the core wrote) with the core's formulas:
 *   attainable = min(peak, bandwidth × intensity); memory-bound iff intensity < ridge;
 *   GEMM M×N×K: FLOPs = 2·M·N·K, bytes = (M·K + K·N + M·N) × bytes per element.
 * window.__ainotesRoofline exposes those functions for the browser tests.
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

  // -- numbers as the core writes them (ainotes.units) ----------------------------------------

  var PREFIXES = [[1e18, "E"], [1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]];

  function significant(value, digits) {
    if (value === 0 || !isFinite(value)) return String(value);
    var decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(value))));
    var text = value.toFixed(decimals);
    return text.indexOf(".") >= 0 ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
  }

  function si(value, unit) {
    for (var i = 0; i < PREFIXES.length; i += 1) {
      if (Math.abs(value) >= PREFIXES[i][0]) return significant(value / PREFIXES[i][0], 4) + " " + PREFIXES[i][1] + unit;
    }
    return significant(value, 4) + " " + unit;
  }

  function intensityText(value) {
    var text = value >= 100 ? Math.round(value).toLocaleString("en-US") : significant(value, 3);
    return text + " FLOP/byte";
  }

  // -- the core's formulas -------------------------------------------------------------------

  function gemm(m, n, k, bytesPerElement) {
    var flops = 2 * m * n * k;
    var bytes = (m * k + k * n + m * n) * bytesPerElement;
    return {flops: flops, bytes: bytes, intensity: flops / bytes};
  }

  function meets(row, intensity, sparse) {
    var peak = sparse ? row.speak : row.peak;
    var ridge = sparse ? row.sridge : row.ridge;
    return {attainable: Math.min(peak, row.bw * intensity), bound: intensity < ridge ? "memory" : "compute",
            ridge: ridge, peak: peak};
  }

  // Tokens at which a weight GEMM (batch × K) · (K × N) reaches intensity `ridge`: solve
  // 2·B·N·K = ridge · s · (B·K + K·N + B·N) for B; none when the intensity never gets there.
  function crossingBatch(ridge, n, k, bytesPerElement) {
    var denominator = 2 * n * k - ridge * bytesPerElement * (k + n);
    return denominator > 0 ? ridge * bytesPerElement * k * n / denominator : null;
  }

  window.__ainotesRoofline = {gemm: gemm, meets: meets, significant: significant, si: si,
                              intensityText: intensityText, crossingBatch: crossingBatch};

  // -- the explorer's form ---------------------------------------------------------------------

  function ceilingsOf(spec) {
    var data = (spec.data || []).filter(function (d) { return d.name === "ceilings"; })[0];
    return data ? data.values : [];
  }

  function initialState(form) {
    return {
      precision: form.elements.precision.value,
      preset: form.elements.preset.value,
      sparsity: form.elements.sparsity.checked,
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

  function visibleRows(entry, roof) {
    var state = entry.state;
    return entry.ceilings.filter(function (row) {
      return row.r === roof && (state.preset === "*" || row.p === state.preset);
    });
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

  function missingNote(entry, roof) {
    var lacking = (entry.meta.missing || {})[roof] || {};
    var state = entry.state;
    return Object.keys(lacking).filter(function (id) { return state.preset === "*" || id === state.preset; })
      .map(function (id) { return entry.meta.names[id] + ": " + lacking[id]; });
  }

  function updateReadouts(entry) {
    var form = entry.form, state = entry.state, meta = entry.meta;
    var names = meta.names;
    var lacking = missingNote(entry, state.precision);
    var note = form.querySelector('[data-role="missing"]');
    note.textContent = lacking.length ? "Left out at " + meta.roof_names[state.precision] + ": " + lacking.join("; ") + "." : "";

    var at = state.intensity;
    fill(form.querySelector('[data-role="readout"]'), "At " + intensityText(at) + ", " + meta.roof_names[state.precision]
         + (state.sparsity ? ", 2:4 sparse" : ", dense") + ":",
         visibleRows(entry, state.precision).map(function (row) {
           var m = meets(row, at, state.sparsity);
           var ratio = at / m.ridge;
           var distance = ratio >= 1 ? significant(ratio, 3) + "× the ridge (" + intensityText(m.ridge) + ")"
                                     : significant(1 / ratio, 3) + "× below the ridge (" + intensityText(m.ridge) + ")";
           return names[row.p] + ": " + si(m.attainable, "FLOP/s") + ", " + m.bound + "-bound, " + distance;
         }));

    fill(form.querySelector('[data-role="own"]'), state.own ? state.own.heading : "",
         state.own ? kernelLines(entry, state.own) : []);
    fill(form.querySelector('[data-role="batch"]'), state.batch ? state.batch.heading : "",
         state.batch ? batchLines(entry, state.batch) : []);
  }

  function kernelLines(entry, mark) {
    var meta = entry.meta, state = entry.state;
    var lines = [];
    Object.keys(meta.names).forEach(function (id) {
      if (state.preset !== "*" && id !== state.preset) return;
      var row = entry.ceilings.filter(function (r) { return r.p === id && r.r === mark.roof; })[0];
      if (!row) {
        var lacking = ((meta.missing || {})[mark.roof] || {})[id] || "no such path";
        lines.push(meta.names[id] + ": unsupported, " + lacking);
        return;
      }
      var m = meets(row, mark.x, false); // a dense kernel meets the dense roof
      lines.push(meta.names[id] + ": " + m.bound + "-bound, at most " + si(m.attainable, "FLOP/s")
                 + " (" + meta.roof_names[mark.roof] + ")");
    });
    return lines;
  }

  function batchLines(entry, mark) {
    var lines = kernelLines(entry, mark);
    var meta = entry.meta;
    visibleRows(entry, mark.roof).forEach(function (row) {
      var tokens = crossingBatch(row.ridge, mark.n, mark.k, mark.bytesPerElement);
      lines.push(meta.names[row.p] + ": crosses its ridge (" + intensityText(row.ridge) + ") at "
                 + (tokens === null ? "no batch size" : "about " + significant(tokens, 3) + " tokens"));
    });
    return lines;
  }

  function applyState(entry, view) {
    var state = entry.state;
    view.signal("precision", state.precision);
    view.signal("preset", state.preset);
    view.signal("sparsity", state.sparsity);
    view.signal("intensity", state.intensity);
    [["own", state.own], ["batch", state.batch]].forEach(function (pair) {
      var mark = pair[1];
      view.signal(pair[0] + "_on", !!mark);
      if (mark) {
        view.signal(pair[0] + "_x", mark.x);
        view.signal(pair[0] + "_roof", mark.roof);
        view.signal(pair[0] + "_label", mark.label);
      }
    });
  }

  function redraw(entry) {
    updateReadouts(entry);
    if (!entry.view) return;
    applyState(entry, entry.view);
    entry.view.runAsync();
  }

  function placeGemm(entry) {
    var form = entry.form, meta = entry.meta;
    var dims = ["m", "n", "k"].map(function (name) { return [name.toUpperCase(), parseNumber(form.elements[name].value)]; });
    for (var i = 0; i < dims.length; i += 1) {
      var name = dims[i][0], value = dims[i][1];
      if (!(Number.isInteger(value) && value >= 1 && value <= meta.max_dimension)) {
        return "GEMM " + name + " must be a whole number from 1 to " + meta.max_dimension.toLocaleString("en-US")
               + ": " + JSON.stringify(form.elements[name.toLowerCase()].value) + ". The chart is unchanged.";
      }
    }
    var dtype = form.elements.dtype.value;
    var info = meta.dtypes[dtype];
    if (!info) return "Unknown data type " + JSON.stringify(dtype) + ". The chart is unchanged.";
    var m = dims[0][1], n = dims[1][1], k = dims[2][1];
    var work = gemm(m, n, k, info.bytes);
    var where = offAxis(entry, work.intensity);
    if (where) return where;
    var shape = m + "×" + n + "×" + k + " " + dtype;
    entry.state.own = {x: work.intensity, roof: info.roof, label: "◆ GEMM " + shape,
                       heading: "Your GEMM " + shape + ": " + si(work.flops, "FLOP") + ", " + si(work.bytes, "B")
                                + " moved at least, " + intensityText(work.intensity) + "."};
    return "";
  }

  function placeIntensity(entry) {
    var form = entry.form;
    var text = form.elements.own_intensity.value;
    var value = parseNumber(text);
    if (!(value > 0) || !isFinite(value)) {
      return "The intensity must be a number of FLOP/byte above 0: " + JSON.stringify(text) + ". The chart is unchanged.";
    }
    var where = offAxis(entry, value);
    if (where) return where;
    entry.state.own = {x: value, roof: entry.state.precision, label: "◆ " + intensityText(value),
                       heading: "Your kernel at " + intensityText(value) + ", on the roof shown (" +
                                entry.meta.roof_names[entry.state.precision] + "):"};
    return "";
  }

  function offAxis(entry, intensity) {
    var domain = entry.meta.x_domain;
    if (intensity < domain[0] || intensity > domain[1]) {
      return "That lands at " + intensityText(intensity) + ", off this chart's axis (" + intensityText(domain[0])
             + " to " + intensityText(domain[1]) + "). The chart is unchanged.";
    }
    return "";
  }

  function updateBatch(entry) {
    var form = entry.form, meta = entry.meta, state = entry.state;
    var tokens = Math.pow(2, parseInt(form.elements.batch.value, 10));
    form.elements.batch_tokens.value = String(tokens);
    if (!form.elements.batch_on.checked) { state.batch = null; setMessage(form, "batch-message", ""); return; }
    var d = parseNumber(form.elements.d_model.value);
    if (!(Number.isInteger(d) && d >= 1 && d * meta.ffn_factor <= meta.max_dimension)) {
      setMessage(form, "batch-message", "d_model must be a whole number from 1 to "
                 + Math.floor(meta.max_dimension / meta.ffn_factor).toLocaleString("en-US") + ": "
                 + JSON.stringify(form.elements.d_model.value) + ". The chart is unchanged.");
      return;
    }
    // The projection runs in the precision shown, where that is a data type; BF16 otherwise.
    var dtype = state.precision.split(":")[1];
    if (!meta.dtypes[dtype]) dtype = "bf16";
    var info = meta.dtypes[dtype];
    var n = meta.ffn_factor * d, k = d;
    var work = gemm(tokens, n, k, info.bytes);
    var where = offAxis(entry, work.intensity);
    if (where) { setMessage(form, "batch-message", where); return; }
    setMessage(form, "batch-message", "");
    state.batch = {x: work.intensity, roof: info.roof, n: n, k: k, bytesPerElement: info.bytes,
                   label: "▲ " + tokens + " tokens, " + dtype.toUpperCase(),
                   heading: "Decode projection, " + tokens + " tokens × " + k + " → " + n + " (" + dtype + "): "
                            + intensityText(work.intensity) + "."};
  }

  function wire(entry) {
    var form = entry.form;
    if (form.hasAttribute("data-ainotes-wired")) return;
    form.setAttribute("data-ainotes-wired", "");
    var els = form.elements;

    function setIntensity(value, fromSlider) {
      entry.state.intensity = value;
      if (!fromSlider) els.log_intensity.value = String(Math.log10(value));
      else els.intensity.value = significant(value, 3);
      setMessage(form, "intensity-message", "");
      redraw(entry);
    }

    els.precision.addEventListener("change", function () {
      entry.state.precision = els.precision.value;
      updateBatch(entry);
      redraw(entry);
    });
    els.preset.addEventListener("change", function () { entry.state.preset = els.preset.value; redraw(entry); });
    els.sparsity.addEventListener("change", function () { entry.state.sparsity = els.sparsity.checked; redraw(entry); });
    els.log_intensity.addEventListener("input", function () {
      setIntensity(Math.pow(10, parseFloat(els.log_intensity.value)), true);
    });
    els.intensity.addEventListener("change", function () {
      var text = els.intensity.value, value = parseNumber(text);
      var domain = entry.meta.x_domain;
      if (!(value > 0) || !isFinite(value)) {
        setMessage(form, "intensity-message", "Type a number of FLOP/byte above 0 (e.g. 300): "
                   + JSON.stringify(text) + ". The chart is unchanged.");
      } else if (value < domain[0] || value > domain[1]) {
        setMessage(form, "intensity-message", "The axis runs from " + intensityText(domain[0]) + " to "
                   + intensityText(domain[1]) + ": " + JSON.stringify(text) + ". The chart is unchanged.");
      } else {
        setIntensity(value, false);
      }
    });
    els.intensity.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); els.intensity.dispatchEvent(new Event("change")); }
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var which = event.submitter ? event.submitter.value
                : (document.activeElement === els.own_intensity ? "intensity" : "gemm");
      var previous = entry.state.own;
      var problem = which === "intensity" ? placeIntensity(entry) : placeGemm(entry);
      if (problem) entry.state.own = previous;
      setMessage(form, "own-message", problem);
      redraw(entry);
    });
    form.querySelector('[data-action="clear"]').addEventListener("click", function () {
      entry.state.own = null;
      setMessage(form, "own-message", "");
      redraw(entry);
    });
    ["batch_on", "batch", "d_model"].forEach(function (name) {
      els[name].addEventListener(name === "d_model" ? "change" : "input", function () { updateBatch(entry); redraw(entry); });
    });
    form.hidden = false;
    updateReadouts(entry);
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
    var parts = [fillSentence(t.setting, {op: about.title, ranks: ranks, link: data.links[link], first: names[0]})];
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
        entry.ceilings = ceilingsOf(spec);
        entry.state = initialState(form);
      }
      live.push(entry);
    }
    entry.pending = which;
    var options = {renderer: "svg", container: container, hover: true};
    if (controls) options.bind = controls;
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
      entry.scheme = which;
      entry.pending = null;
      figure.classList.add("ainotes-chart--live");
      if (form) wire(entry);
      else followCaption(figure, view);
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

  window.__ainotesVegaCharts = {renderAll: renderAll};
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
