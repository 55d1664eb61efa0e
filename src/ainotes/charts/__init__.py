"""Charts: core results turned into Vega-Lite specs and SVG."""
