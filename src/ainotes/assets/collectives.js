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

  function enhance(root) {
    if (root.hasAttribute("data-ainotes-ready")) return;
    var frames = Array.prototype.slice.call(root.querySelectorAll(".ainotes-stepper-frame"));
    if (frames.length < 2) return;
    root.setAttribute("data-ainotes-ready", "");
    if (!root.hasAttribute("tabindex")) root.setAttribute("tabindex", "0");

    var captions = frames.map(function (frame) {
      var c = frame.querySelector(".ainotes-step-caption") || frame.querySelector("figcaption");
      return c ? c.textContent.trim() : "";
    });
    var count = frames.length;
    var current = 0;
    var timer = null;

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

    function render() {
      frames.forEach(function (frame, i) { frame.hidden = i !== current; });
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
