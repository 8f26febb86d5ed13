// The attention explorer in the browser (viz/elements/browser_view.py mounts it; viz/figures/browser_view.py makes its
// data). The data holds every kind x layer x head once, with the figures plotly.py's builders made; a pick
// (kind, layer, head: the pickers, a click on the grid) redraws here, with no script run: the large map gets
// that pick's weights, keys, title and file name, the grid its box, the lines their layer and head. The pick is
// written to the URL at once; a teacher's is also reported to the server (setStateValue: one run, which
// rebuilds nothing, so that the class follows it). Words and file names come in the data, in the reader's
// language: nothing here is English. User text (tokens) is only ever set as text or handed to plotly.
//
// The same element draws a deck (the multi-head page; the feed-forward page; the LayerNorm page, a layer alone; the
// attention zoo, a kind, a layer and a head; the decoding page; the step-through page; the training page, a step
// and its maps' layer and head): every figure of the
// page, for every pick (kind, layer, head; or a step: a slider and its ◀/▶ buttons, or a row of named steps between
// ◀ Previous and Next ▶), as the builders made them, with its words and formulas (MathML, kept only as MathML); a
// pick swaps them in. The body's "view" says which (RENDERERS, at the end); what
// receives a body and the run's head, checks a pick, writes it to the URL and reports it is shared.

const VIEWS = new WeakMap();                 // the element's root -> its view (kept across reruns)

function waitForPlotly() {
  return new Promise((resolve) => {
    const look = () => (window.Plotly ? resolve(window.Plotly) : setTimeout(look, 10));
    look();
  });
}

function split(data) {
  // one line of JSON (this run's pick, the body's sig...), then the gzipped body (viz/figures/browser_view.py)
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const end = bytes.indexOf(10);
  return { head: JSON.parse(new TextDecoder().decode(bytes.subarray(0, end))), body: bytes.subarray(end + 1) };
}

async function unzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function floats(spec) {                       // plotly's typed-array spec (f4) -> Float32Array
  const text = atob(spec.bdata);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

function element(tag, className, parent) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (parent) parent.appendChild(made);
  return made;
}

function kindAndLayer(box, names = EXPLORER_NAMES) {
  // the pickers: the kind (radios), the layer and the head (selects), in a row of their own, as the picks' names ask
  // (the explorer's: all three; a deck whose picks name no kind, the LayerNorm page's layer of the stack the server
  // picked, has no kind row; a deck that picks no layer, the head page's kind of a picture of every layer, no layer
  // select; a deck that picks no head, no head select)
  const pickers = element("div", "vz-pickers", box);
  let kindLabel = null;
  let kindButtons = null;
  if (names.includes("kind")) {
    const kinds = element("div", "vz-kinds", pickers);
    kinds.setAttribute("role", "radiogroup");
    kindLabel = element("span", "vz-label", kinds);
    kindButtons = element("div", "vz-kind-buttons", kinds);
  }
  const numbers = element("div", "vz-numbers", pickers);           // layer (and the explorer's head) side by side
  const [layerText, layer] = names.includes("layer") ? selectPicker(numbers, "vz-layer") : [null, null];
  const [headText, head] = names.includes("head") ? selectPicker(numbers, "vz-head") : [null, null];
  return { pickerRow: pickers, kindLabel, kindButtons, numbers, layerText, layer, headText, head };
}

function selectPicker(parent, className) {
  // a labelled select (the layer's, the head's): its label's words and the select
  const label = element("label", "vz-picker", parent);
  return [element("span", "vz-label", label), element("select", className, label)];
}

function headEntries(names) {
  // the head select's options from the body's words (browser_view.head_names: "-1", the mean, first when offered)
  return Object.keys(names).map(Number).sort((a, b) => a - b).map((h) => [h, names[String(h)]]);
}

function skeleton(root) {
  const box = element("div", "vz-explorer", root);
  const { kindLabel, kindButtons, layerText, layer, headText, head } = kindAndLayer(box);
  const grid = element("div", "vz-plot vz-grid", box);
  const read = element("p", "vz-caption vz-read", box);
  const pair = element("div", "vz-pair", box);
  const mapColumn = element("div", "vz-column", pair);
  const map = element("div", "vz-plot vz-map", mapColumn);
  const csv = element("button", "vz-csv", mapColumn);
  csv.type = "button";
  const strongest = element("p", "vz-caption vz-strongest", mapColumn);
  const linesColumn = element("div", "vz-column vz-lines-column", pair);
  const folded = element("details", "vz-folded", box);
  const foldedTitle = element("summary", "", folded);
  const lines = element("div", "vz-plot vz-lines", linesColumn);
  const linesRead = element("p", "vz-caption vz-lines-read", linesColumn);
  return { box, kindLabel, kindButtons, layerText, layer, headText, head, grid, read, pair, mapColumn, map, csv,
           strongest, linesColumn, folded, foldedTitle, lines, linesRead };
}

const EXPLORER_NAMES = ["kind", "layer", "head"];

function sameSpot(a, b, names = EXPLORER_NAMES) {
  return !!a && !!b && names.every((name) => a[name] === b[name]);
}

function pickNames(view) {
  // what the view picks: a deck's body says (kind and layer; a step), the explorer's are its own
  return (view.r === RENDERERS.deck && view.data.names) || view.r.names;
}

function pickText(pick, names) {
  return names.map((name) => pick[name]).join(":");
}

function pickIndex(part, pick) {
  return pick.layer * (part.heads + 1) + (pick.head + 1);   // pick_names: the mean (-1) first in each layer
}

// -- drawing ------------------------------------------------------------------------------------------------
function config(view, filename) {
  const options = { displaylogo: false, responsive: true };
  if (view.data.modebar === false) options.displayModeBar = false;     // presenter, phone: as plotly_config
  if (filename) options.toImageButtonOptions = { format: view.data.image_format, filename, scale: 2 };
  return options;
}

function withTemplate(view, layout) {
  // the page's font, as Streamlit's own charts take it (its theme sets the family, the builders the sizes)
  const family = getComputedStyle(view.dom.box).fontFamily;
  const font = { ...(layout.font || {}), family };
  const themed = { ...layout, font };
  if (layout.title) themed.title = { ...layout.title, font: { ...(layout.title.font || {}), family } };
  return view.data.template ? { ...themed, template: view.data.template } : themed;
}

function drawGrid(view) {
  const part = view.data.kinds[view.pick.kind];
  const layout = withTemplate(view, { ...part.grid.layout, shapes: [part.selection[pickIndex(part, view.pick)]] });
  return view.Plotly.react(view.dom.grid, part.grid.data, layout, config(view, null));
}

function moveGridBox(view) {
  const part = view.data.kinds[view.pick.kind];
  return view.Plotly.relayout(view.dom.grid, { shapes: [part.selection[pickIndex(part, view.pick)]] });
}

function mapRows(view, part, index) {
  const [, nQ, nK] = part.z.shape;
  const all = view.weights.get(view.pick.kind);
  const rows = [];
  for (let q = 0; q < nQ; q++) rows.push(Array.from(all.subarray((index * nQ + q) * nK, (index * nQ + q + 1) * nK)));
  return rows;
}

function mapFigure(view) {
  const part = view.data.kinds[view.pick.kind];
  const index = pickIndex(part, view.pick);
  const x = part.x[view.pick.layer];
  const data = part.map.data.map((trace, i) => {
    if (i === 0) return { ...trace, z: mapRows(view, part, index), x };
    return trace.type === "heatmap" ? { ...trace, x } : { ...trace };    // the mask's grey cells: the same keys
  });
  const layout = withTemplate(view, { ...part.map.layout, title: { ...part.map.layout.title,
                                                                    text: part.titles[index] } });
  return { data, layout, config: config(view, part.files[index]), strongest: part.strongest[index] };
}

function drawMap(view) {
  const figure = mapFigure(view);
  view.dom.strongest.textContent = figure.strongest;
  view.mapKind = view.pick.kind;
  return view.Plotly.react(view.dom.map, figure.data, figure.layout, figure.config);
}

function updateMap(view) {
  // the same kind: only the weights, keys, title and file name change (Plotly.update restyles in place)
  if (view.mapKind !== view.pick.kind) return drawMap(view);
  const figure = mapFigure(view);
  view.dom.strongest.textContent = figure.strongest;
  view.dom.map._context.toImageButtonOptions = figure.config.toImageButtonOptions;
  const heatmaps = figure.data.map((trace, i) => [trace, i]).filter(([trace]) => trace.type === "heatmap");
  return view.Plotly.update(view.dom.map, { z: heatmaps.map(([trace]) => trace.z), x: heatmaps.map(([trace]) => trace.x) },
                            { "title.text": figure.layout.title.text }, heatmaps.map(([, i]) => i));
}

function linesVisibility(view, figure) {
  // the builder's rule (head_view's selected_head): the picked head shown, the others in the legend; the
  // layer's mean shows every head
  const head = view.pick.head;
  return figure.data.map((trace) => {
    const group = trace.legendgroup;
    if (!group) return trace.visible === undefined ? true : trace.visible;
    return head < 0 || group === `h${head}` ? true : "legendonly";
  });
}

function linesShown(view) {
  const part = view.data.kinds[view.pick.kind];
  return part.beside || view.dom.folded.open;
}

function drawLines(view) {
  const part = view.data.kinds[view.pick.kind];
  if (!linesShown(view)) return Promise.resolve();
  const figure = part.lines[view.pick.layer];
  if (!figure) return Promise.resolve();        // the whole body brings it
  const visible = linesVisibility(view, figure);
  const data = figure.data.map((trace, i) => ({ ...trace, visible: visible[i] }));
  const file = part.files[pickIndex(part, { ...view.pick, head: -1 })].replace(/-avg$/, "-lines");
  return view.Plotly.react(view.dom.lines, data, withTemplate(view, figure.layout), config(view, file));
}

function showLinesOnly(view, before) {
  // the same layer, another head: only the traces of the heads shown before and now change visibility
  const figure = view.data.kinds[view.pick.kind].lines[view.pick.layer];
  if (!figure || !linesShown(view)) return Promise.resolve();
  const visible = linesVisibility(view, figure);
  const groups = new Set([before.head, view.pick.head].flatMap((h) => (h < 0 ? [...Array(50).keys()] : [h]))
    .map((h) => `h${h}`));
  const changed = figure.data.map((trace, i) => i).filter((i) => groups.has(figure.data[i].legendgroup));
  return view.Plotly.restyle(view.dom.lines, { visible: changed.map((i) => visible[i]) }, changed);
}

function layout(view) {
  const part = view.data.kinds[view.pick.kind];
  const dom = view.dom;
  dom.box.style.setProperty("--vz-text", `${view.data.text_px}px`);
  dom.read.textContent = part.read;
  dom.pair.classList.toggle("vz-beside", part.beside);
  const linesHome = part.beside ? dom.pair : dom.folded;
  if (dom.linesColumn.parentNode !== linesHome) linesHome.appendChild(dom.linesColumn);
  dom.folded.hidden = part.beside;
  dom.foldedTitle.textContent = part.lines_titles[view.pick.layer];
}

function fillPickers(view) {
  const { dom, data, pick } = view;
  const words = data.words;
  const part = data.kinds[pick.kind];
  dom.kindLabel.textContent = words.kind;
  dom.layerText.textContent = words.layer;
  dom.headText.textContent = words.head;
  // their names for a screen reader (and a test): the label's words alone, not the chosen option's with them
  dom.layer.setAttribute("aria-label", words.layer);
  dom.head.setAttribute("aria-label", words.head);
  dom.kindButtons.parentNode.setAttribute("aria-label", words.kind);
  dom.csv.textContent = words.csv;
  dom.linesRead.textContent = words.lines_read;
  fillKinds(view);
  const layers = Array.from({ length: part.layers }, (_, i) => [i, words.layer_names[i]]);
  options(dom.layer, layers, pick.layer);
  options(dom.head, headEntries(words.head_names), pick.head);
}

function options(select, entries, value) {
  const wanted = entries.map(([v, text]) => `${v}:${text}`).join("|");
  if (select.dataset.options !== wanted) {
    select.replaceChildren(...entries.map(([v, text]) => {
      const option = document.createElement("option");
      option.value = String(v);
      option.textContent = text;
      return option;
    }));
    select.dataset.options = wanted;
  }
  select.value = String(value);
}

async function drawAll(view) {
  // a new sentence: the large map first, and shown (the picture read first; plotly draws a 32-token map in
  // ~45 ms), then the grid and the layer's lines
  layout(view);
  fillPickers(view);
  await drawMap(view);
  await nextPaint();
  await Promise.all([drawGrid(view), drawLines(view)]);
}

// -- picks ------------------------------------------------------------------------------------------------
function valid(data, pick) {
  const part = pick && data.kinds && data.kinds[pick.kind];
  if (!part) return null;
  const layer = Math.min(Math.max(0, pick.layer | 0), part.layers - 1);
  const head = Math.min(Math.max(-1, pick.head | 0), part.heads - 1);
  return { kind: pick.kind, layer, head };
}

function writeUrl(view) {
  const url = new URL(window.location.href);
  for (const [name, param] of Object.entries(view.data.url_names)) url.searchParams.set(param, String(view.pick[name]));
  window.history.replaceState(window.history.state, "", url);
}

function tell(view, pick) {
  // the server is told a pick (a run that writes it to the URL): the run's head brings it back, an answer to this
  // browser and no move of the server's (apply)
  view.told.push({ ...pick });
  view.setStateValue("pick", { ...pick });
}

function askCsv(view, figure = {}) {
  // the shown pick's CSV (the server makes it, and writes the pick to the URL: told as a report is)
  view.told.push({ ...view.pick });
  view.setTriggerValue("csv", { ...view.pick, ...figure });
}

async function choose(view, change, at = performance.now()) {
  // `at`: when the reader picked (the event's time), for the view's own clock
  const before = view.pick;
  const r = view.r;
  const wanted = { ...before, ...change };
  if (!r.held(view.data, wanted)) {
    view.pending = wanted;                   // a new sentence's other picks are on their way (the whole body)
    return;
  }
  const next = r.valid(view.data, wanted);
  if (!next || sameSpot(next, before, pickNames(view))) return;
  view.pick = next;
  view.drawn = { ...next };
  const started = at;
  writeUrl(view);                                      // the link names the pick at once, as the pickers do
  if (view.data.teach) tell(view, view.pick);
  await r.drawPick(view, before, next, started);
}

function nextPaint() {
  // once the browser has shown what is drawn: a task after the next frame (work chained on the frame itself would
  // run before its paint and hold the picture back); a hidden tab has no frames: at most 100 ms (its timers' pace)
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 100);
  });
}

async function painted(box, started) {
  // once shown, with the time from the pick to it (benches read it)
  await nextPaint();
  box.dataset.paintedMs = (performance.now() - started).toFixed(1);
}

async function explorerPick(view, before, next, started) {
  const box = view.dom.box;
  fillPickers(view);
  // the grid's box and the large map first (the pick's picture), then the layer's lines (a plot of ~100
  // traces: plotly redraws them all, 3-10x the map's time)
  if (next.kind !== before.kind) {
    layout(view);
    await Promise.all([drawGrid(view), drawMap(view)]);
  } else {
    await Promise.all([moveGridBox(view), updateMap(view)]);
  }
  box.dataset.pickMs = (performance.now() - started).toFixed(1);
  box.dataset.drawnPick = `${next.kind}:${next.layer}:${next.head}`;
  await painted(box, started);
  if (!sameSpot(view.pick, next)) return;              // picked again meanwhile: that pick draws the lines
  if (next.kind !== before.kind || next.layer !== before.layer) {
    view.dom.foldedTitle.textContent = view.data.kinds[next.kind].lines_titles[next.layer];
    await drawLines(view);
  } else {
    await showLinesOnly(view, before);
  }
  box.dataset.linesMs = (performance.now() - started).toFixed(1);
  box.dataset.linesPick = `${next.kind}:${next.layer}:${next.head}`;
}

function listen(view) {
  const dom = view.dom;
  dom.kindButtons.addEventListener("change", (event) => choose(view, { kind: event.target.value }, event.timeStamp));
  dom.layer.addEventListener("change", (event) => choose(view, { layer: Number(dom.layer.value) }, event.timeStamp));
  dom.head.addEventListener("change", (event) => choose(view, { head: Number(dom.head.value) }, event.timeStamp));
  dom.csv.addEventListener("click", () => askCsv(view));
  dom.folded.addEventListener("toggle", () => { if (dom.folded.open) drawLines(view); });
  dom.grid.on("plotly_click", (event) => {
    const point = (event.points || []).find((p) => Array.isArray(p.customdata));
    if (point) choose(view, { layer: Number(point.customdata[0]), head: Number(point.customdata[1]) }, event.event ? event.event.timeStamp : undefined);
  });
}

// -- a deck: a page's pictures for every pick (viz/figures/browser_view.py deck()) ----------------------------
function deckSkeleton(root, names) {
  // the pickers the body's names ask for: a kind and a layer (or a layer alone), a step, or a step and a layer and
  // a head (the training page's snapshots and their maps'; the step-through page's head and its steps), each row of
  // them as the body's blocks place it, else in the names' order (a layer and a head, then their steps)
  const box = element("div", "vz-explorer vz-deck", root);
  const steps = names.includes("step") ? stepPicker(box) : {};
  const others = names.some((name) => name !== "step") ? kindAndLayer(box, names) : {};
  if (steps.stepRow && others.pickerRow && names[0] !== "step") box.insertBefore(others.pickerRow, steps.stepRow);
  const blocks = element("div", "vz-blocks", box);
  return { box, ...steps, ...others, blocks, slots: new Map() };
}

function stepPicker(box) {
  // a step: its name, ◀, a slider (the arrow keys move it when focused), ▶, the step shown and the last
  const row = element("div", "vz-pickers vz-steps", box);
  const stepLabel = element("span", "vz-step-label", row);
  const previous = element("button", "vz-step-button vz-previous", row);
  const slider = element("input", "vz-step", row);
  const next = element("button", "vz-step-button vz-next", row);
  const stepValue = element("output", "vz-step-value", row);
  previous.type = next.type = "button";
  previous.textContent = "◀";
  next.textContent = "▶";
  slider.type = "range";
  slider.min = "0";
  slider.step = "1";
  return { stepRow: row, stepLabel, previous, slider, next, stepValue };
}

function richText(target, text) {
  // the catalogue's light markup, as Streamlit's markdown shows it: **bold**, *italic*, $x_h$ / $W^O$ / $√d_k$ (sub-
  // and superscript; the server sent the maths's LaTeX commands as characters: viz/core/tex.py), `code`; every piece
  // set as text
  target.replaceChildren();
  for (const piece of String(text || "").split(/(\*\*[^*]+\*\*|\*[^*\s][^*]*\*|\$[^$]+\$|`[^`]+`)/)) {
    if (!piece) continue;
    if (piece.startsWith("`") && piece.endsWith("`") && piece.length > 2) {
      element("code", "", target).textContent = piece.slice(1, -1);
    } else if (piece.startsWith("**") && piece.endsWith("**") && piece.length > 4) {
      element("strong", "", target).textContent = piece.slice(2, -2);
    } else if (piece.startsWith("*") && piece.endsWith("*") && piece.length > 2) {
      element("em", "", target).textContent = piece.slice(1, -1);
    } else if (piece.startsWith("$") && piece.endsWith("$") && piece.length > 2) {
      const math = element("span", "vz-math", target);
      for (const part of piece.slice(1, -1).split(/([_^](?:\{[^}]*\}|.))/)) {
        if (!part) continue;
        if (part[0] === "_" || part[0] === "^") {
          element(part[0] === "_" ? "sub" : "sup", "", math).textContent = part.slice(1).replace(/^\{|\}$/g, "");
        } else {
          math.appendChild(document.createTextNode(part));
        }
      }
    } else {
      target.appendChild(document.createTextNode(piece));
    }
  }
}

// A formula block's MathML (viz/tour/formula_html.py formula_mathml, made on the server from numbers of the model's
// config, never from user text), parsed as XML and kept only as these MathML elements and attributes: anything
// else (a script, an unknown tag, an event handler, a link) is dropped, never inserted as HTML.
const MATHML_NS = "http://www.w3.org/1998/Math/MathML";
const MATH_TAGS = new Set(["math", "mrow", "mi", "mn", "mo", "mtext", "mspace", "msub", "msup", "msubsup", "munder",
  "mover", "munderover", "mfrac", "msqrt", "mroot", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom"]);
const MATH_ATTRIBUTES = new Set(["display", "stretchy", "form", "accent", "accentunder", "width", "height", "depth",
  "rspace", "lspace", "mathvariant", "columnalign", "fence", "separator", "minsize", "maxsize", "symmetric",
  "largeop", "movablelimits", "displaystyle", "scriptlevel", "linethickness"]);

function cleanMath(node) {
  // `node` kept as MathML (true), or to be dropped with everything in it (false)
  if (node.nodeType === Node.TEXT_NODE) return true;
  if (node.nodeType !== Node.ELEMENT_NODE || node.namespaceURI !== MATHML_NS || !MATH_TAGS.has(node.localName)) {
    return false;
  }
  for (const attribute of [...node.attributes]) {
    if (attribute.namespaceURI || !MATH_ATTRIBUTES.has(attribute.localName)) node.removeAttributeNode(attribute);
  }
  for (const child of [...node.childNodes]) if (!cleanMath(child)) child.remove();
  return true;
}

function mathNode(text) {
  // the formula's <math> element for this page, or null (not well-formed, not MathML)
  if (!text) return null;
  const parsed = new DOMParser().parseFromString(text, "application/xml");
  const root = parsed.documentElement;
  if (parsed.getElementsByTagName("parsererror").length || root.localName !== "math" || !cleanMath(root)) return null;
  return document.importNode(root, true);
}

function buildBlocks(view, blocks, parent) {
  for (const block of blocks) {
    const slot = { block };
    if (block.type === "figure") {
      slot.stack = element("div", "vz-stack", parent);           // the figure's plots, one pick's in sight
      slot.el = element("div", `vz-plot vz-fig-${block.id}`, slot.stack);
      slot.plots = new Map();                                    // pick -> its drawn plot (drawFigure, drawAhead)
      if (block.csv) {
        const csv = slot.csv = element("button", "vz-csv", parent);
        csv.type = "button";
        csv.dataset.figure = block.id;
        csv.textContent = view.data.words.csv;
        csv.addEventListener("click", () => askCsv(view, { figure: block.id }));
      }
    } else if (block.type === "text" || block.type === "heading") {
      slot.el = element(block.type === "heading" ? "h4" : "p", `vz-${block.type === "heading" ? "heading" : "caption"} vz-text-${block.id}`, parent);
      if (block.size) slot.el.classList.add(`vz-${block.size}`);      // a section's heading: the page's subheader
    } else if (block.type === "code") {
      slot.el = element("pre", `vz-code vz-code-${block.id}`, parent);
    } else if (block.type === "formula") {
      slot.el = element("div", `vz-formula vz-formula-${block.id}`, parent);
    } else if (block.type === "table" || block.type === "notes") {
      slot.el = element("div", `vz-${block.type} vz-${block.type}-${block.id}`, parent);
      if (block.scroll) slot.el.classList.add("vz-scroll");        // a long table scrolls in a box of its own
    } else if (block.type === "tabs") {
      const tabs = element("div", "vz-tabs", parent);
      const bar = element("div", "vz-tab-bar", tabs);
      bar.setAttribute("role", "tablist");
      const panels = block.tabs.map((tab, i) => {
        const button = element("button", "vz-tab", bar);
        button.type = "button";
        button.setAttribute("role", "tab");
        button.textContent = tab.title;
        const panel = element("div", "vz-tab-panel", tabs);
        panel.hidden = i !== 0;
        button.setAttribute("aria-selected", String(i === 0));
        button.addEventListener("click", () => {
          panels.forEach(([b, p], j) => { p.hidden = j !== i; b.setAttribute("aria-selected", String(j === i)); });
          drawStale(view);
        });
        buildBlocks(view, tab.blocks, panel);
        return [button, panel];
      });
    } else if (block.type === "columns") {
      const row = element("div", "vz-columns", parent);
      // their shares of the row ([3, 2]: three fifths and two); a phone stacks them (browser_view.css)
      if (block.widths) row.style.setProperty("--vz-columns", block.widths.map((w) => `minmax(0, ${Number(w)}fr)`).join(" "));
      for (const column of block.columns) buildBlocks(view, column, element("div", "vz-column", row));
    } else if (block.type === "pickers") {
      // where the kind, layer and head pickers go (the training page's: under the maps they pick for), their
      // words before them; with no such block they head the deck
      const row = view.dom.pickerRow;
      if (row) {
        const words = row.querySelector(".vz-pickers-title")
          || row.insertBefore(element("span", "vz-pickers-title"), row.firstChild);
        words.textContent = block.title || "";
        parent.appendChild(row);
      }
    } else if (block.type === "details") {
      const folded = element("details", `vz-folded vz-details-${block.id}`, parent);
      slot.el = element("summary", "", folded);
      slot.details = folded;
      folded.addEventListener("toggle", () => { if (folded.open) drawStale(view); });
      buildBlocks(view, block.blocks, element("div", "vz-details-body", folded));
    }
    if (block.id) view.dom.slots.set(block.id, slot);
  }
}

function deckKey(view, pick) {
  return pickText(pick, view.data.names);
}

const PART_FIELDS = ["figures", "files", "texts", "tables", "notes", "opens"];

function deckPart(data, key) {
  // a pick's part: its own blocks over its key's prefixes' ("3:1:-1" over "3": what every layer and head of a step
  // shows is sent once, under the step; "", the empty prefix: what every pick shows, compare's head A), and each
  // figure's home, the key of the part holding it: the plot drawn for it serves every pick under that key. A part
  // that is another's ({same: key}: the step-through's first step, the layer's input, every head's) is that one's,
  // its plots too. Undefined when the body holds no part of the pick (a first screen's).
  if (!data.picks[key]) return undefined;
  if (!data.parts) data.parts = new Map();
  if (!data.parts.has(key)) {
    const names = key.split(":");
    const prefixes = ["", ...names.map((_, i) => names.slice(0, i + 1).join(":"))];
    const part = { homes: {} };
    for (const prefix of prefixes.filter((prefix) => data.picks[prefix])) {
      const at = data.picks[prefix].same ?? prefix;
      const own = data.picks[at] || {};
      for (const field of PART_FIELDS) part[field] = { ...part[field], ...own[field] };
      for (const id of Object.keys(own.figures || {})) part.homes[id] = at;
    }
    data.parts.set(key, part);
  }
  return data.parts.get(key);
}

function deckValid(data, pick) {
  // a pick inside the body's: a kind it has and a layer of that kind (a deck with no kind: a layer of its one
  // stack), and a head of its heads (the mean, -1, where it offers it); a step of its steps (alone, or with a layer
  // and a head: the training page's snapshots)
  if (!pick) return null;
  const within = (value, lo, hi) => Math.min(Math.max(lo, value | 0), hi);
  const valid = {};
  if (data.names.includes("step")) valid.step = within(pick.step, 0, data.steps - 1);
  if (data.names.includes("kind")) {
    if (!data.layers || !(pick.kind in data.layers)) return null;
    valid.kind = pick.kind;
  }
  if (data.names.includes("layer")) {
    if (!data.layers) return null;
    valid.layer = within(pick.layer, 0, deckLayers(data, pick) - 1);
  }
  if (data.names.includes("head")) valid.head = within(pick.head, data.mean ? -1 : 0, data.heads - 1);
  return valid;
}

function deckLayers(data, pick) {
  // how many layers a pick's kind has; a deck with no kind, its one stack's
  return data.names.includes("kind") ? data.layers[pick.kind] : Math.max(...Object.values(data.layers));
}

function deckHeld(data, pick) {
  const valid = deckValid(data, pick);
  return !!valid && !!data.picks[pickText(valid, data.names)];
}

function fillKinds(view) {
  // the kind radios (made again for a new body: its words), the pick's checked
  const { dom, data, pick } = view;
  if (dom.kindButtons.dataset.sig !== data.sig) {
    dom.kindButtons.replaceChildren();
    for (const kind of Object.keys(data.words.kind_names)) {
      const label = element("label", "vz-kind", dom.kindButtons);
      const input = element("input", "", label);
      input.type = "radio";
      input.name = `vz-kind-${view.id}`;
      input.value = kind;
      element("span", "", label).textContent = data.words.kind_names[kind];
    }
    dom.kindButtons.dataset.sig = data.sig;
  }
  for (const input of dom.kindButtons.querySelectorAll("input")) input.checked = input.value === pick.kind;
}

function deckPickers(view) {
  if (view.dom.stepRow) stepPickers(view);
  if (view.dom.pickerRow) kindAndLayerPickers(view);
}

function kindAndLayerPickers(view) {
  const { dom, data, pick } = view;
  const words = data.words;
  if (dom.kindButtons) {
    dom.kindLabel.textContent = words.kind;
    dom.kindLabel.title = words.kind_help || "";          // what the kinds are (a page's own words: the zoo's)
    dom.kindButtons.parentNode.setAttribute("aria-label", words.kind);
    fillKinds(view);
  }
  if (dom.layer) {
    dom.layerText.textContent = words.layer;
    dom.layer.setAttribute("aria-label", words.layer);
    options(dom.layer, Array.from({ length: deckLayers(data, pick) }, (_, i) => [i, words.layer_names[i]]), pick.layer);
  }
  if (dom.head) {                               // a deck that picks a head: the explorer's select, the body's words
    dom.headText.textContent = words.head;
    dom.head.setAttribute("aria-label", words.head);
    options(dom.head, headEntries(words.head_names), pick.head);
  }
}

function stepPickers(view) {
  // the slider at the pick, its buttons off at the ends; one step: nothing to pick (the page says so). A body that
  // names its steps (the step-through page's nine) gets a row of them instead of the slider, and worded buttons
  const { dom, data, pick } = view;
  const words = data.words;
  const last = data.steps - 1;
  dom.stepRow.hidden = last < 1;
  dom.stepLabel.textContent = words.step;
  dom.stepLabel.title = dom.slider.title = words.step_help || "";   // what a step is, as the page's slider said
  dom.slider.setAttribute("aria-label", words.step);
  for (const [button, said] of [[dom.previous, words.previous], [dom.next, words.next]]) {
    button.setAttribute("aria-label", said);
    button.title = said;
  }
  const named = Array.isArray(words.step_names);
  dom.stepRow.classList.toggle("vz-named-steps", named);
  dom.slider.hidden = dom.stepValue.hidden = named;
  dom.previous.textContent = named ? words.previous : "◀";
  dom.next.textContent = named ? words.next : "▶";
  if (named) stepChoices(view);
  dom.slider.max = String(last);
  dom.slider.value = String(pick.step);
  dom.slider.setAttribute("aria-valuetext", `${pick.step} / ${last}`);
  dom.stepValue.textContent = `${pick.step} / ${last}`;
  dom.previous.disabled = pick.step <= 0;
  dom.next.disabled = pick.step >= last;
}

function stepChoices(view) {
  // the steps by name, one radio each (made again for new words), the pick's checked
  const { dom, data, pick } = view;
  if (!dom.choices) {
    dom.choices = element("div", "vz-step-choices", null);
    dom.choices.setAttribute("role", "radiogroup");
    dom.stepRow.insertBefore(dom.choices, dom.next);
  }
  const names = JSON.stringify(data.words.step_names);
  if (dom.choices.dataset.names !== names) {
    dom.choices.replaceChildren(...data.words.step_names.map((name, step) => {
      const label = element("label", "vz-kind vz-step-choice", null);
      const input = element("input", "", label);
      input.type = "radio";
      input.name = `vz-step-${view.id}`;
      input.value = String(step);
      element("span", "", label).textContent = name;
      return label;
    }));
    dom.choices.dataset.names = names;
  }
  dom.choices.setAttribute("aria-label", data.words.step);
  for (const input of dom.choices.querySelectorAll("input")) input.checked = Number(input.value) === pick.step;
}

function shown(el) {
  return !el.closest("details:not([open]) > .vz-details-body, [hidden]");    // not in a closed section or another tab
}

// What a pick changes in a figure of the same frame (another layer of the same kind: the same tokens, panels and
// axes): each trace's numbers, the title, the colour range. Anything else differs: the figure is drawn anew.
const SWAPPED = ["z", "y", "zmin", "zmax", "text", "customdata", "hovertemplate"];

function frameOf(figure) {
  if (!figure.frame) {
    const { title, coloraxis, ...layout } = figure.layout;
    const traces = figure.data.map((trace) => {
      const kept = { ...trace };
      for (const key of SWAPPED) delete kept[key];
      return kept;
    });
    figure.frame = JSON.stringify([layout, traces, !!title, !!coloraxis]);
  }
  return figure.frame;
}

function unpacked(value) {
  // a typed-array spec ({dtype, bdata, shape}: figure_spec) as plotly.restyle takes it: rows of numbers
  if (!value || typeof value !== "object" || !value.bdata) return value;
  const flat = floats(value);
  const shape = String(value.shape || flat.length).split(",").map(Number);
  if (shape.length < 2) return Array.from(flat);
  const [rows, cols] = shape;
  return Array.from({ length: rows }, (_, i) => Array.from(flat.subarray(i * cols, (i + 1) * cols)));
}

// A deck's figure keeps a plot per pick it drew, out of sight but for the pick shown: a pick drawn before, or drawn
// ahead while the reader looks (drawAhead: the picks next to the shown one), is shown at once; any other takes
// over the shown plot (the same frame: only its numbers restyled).
const KEPT_PLOTS = 10;          // per figure: a multi-head page's every kind x layer (9), a decoding's walk around a step
// plots drawn ahead at a time, all figures in sight together: each is a page of DOM a browser keeps and, when the
// reader leaves the page, takes down (the decoding page's five pictures: two steps either side)
const AHEAD_PLOTS = 20;

function drawFigure(view, id) {
  const part = deckPart(view.data, deckKey(view, view.pick));
  const slot = view.dom.slots.get(id);
  const figure = part && part.figures[id];
  view.stale.delete(id);
  if (!figure) return Promise.resolve();
  const key = part.homes[id];                    // the plot of the part that holds it (a step's curve: every head's)
  const kept = slot.plots.get(key);
  if (kept) {
    showPlot(slot, kept);
    if (kept._context) kept._context.toImageButtonOptions = config(view, part.files[id]).toImageButtonOptions;
    return Promise.resolve();
  }
  for (const [other, plot] of slot.plots) if (plot === slot.el) slot.plots.delete(other);
  slot.plots.set(key, slot.el);
  return plotFigure(view, slot.el, figure, part.files[id]);
}

function inPlace(view, id) {
  // whether the plot in sight already shows the pick's figure (a step's curve, when only the head changed)
  const part = deckPart(view.data, deckKey(view, view.pick));
  const slot = view.dom.slots.get(id);
  return !!part && !!part.figures[id] && slot.plots.get(part.homes[id]) === slot.el && slot.el.figure === part.figures[id];
}

function forgetPlots(view) {
  // every figure's plots but the one in sight (the next pick takes it over)
  for (const slot of view.dom.slots.values()) {
    if (slot.block.type !== "figure") continue;
    for (const plot of slot.plots.values()) if (plot !== slot.el) dropPlot(view, plot);
    slot.plots.clear();
  }
}

function showPlot(slot, plot) {
  // the figure's class (what tests and styles find) goes with the plot in sight
  if (slot.el === plot) return;
  slot.el.classList.replace(`vz-fig-${slot.block.id}`, "vz-offstage");
  plot.classList.replace("vz-offstage", `vz-fig-${slot.block.id}`);
  slot.el = plot;
}

function plotFigure(view, plot, figure, file) {
  const options = config(view, file);
  const before = plot.figure;
  plot.figure = figure;
  if (before && plot._fullLayout && frameOf(before) === frameOf(figure)) {
    // the same frame: restyle what changed (traces grouped by the keys that changed in them: every head's weights,
    // most often), relayout the title and the colour range, in one Plotly.update
    const groups = new Map();
    figure.data.forEach((trace, i) => {
      const keys = SWAPPED.filter((key) => JSON.stringify(trace[key]) !== JSON.stringify(before.data[i][key]));
      if (keys.length) groups.set(keys.join(), [...(groups.get(keys.join()) || []), i]);
    });
    const layout = {};
    if (figure.layout.title && JSON.stringify(figure.layout.title) !== JSON.stringify(before.layout.title)) {
      layout["title.text"] = figure.layout.title.text;
    }
    if (JSON.stringify(figure.layout.coloraxis) !== JSON.stringify(before.layout.coloraxis)) {
      layout.coloraxis = figure.layout.coloraxis;
    }
    plot._context.toImageButtonOptions = options.toImageButtonOptions;
    const calls = [...groups].map(([keys, indices]) => {
      const changed = Object.fromEntries(keys.split(",").map((key) => [key, indices.map((i) => unpacked(figure.data[i][key]))]));
      return [changed, indices];
    });
    if (!calls.length) return view.Plotly.relayout(plot, layout);
    return calls.reduce((done, [changed, indices], n) => done.then(() => (
      n === 0 ? view.Plotly.update(plot, changed, layout, indices) : view.Plotly.restyle(plot, changed, indices))),
    Promise.resolve());
  }
  // plotly writes into what it is given (an axis's autorange into its layout): a copy, the body's stays as built
  const layout = structuredClone(figure.layout);
  for (const [name, axis] of Object.entries(layout)) {
    // the room Streamlit's chart theme gives an axis's ticks and title (st.plotly_chart drew these figures before)
    if (/^[xy]axis\d*$/.test(name) && axis && axis.automargin === undefined) axis.automargin = true;
  }
  return view.Plotly.react(plot, structuredClone(figure.data), withTemplate(view, layout), options);
}

function pickDistance(view, key) {
  // how far a pick is from the shown one: the names that differ, then by how much (a kind: 1); a deck whose body
  // names the pick most made (`ahead`: the step-through's step, Next ▶ after Next ▶) weighs the others' tenfold, so
  // that the plots of another head go before its own steps' (keepNearest; drawAhead draws only its steps)
  const { names, ahead } = view.data;
  const shownPick = deckKey(view, view.pick).split(":");
  const differences = key.split(":").map((value, i) => (value === shownPick[i] ? 0
    : (Math.abs(Number(value) - Number(shownPick[i])) || 1) * (ahead && names[i] !== ahead ? 10 : 1)));
  return differences.filter(Boolean).length * 1000 + differences.reduce((a, b) => a + b, 0);
}

const idle = (work) => (window.requestIdleCallback ? window.requestIdleCallback(work, { timeout: 2000 })
  : setTimeout(work, 50));

function drawAhead(view) {
  // the picks next to the shown one (a layer or a kind away; a step either side; a deck with `ahead`, the other
  // values of that name only: the step-through's other steps of the head, not another head's, whose drawing kept the
  // browser busy after every Next), each figure in sight, one plot at a time while the browser is idle; stops when
  // another body or pick comes
  const { data, pick } = view;
  if (!data.whole || view.r !== RENDERERS.deck) return;
  const inSight = [...view.dom.slots].filter(([, slot]) => slot.block.type === "figure" && shown(slot.stack));
  const whole = data.names.length;              // picks, not the parts their prefixes hold (deckPart)
  const shownKey = deckKey(view, pick).split(":");
  const along = data.names.indexOf(data.ahead);  // a deck that names its most made pick: only its neighbours
  const near = Object.keys(data.picks).filter((key) => key !== "" && key.split(":").length === whole
    && pickDistance(view, key) > 0
    && (along < 0 || key.split(":").every((value, i) => i === along || value === shownKey[i])))
    .sort((a, b) => pickDistance(view, a) - pickDistance(view, b))
    .slice(0, Math.max(1, Math.min(KEPT_PLOTS - 1, Math.floor(AHEAD_PLOTS / Math.max(1, inSight.length)))));
  const jobs = near.flatMap((key) => {
    const part = deckPart(data, key);
    return inSight.filter(([id]) => part.figures[id]).map(([id, slot]) => [part, id, slot]);
  });
  const next = () => {
    if (view.data !== data || view.pick !== pick || !jobs.length) return;
    const [part, id, slot] = jobs.shift();
    const key = part.homes[id];
    if (slot.plots.has(key) || !slot.stack.isConnected) return next();
    const plot = element("div", "vz-plot vz-offstage", slot.stack);
    slot.plots.set(key, plot);
    keepNearest(view, slot);
    Promise.resolve(plotFigure(view, plot, part.figures[id], part.files[id]))
      .catch((error) => console.error("attention view", error)).then(() => idle(next));
  };
  idle(next);
}

function keepNearest(view, slot) {
  // at most KEPT_PLOTS plots a figure: the farthest from the shown pick go (never the one in sight)
  const far = [...slot.plots].filter(([, plot]) => plot !== slot.el)
    .sort(([a], [b]) => pickDistance(view, b) - pickDistance(view, a));
  while (slot.plots.size > KEPT_PLOTS && far.length) {
    const [key, plot] = far.shift();
    slot.plots.delete(key);
    dropPlot(view, plot);
  }
}

function dropPlot(view, plot) {
  view.Plotly.purge(plot);
  plot.remove();
}

function drawStale(view) {
  return Promise.all([...view.stale].filter((id) => shown(view.dom.slots.get(id).stack)).map((id) => drawFigure(view, id)));
}

function fillWords(view) {
  // a pick's words, tables and checks (text only), its sections open as the page opens them
  const part = deckPart(view.data, deckKey(view, view.pick));
  for (const [id, slot] of view.dom.slots) {
    const type = slot.block.type;
    if (type === "figure") {                // a pick without this picture (a step with one map, not two): no room
      slot.stack.hidden = !part.figures[id];
      if (slot.csv) slot.csv.hidden = !part.figures[id];
    } else if (type === "details") {        // a section with nothing of this pick in it (no full matrix): none
      slot.details.hidden = !holds(part, slot.block.blocks);
    }
    const words = JSON.stringify([part.texts[id], part.tables[id], part.notes[id]]);
    if (slot.words === words && type !== "details") continue;    // the same words as the pick before
    slot.words = words;
    if (type === "code") {
      slot.el.textContent = part.texts[id] || "";
    } else if (type === "formula") {
      const math = mathNode(part.texts[id]);
      slot.el.replaceChildren(...(math ? [math] : []));
      slot.el.hidden = !math;
    } else if (type === "text" || type === "heading" || type === "details") {
      const text = part.texts[id] !== undefined ? part.texts[id] : slot.block.title;
      richText(slot.el, text || "");
      if (type !== "details") slot.el.hidden = !text;
      if (type === "details" && part.opens[id] !== undefined && view.openedFor !== view.data.sentence) {
        slot.details.open = part.opens[id] || slot.details.open;
      }
    } else if (type === "table") {
      slot.el.replaceChildren(table(part.tables[id]));
    } else if (type === "notes") {
      slot.el.replaceChildren(...(part.notes[id] || []).map((note) => {
        const line = document.createElement("p");
        line.className = `vz-note ${note.ok ? "vz-ok" : "vz-bad"}`;
        richText(line, note.text);
        return line;
      }));
    }
  }
  view.openedFor = view.data.sentence;
}

function holds(part, blocks) {
  // whether a pick has anything for these blocks to show (a figure, words, a table, checks)
  return blocks.some((block) => (block.id && (part.figures[block.id] || part.texts[block.id] || part.tables[block.id]
    || (part.notes[block.id] || []).length)) || (block.type === "text" && block.title)
    || holds(part, [...(block.blocks || []), ...(block.tabs || []).flatMap((tab) => tab.blocks),
                    ...(block.columns || []).flat()]));
}

function table(spec) {
  const made = document.createElement("table");
  if (!spec) return made;
  const headRow = element("tr", "", element("thead", "", made));
  element("th", "", headRow);
  for (const column of spec.columns) element("th", "", headRow).textContent = column;
  const body = element("tbody", "", made);
  spec.rows.forEach((row, i) => {
    const line = element("tr", "", body);
    element("th", "", line).textContent = spec.index[i];
    for (const cell of row) element("td", "", line).textContent = cell;
  });
  return made;
}

async function deckDraw(view, started) {
  // the pick's words at once; its figures in sight (the main picture first), those out of sight when shown
  const box = view.dom.box;
  box.style.setProperty("--vz-text", `${view.data.text_px}px`);   // the page's type scale (presenter: 20 px up)
  const layoutKey = JSON.stringify([view.data.blocks, view.data.words.csv]);
  if (view.dom.layoutKey !== layoutKey) {       // the layout, once a layout (its words): a sentence's whole body
    for (const plot of view.r.plots(view)) view.Plotly.purge(plot);    // keeps the first screen's (no page
    view.dom.slots.clear();                                            // collapsing under the reader)
    view.dom.blocks.replaceChildren();
    buildBlocks(view, view.data.blocks, view.dom.blocks);
    view.dom.layoutKey = layoutKey;
  }
  if (view.dom.plotsOf !== view.data.sentence) {    // another sentence: the plots drawn for the last one's picks go
    forgetPlots(view);
    view.dom.plotsOf = view.data.sentence;
  }
  const figures = [...view.dom.slots].filter(([, slot]) => slot.block.type === "figure").map(([id]) => id);
  view.stale = new Set(figures);
  deckPickers(view);
  fillWords(view);
  // the first picture the pick changes first (a head picked: the maps, the step's curve staying as it is)
  const inSight = figures.filter((id) => shown(view.dom.slots.get(id).stack));
  const [first, ...rest] = [...inSight.filter((id) => !inPlace(view, id)), ...inSight.filter((id) => inPlace(view, id))];
  if (first) await drawFigure(view, first);
  const pick = pickText(view.pick, view.data.names);
  box.dataset.pickMs = (performance.now() - started).toFixed(1);
  box.dataset.drawnPick = pick;
  await painted(box, started);
  if (pickText(view.pick, view.data.names) !== pick) return;     // picked again meanwhile
  await Promise.all(rest.map((id) => drawFigure(view, id)));
  box.dataset.linesMs = (performance.now() - started).toFixed(1);
  box.dataset.linesPick = pick;
  drawAhead(view);
}

function deckListen(view) {
  const dom = view.dom;
  if (dom.slider) {
    dom.slider.addEventListener("input", (event) => choose(view, { step: Number(dom.slider.value) }, event.timeStamp));
    dom.previous.addEventListener("click", (event) => choose(view, { step: view.pick.step - 1 }, event.timeStamp));
    dom.next.addEventListener("click", (event) => choose(view, { step: view.pick.step + 1 }, event.timeStamp));
    // the named steps' row (stepChoices): a click on a step; the arrow keys anywhere in the row step back and on,
    // stopping at the ends (a radio group's own keys wrap around from the last step to the first)
    dom.stepRow.addEventListener("change", (event) => {
      if (event.target.closest(".vz-step-choices")) choose(view, { step: Number(event.target.value) }, event.timeStamp);
    });
    dom.stepRow.addEventListener("keydown", (event) => {
      const by = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 }[event.key];
      if (!by || !dom.choices || event.target === dom.slider) return;
      event.preventDefault();
      const onChoice = !!event.target.closest(".vz-step-choices");
      choose(view, { step: view.pick.step + by }, event.timeStamp);
      const checked = onChoice && dom.choices.querySelector("input:checked");
      if (checked) checked.focus();
    });
  }
  if (dom.kindButtons) dom.kindButtons.addEventListener("change", (event) => choose(view, { kind: event.target.value }, event.timeStamp));
  if (dom.layer) dom.layer.addEventListener("change", (event) => choose(view, { layer: Number(dom.layer.value) }, event.timeStamp));
  if (dom.head) dom.head.addEventListener("change", (event) => choose(view, { head: Number(dom.head.value) }, event.timeStamp));
}

const RENDERERS = {
  explorer: {
    names: EXPLORER_NAMES,
    skeleton,
    init: async (view) => {
      await view.Plotly.newPlot(view.dom.grid, [], {}, { displaylogo: false });   // gives the grid its .on()
      listen(view);
    },
    valid,
    held: (data, pick) => !!(data.kinds && data.kinds[pick.kind]),
    drawAll,
    drawPick: explorerPick,
    more: (view) => drawLines(view),              // a layer picked before its lines were here
    plots: (view) => [view.dom.grid, view.dom.map, view.dom.lines],
  },
  deck: {
    names: ["kind", "layer"],
    skeleton: deckSkeleton,
    init: async (view) => deckListen(view),
    valid: deckValid,
    held: deckHeld,
    drawAll: (view) => deckDraw(view, performance.now()),
    drawPick: (view, before, next, started) => deckDraw(view, started),
    more: (view) => Promise.resolve(drawAhead(view)),      // a sentence's whole body: the picks near the shown one
    plots: (view) => [...view.dom.slots.values()].filter((slot) => slot.block.type === "figure")
      .flatMap((slot) => [...new Set([slot.el, ...slot.plots.values()])]),
  },
};

function download(view, csv) {
  if (!csv || view.downloaded === csv.id) return;
  view.downloaded = csv.id;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([csv.text], { type: "text/csv" }));
  link.download = csv.name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

let counter = 0;

async function useRenderer(view, name) {
  // the body says which pictures it holds: its skeleton made once (again if the element is given another's)
  const r = RENDERERS[name] || RENDERERS.explorer;
  const names = (view.data.names || r.names).join();
  if (view.r === r && view.skeletonFor === names) return;
  if (view.dom) view.dom.box.remove();         // only ours: Streamlit keeps the element's CSS in the root too
  view.r = r;
  view.skeletonFor = names;
  view.dom = r.skeleton(view.root, view.data.names || r.names);
  view.pick = null;
  view.drawn = null;
  await r.init(view);
}

async function receiveBody(view, args) {
  // the element's data: a sentence's body (the same bytes every run of it: Streamlit sends them once)
  const { data, setStateValue, setTriggerValue } = args;
  const { head: about, body } = split(data);
  view.setStateValue = setStateValue;
  view.setTriggerValue = setTriggerValue;
  const held = view.data;
  const sameSentence = held && held.sentence === about.sentence;
  // a first screen's body of the sentence whose whole body is held: nothing new (a run that rebuilt nothing)
  const fresh = !held || (held.sig !== about.sig && !(sameSentence && held.whole && !about.whole));
  if (fresh) {
    const incoming = await unzip(body);
    view.data = { ...incoming, sig: about.sig };
    await useRenderer(view, incoming.view);
    view.weights = new Map(Object.entries(incoming.kinds || {}).map(([kind, part]) => [kind, floats(part.z)]));
    if (!sameSentence) {
      view.drawn = null;                     // a new sentence (or words, sizes): everything is drawn anew
    } else if (view.pending) {
      const pending = view.pending;          // the whole body of the sentence whose first screen is drawn: a pick
      view.pending = null;                   // the first screen's body did not hold
      await choose(view, pending);
    } else {
      await view.r.more(view);
    }
  }
  if (!view.data.whole && view.askedWhole !== about.sentence) {
    view.askedWhole = about.sentence;
    setTimeout(() => setTriggerValue("whole", about.sentence), 0);      // the rest, while this picture is drawn
  }
  if (view.data.whole) view.askedWhole = null;
  view.dom.box.dataset.whole = view.data.whole ? "1" : "0";      // every pick is here (tests and benches wait)
  if (fresh) view.dom.box.dataset.bodyBytes = String(body.length);     // the body as sent, gzipped (benches)
  await apply(view);
}

async function apply(view) {
  // the run's head (its own element: the pick the server ran with, the sidebar's image format, a CSV asked for)
  // on the body of its sentence
  const head = view.head;
  if (!head || !view.data || !view.r || head.sentence !== view.data.sentence) return;   // the body is on its way
  const r = view.r;
  view.data.teach = !!head.teach;
  view.data.image_format = head.image_format;
  // no plotly toolbar in presenter mode or on a phone (plotly_config's rule): its icons covered the charts' titles
  view.dom.box.classList.toggle("vz-no-toolbar", head.toolbar === false);
  for (const plot of r.plots(view)) {    // the sidebar's PNG/SVG, without a redraw
    const options = plot._context && plot._context.toImageButtonOptions;
    if (options && options.filename) options.format = head.image_format;
  }
  // the same head again (the element drawn anew, its data unchanged: a height that changed): no run came back,
  // nothing to tell the server
  const text = JSON.stringify(head);
  const again = text === view.lastHead && view.drawn;
  view.lastHead = text;
  if (again) return;
  const server = r.valid(view.data, head.pick);
  // the server's answer to a pick this browser told it (a report, a CSV asked for) is no move of the server's: a
  // pick made here since (while that run ran) is newer and stays (taking the answer drew the older pick again,
  // and the CSV asked next was the older pick's)
  const answered = view.told.findIndex((told) => sameSpot(server, told, pickNames(view)));
  if (answered >= 0) view.told.splice(0, answered + 1);
  const serverMoved = answered < 0 && !sameSpot(server, view.serverPick, pickNames(view));
  if (serverMoved) view.told = [];
  view.serverPick = server;
  const local = view.pick;                 // what this browser shows: its own pick, or the server's last
  if (!local || serverMoved) {
    view.pick = server;                     // a link, a class's view, the first draw: the server's view
    view.pending = null;
  } else if (!sameSpot(local, server, pickNames(view))) {
    // picked here since the server last ran (it ran for something else: the language, the sentence, a server-side
    // picker): keep the pick and tell the server once, so that its URL does not take it back; a pick this body
    // lacks (a first screen's) keeps what is drawn until the server's answer brings it (drawing the server's pick
    // meanwhile flashed it: step 0, then the reader's step again); with nothing drawn yet, the server's
    if (!sameSpot(local, view.told[view.told.length - 1], pickNames(view))) tell(view, local);
    const here = r.held(view.data, local) && r.valid(view.data, local);
    if (!here && view.dom.box.dataset.drawnPick) {
      download(view, head.csv);
      return;
    }
    view.pick = here || server;
  }
  if (!view.drawn || !sameSpot(view.pick, view.drawn, pickNames(view))) {
    view.drawn = { ...view.pick };
    await r.drawAll(view);
    const box = view.dom.box;
    box.dataset.drawnPick = box.dataset.linesPick = pickText(view.pick, pickNames(view));
    box.dataset.sig = view.data.sig;
    writeUrl(view);
  }
  download(view, head.csv);
}

function viewOf(root) {
  let view = VIEWS.get(root);
  if (!view) {
    view = { id: ++counter, root, dom: null, r: null, queue: null, head: window.vizExplorerHead || null, told: [] };
    view.queue = waitForPlotly().then((Plotly) => { view.Plotly = Plotly; });
    VIEWS.set(root, view);
  }
  if (window.vizExplorerHead) view.head = window.vizExplorerHead;   // the newest run's head (apply checks its sentence)
  // the head element's data, each run, to the view this page shows (one a page; the last mounted: another page's
  // view of an earlier run no longer listens)
  window.vizExplorerListeners = [(head) => {
    view.head = head;
    view.queue = view.queue.then(() => apply(view)).catch((error) => console.error("attention view", error));
  }];
  return view;
}

export default function (args) {
  const view = viewOf(args.parentElement);
  // one message at a time, in order (a rerun's may come while a sentence is still being unzipped)
  view.queue = view.queue.then(() => receiveBody(view, args)).catch((error) => console.error("attention view", error));
}
