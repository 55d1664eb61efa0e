/* Keyboard access to regions that scroll sideways (ainotes theme override).
 *
 * A wide table or a long formula on a phone sits in a box with overflow: auto. A
 * mouse or a finger can scroll it; a keyboard cannot unless the box takes focus
 * (WCAG 2.1.1; axe-core's scrollable-region-focusable). Material makes its code
 * blocks focusable when they overflow, but not the wrappers it puts round tables.
 *
 * This script gives every such box that really overflows tabindex="0" (and, for a
 * table's box, role="region" with a name, so a screen reader says what has focus),
 * and takes them away again when the box stops overflowing (wider window). It runs
 * on every page that Material's instant navigation loads (document$).
 *
 * A box that scrolls sideways also says which side hides more of it, in
 * data-ainotes-more="left right" (notes.css draws a shadow on that edge): a formula
 * cut at the column's edge otherwise looks like a formula that ends there.
 */
(function () {
  "use strict";
  if (window.__ainotesScrollRegions) return;
  window.__ainotesScrollRegions = true;

  var SELECTOR = ".md-typeset .md-typeset__scrollwrap, .md-typeset .ainotes-table, .md-typeset math[display=\"block\"]";
  var MARK = "data-ainotes-scroll";
  var MORE = "data-ainotes-more";
  var observer = "ResizeObserver" in window ? new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { update(entry.target); });
  }) : null;

  function scrolls(el) {
    var style = getComputedStyle(el);
    var sideways = /auto|scroll/.test(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
    var down = /auto|scroll/.test(style.overflowY) && el.scrollHeight > el.clientHeight + 1;
    return sideways || down;
  }

  function label(el) {
    var caption = el.querySelector("caption");
    var text = caption ? caption.textContent.trim() : "";
    return (text || "Table") + " (scrolls sideways)";
  }

  function showMore(el) {
    var hidden = el.scrollWidth - el.clientWidth;
    var sides = [];
    if (hidden > 1 && /auto|scroll/.test(getComputedStyle(el).overflowX)) {
      if (el.scrollLeft > 1) sides.push("left");
      if (el.scrollLeft < hidden - 1) sides.push("right");
    }
    if (sides.length) el.setAttribute(MORE, sides.join(" "));
    else el.removeAttribute(MORE);
  }

  function update(el) {
    showMore(el);
    if (!el.__ainotesMore) {
      el.__ainotesMore = true;
      el.addEventListener("scroll", function () { showMore(el); }, { passive: true });
    }
    var mine = el.hasAttribute(MARK);
    if (scrolls(el)) {
      if (mine || el.hasAttribute("tabindex")) return;
      el.setAttribute(MARK, "");
      el.setAttribute("tabindex", "0");
      if (el.tagName.toLowerCase() === "div" && !el.hasAttribute("role")) {
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", label(el));
        el.setAttribute(MARK, "region");
      }
    } else if (mine) {
      if (el.getAttribute(MARK) === "region") {
        el.removeAttribute("role");
        el.removeAttribute("aria-label");
      }
      el.removeAttribute("tabindex");
      el.removeAttribute(MARK);
    }
  }

  function scan() {
    Array.prototype.forEach.call(document.querySelectorAll(SELECTOR), function (el) {
      update(el);
      if (observer) observer.observe(el);
    });
  }

  if (!observer) window.addEventListener("resize", scan);
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { window.requestAnimationFrame(scan); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", scan);
  } else {
    scan();
  }
})();
