"""The roofline explorer: one log-log Vega-Lite chart, its grammar built once with altair.

Every number the chart draws or writes comes from the core (:mod:`ainotes.core.roofline`,
:mod:`ainotes.core.kernels`, :mod:`ainotes.core.hardware`), in one of two ways:

* computed here at build time for every state the selects allow (precision × GPUs ×
  sparsity × how kernels are typed): the ``ceilings`` rows (one per preset and roof: dense and
  2:4-sparse peak, bandwidth, ridges), the ``kernels`` rows (where each kernel meets its roof,
  its bound and time, for each way of typing it), the ``extra_roofs`` rows (a kernel's own roof
  where its mark would not lie on a line drawn), the legends' texts and the kernels' table;
* for what the reader types or slides (an intensity, a GEMM's M, N, K, a batch size), Vega
  expressions that the core's own formula functions write (:mod:`ainotes.base.formula`: called
  with :class:`~ainotes.base.formula.Expr` names they return expression text), evaluated by the
  chart, and written out by the formats of :mod:`ainotes.charts.formats`. The page's script
  only sets the inputs and shows the texts the chart computed; the tests evaluate the
  expressions with Vega and compare them with the core.

What the chart promises (tests/test_explorer_truth.py checks it in a browser at every state):

* a GPU without the roof shown draws nothing (no line, no kernel, no reader's mark); its legend
  entry says why ("not drawn: no FP8 path", "FP8 rate not given");
* no mark lies above a line of its GPU without its own roof drawn beside, dashed, and named in
  the line key; a kernel meets the roof of its own data type, or, when the reader asks for
  kernels "re-typed to the precision shown", the roof of the same kernel in that type (its bytes
  change with the type);
* the GPU select filters lines, kernels, legends and readouts together;
* stills (SVG, PNG, the picture without a script) hold no unlabelled mark.

Params (signals in the compiled Vega; the page's controls set them, see
``assets/vega-charts.js``): ``precision`` (the roof shown), ``preset`` (``"*"`` or one id),
``sparsity``, ``kmode`` (``"own"`` or ``"shown"``), ``intensity`` and ``readout_on`` (the
readout), and the reader's marks ``own_*`` and ``batch_*``. Everything else a chart varies in
(axis domains, ticks, names, legend texts) is a param too, so the structure is one
:class:`Grammar` shared by every roofline, filled with data per chart.

Text never overlaps by construction: no rotated text but the y axis title; ridge values are
folded into the legend labels; kernels are numbered marks whose numbers are grouped when their
intensities lie close (:func:`label_clusters`); the readout and the reader's marks are
labelled in a band of their own along the top, which the y axis reaches past the highest mark
by the rows in use, in pixels (:data:`~ainotes.charts.roofline.grammar.Y_DOMAIN_EXPR`); the
readout rule stops at the lowest ceiling, below every label. The browser suite measures it at
every width and state (tests/test_roofline_labels.py: no label on a mark or an axis).

The package re-exports nothing: import from its modules, :mod:`~ainotes.charts.roofline.spec`
(``roofline_spec``, ``caption_html``), :mod:`~ainotes.charts.roofline.stills` (the phone still,
``spec_meta``), :mod:`~ainotes.charts.roofline.colours` (the theme, dark pictures),
:mod:`~ainotes.charts.roofline.names` (constants, roof names and words),
:mod:`~ainotes.charts.roofline.data` (rows), :mod:`~ainotes.charts.roofline.expressions` and
:mod:`~ainotes.charts.roofline.grammar` (the chart's expressions and structure).
"""
