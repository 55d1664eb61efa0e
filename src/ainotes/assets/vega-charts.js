/* Live Vega views for the notes' charts (markup: ainotes/charts/embed.py).
 *
 * Each <figure class="ainotes-chart"> holds two static SVGs (light, dark) and the two
 * compiled Vega specs. This script renders the spec for the reader's colour scheme into
 * the figure's box with the Vega-only runtime (window.vega, from vega.min.js), hides the
 * static SVG only once the view has rendered, re-renders when the reader flips
 * data-md-color-scheme (keeping the slider, select and checkbox values), and runs again
 * after Material's instant navigation (document$).
 */
(function () {
  "use strict";
  if (window.__ainotesVegaCharts) {
    window.__ainotesVegaCharts.renderAll();
    return;
  }

  var live = []; // {figure, view, scheme}

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

  function render(figure) {
    var which = scheme();
    var entry = entryFor(figure);
    if (entry && entry.scheme === which) { entry.pending = null; return; } // flipped back: drop the pending one
    if (entry && entry.pending === which) return;
    if (typeof window.vega === "undefined") { afterRuntime(renderAll); return; }
    var spec = specFor(figure, which);
    if (!spec) return;

    // Carry the reader's choices over to the new view.
    var values = {};
    if (entry && entry.view) {
      boundSignals(spec).forEach(function (name) {
        try { values[name] = entry.view.signal(name); } catch (e) { /* not in this view */ }
      });
    }

    // Render into fresh, invisible elements; swap them in once drawn, so nothing flashes.
    var box = figure.querySelector(".ainotes-chart__box");
    var oldView = box.querySelector(".ainotes-chart__view");
    var oldControls = figure.querySelector(".ainotes-chart__controls");
    var container = document.createElement("div");
    container.className = "ainotes-chart__view ainotes-chart__view--pending";
    box.appendChild(container);
    var controls = document.createElement("div");
    controls.className = "ainotes-chart__controls";
    controls.hidden = true;
    oldControls.parentNode.insertBefore(controls, oldControls.nextSibling);

    if (!entry) {
      entry = {figure: figure, view: null, scheme: null, pending: null};
      live.push(entry);
    }
    entry.pending = which;
    var view = new vega.View(vega.parse(spec), {
      renderer: "svg", container: container, bind: controls, hover: true
    });
    Object.keys(values).forEach(function (name) { view.signal(name, values[name]); });
    view.runAsync().then(function () {
      if (entry.pending !== which) { view.finalize(); container.remove(); controls.remove(); return; }
      if (entry.view) entry.view.finalize();
      if (oldView) oldView.remove();
      oldControls.remove();
      container.classList.remove("ainotes-chart__view--pending");
      controls.hidden = false;
      entry.view = view;
      entry.scheme = which;
      entry.pending = null;
      figure.classList.add("ainotes-chart--live");
    }).catch(function (error) {
      // The static SVG stays; the chart is still readable.
      view.finalize();
      container.remove();
      controls.remove();
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
