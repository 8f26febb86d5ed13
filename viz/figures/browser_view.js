// The attention explorer in the browser (viz/browser_view.py mounts it; viz/figures/browser_view.py makes its
// data). The data holds every kind x layer x head once, with the figures plotly.py's builders made; a pick
// (kind, layer, head: the pickers, a click on the grid) redraws here, with no script run: the large map gets
// that pick's weights, keys, title and file name, the grid its box, the lines their layer and head. The pick is
// written to the URL at once; a teacher's is also reported to the server (setStateValue: one run, which
// rebuilds nothing, so that the class follows it). Words and file names come in the data, in the reader's
// language: nothing here is English. User text (tokens) is only ever set as text or handed to plotly.

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

function skeleton(root) {
  const box = element("div", "vz-explorer", root);
  const pickers = element("div", "vz-pickers", box);
  const kinds = element("div", "vz-kinds", pickers);
  kinds.setAttribute("role", "radiogroup");
  const kindLabel = element("span", "vz-label", kinds);
  const kindButtons = element("div", "vz-kind-buttons", kinds);
  const numbers = element("div", "vz-numbers", pickers);           // layer and head stay side by side
  const layerLabel = element("label", "vz-picker", numbers);
  const layerText = element("span", "vz-label", layerLabel);
  const layer = element("select", "vz-layer", layerLabel);
  const headLabel = element("label", "vz-picker", numbers);
  const headText = element("span", "vz-label", headLabel);
  const head = element("select", "vz-head", headLabel);
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

function sameSpot(a, b) {
  return !!a && !!b && a.kind === b.kind && a.layer === b.layer && a.head === b.head;
}

function pickIndex(part, pick) {
  return pick.layer * (part.heads + 1) + (pick.head + 1);   // pick_names: the mean (-1) first in each layer
}

// -- drawing ------------------------------------------------------------------------------------------------
function config(view, filename) {
  const options = { displaylogo: false, responsive: true };
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
  if (dom.kindButtons.dataset.sig !== data.sig) {
    dom.kindButtons.replaceChildren();
    for (const kind of Object.keys(words.kind_names)) {
      const label = element("label", "vz-kind", dom.kindButtons);
      const input = element("input", "", label);
      input.type = "radio";
      input.name = `vz-kind-${view.id}`;
      input.value = kind;
      element("span", "", label).textContent = words.kind_names[kind];
    }
    dom.kindButtons.dataset.sig = data.sig;
  }
  for (const input of dom.kindButtons.querySelectorAll("input")) input.checked = input.value === pick.kind;
  const layers = Array.from({ length: part.layers }, (_, i) => [i, words.layer_names[i]]);
  const heads = [-1, ...Array.from({ length: part.heads }, (_, h) => h)].map((h) => [h, words.head_names[String(h)]]);
  options(dom.layer, layers, pick.layer);
  options(dom.head, heads, pick.head);
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

function drawAll(view) {
  layout(view);
  fillPickers(view);
  return Promise.all([drawGrid(view), drawMap(view), drawLines(view)]);
}

// -- picks ------------------------------------------------------------------------------------------------
function valid(data, pick) {
  const part = pick && data.kinds[pick.kind];
  if (!part) return null;
  const layer = Math.min(Math.max(0, pick.layer | 0), part.layers - 1);
  const head = Math.min(Math.max(-1, pick.head | 0), part.heads - 1);
  return { kind: pick.kind, layer, head };
}

function writeUrl(view) {
  const names = view.data.url_names;
  const url = new URL(window.location.href);
  url.searchParams.set(names.kind, view.pick.kind);
  url.searchParams.set(names.layer, String(view.pick.layer));
  url.searchParams.set(names.head, String(view.pick.head));
  window.history.replaceState(window.history.state, "", url);
}

function report(view) {
  view.reported = { ...view.pick };
  view.setStateValue("pick", view.reported);
}

async function choose(view, change) {
  const before = view.pick;
  if (change.kind && !view.data.kinds[change.kind]) {
    view.pending = { ...before, ...change };   // a new sentence's other kinds are on their way (the whole body)
    return;
  }
  const next = valid(view.data, { ...before, ...change });
  if (!next || sameSpot(next, before)) return;
  view.pick = next;
  view.drawn = { ...next };
  const started = performance.now();
  const box = view.dom.box;
  writeUrl(view);                                      // the link names the pick at once, as the pickers do
  if (view.data.teach) report(view);
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
  await new Promise(requestAnimationFrame);
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
  dom.kindButtons.addEventListener("change", (event) => choose(view, { kind: event.target.value }));
  dom.layer.addEventListener("change", () => choose(view, { layer: Number(dom.layer.value) }));
  dom.head.addEventListener("change", () => choose(view, { head: Number(dom.head.value) }));
  dom.csv.addEventListener("click", () => view.setTriggerValue("csv", { ...view.pick }));
  dom.folded.addEventListener("toggle", () => { if (dom.folded.open) drawLines(view); });
  dom.grid.on("plotly_click", (event) => {
    const point = (event.points || []).find((p) => Array.isArray(p.customdata));
    if (point) choose(view, { layer: Number(point.customdata[0]), head: Number(point.customdata[1]) });
  });
}

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
    view.weights = new Map(Object.entries(incoming.kinds).map(([kind, part]) => [kind, floats(part.z)]));
    if (!sameSentence) {
      view.drawn = null;                     // a new sentence (or words, sizes): everything is drawn anew
    } else if (view.pending) {
      const pending = view.pending;          // the whole body of the sentence whose first screen is drawn: a pick
      view.pending = null;                   // of a kind the first screen's body did not hold
      await choose(view, pending);
    } else {
      await drawLines(view);                 // a layer picked before its lines were here
    }
  }
  if (!view.data.whole && view.askedWhole !== about.sentence) {
    view.askedWhole = about.sentence;
    setTimeout(() => setTriggerValue("whole", about.sentence), 0);      // after this picture is up
  }
  if (view.data.whole) view.askedWhole = null;
  view.dom.box.dataset.whole = view.data.whole ? "1" : "0";      // every kind is here (tests and benches wait)
  await apply(view);
}

async function apply(view) {
  // the run's head (its own element: the pick the server ran with, the sidebar's image format, a CSV asked for)
  // on the body of its sentence
  const head = view.head;
  if (!head || !view.data || head.sentence !== view.data.sentence) return;   // the body is on its way
  view.data.teach = !!head.teach;
  view.data.image_format = head.image_format;
  // no plotly toolbar in presenter mode or on a phone (plotly_config's rule): its icons covered the charts' titles
  view.dom.box.classList.toggle("vz-no-toolbar", head.toolbar === false);
  for (const plot of [view.dom.grid, view.dom.map, view.dom.lines]) {    // the sidebar's PNG/SVG, without a redraw
    const options = plot._context && plot._context.toImageButtonOptions;
    if (options && options.filename) options.format = head.image_format;
  }
  const server = valid(view.data, head.pick);
  const serverMoved = !sameSpot(server, view.serverPick);
  view.serverPick = server;
  const local = view.pick;                 // what this browser shows: its own pick, or the server's last
  if (!local || serverMoved) {
    view.pick = server;                     // a link, a class's view, the first draw: the server's view
    view.pending = null;
  } else if (!sameSpot(local, server)) {
    // picked here since the server last ran (it ran for something else: the language, the sentence): keep the
    // pick and tell the server once, so that its URL does not take it back; a kind this body lacks (a first
    // screen's) shows the server's until the server's answer brings it
    if (!sameSpot(local, view.reported)) {
      view.reported = { ...local };
      view.setStateValue("pick", view.reported);
    }
    view.pick = valid(view.data, local) || server;
  }
  if (!view.drawn || !sameSpot(view.pick, view.drawn)) {
    view.drawn = { ...view.pick };
    await drawAll(view);
    const box = view.dom.box;
    box.dataset.drawnPick = box.dataset.linesPick = `${view.pick.kind}:${view.pick.layer}:${view.pick.head}`;
    box.dataset.sig = view.data.sig;
    writeUrl(view);
  }
  download(view, head.csv);
}

function viewOf(root) {
  let view = VIEWS.get(root);
  if (!view) {
    view = { id: ++counter, dom: skeleton(root), queue: null, head: window.vizExplorerHead || null };
    view.queue = waitForPlotly().then(async (Plotly) => {
      view.Plotly = Plotly;
      await Plotly.newPlot(view.dom.grid, [], {}, { displaylogo: false });   // gives the grid its .on()
      listen(view);
    });
    VIEWS.set(root, view);
    window.vizExplorerListeners = [(head) => {          // the head element's data, each run (one view a page)
      view.head = head;
      view.queue = view.queue.then(() => apply(view)).catch((error) => console.error("attention view", error));
    }];
  }
  return view;
}

export default function (args) {
  const view = viewOf(args.parentElement);
  // one message at a time, in order (a rerun's may come while a sentence is still being unzipped)
  view.queue = view.queue.then(() => receiveBody(view, args)).catch((error) => console.error("attention view", error));
}
