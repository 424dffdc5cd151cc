// The live view's page: polls /api/state five times a second, draws the
// pipeline and the event list, opens a waterfall on a click and sends the
// controls. Served from the binary; it loads nothing from any other host.
// The same page is the live view of a user's own process
// (dropin.LiveViewHandler): its state has "process" in place of
// "pipeline", and the page draws every informer and workqueue of that
// process, read-only, instead of the demo's pipeline, controls and events.
"use strict";
const $ = (id) => document.getElementById(id);
const fmtMicros = (us) => us >= 1000 ? (us / 1000).toFixed(1) + " ms" : Math.round(us) + " µs";
let paused = false;

function text(id, v) { const e = $(id); if (e.textContent !== String(v)) e.textContent = v; }

// pulse flashes an arrow when something went through it since the last poll:
// events flowing along the pipeline.
const last = {};
function pulse(el, key, value) {
  if (last[key] !== undefined && last[key] !== value) {
    el.classList.remove("flow");
    void el.offsetWidth; // restart the animation
    el.classList.add("flow");
  }
  last[key] = value;
}

// requestLine is one request of the reflector, as the box lists it: the
// verb, the resourceVersion it asked for, then what came of it. A STREAM is
// a WATCH with sendInitialEvents=true: it sends the whole state as objects,
// then a bookmark (k8s.io/initial-events-end) at the resourceVersion that
// state is at, and goes on as the watch.
function requestLine(q) {
  const parts = [`${q.verb} from ${q.rv === "" ? "the latest" : q.rv}`];
  const objects = (n) => `${n} object${n === 1 ? "" : "s"}`;
  if (q.verb === "STREAM" && !q.outcome) {
    parts.push(q.bookmark ? `${objects(q.objects)} · bookmark rv ${q.bookmark}` : `${objects(q.objects)} so far…`);
  } else if (q.verb === "STREAM" && q.objects > 0) {
    parts.push(objects(q.objects)); // then cut, or ended by an ERROR event
  } else if (q.verb === "LIST" && !q.outcome) {
    parts.push(objects(q.objects));
  }
  if (q.outcome) parts.push(q.outcome);
  return parts.join(" · ");
}

// drawRequests lists the reflector's last requests, oldest first, so a
// reader sees which request followed a dropped watch (a WATCH from the same
// resourceVersion), a 410 (a new STREAM) or a refused stream (a LIST): the
// counters alone cannot say.
const shownRequests = 5;
function drawRequests(reqs) {
  const lines = reqs.slice(-shownRequests).map(requestLine);
  const ol = $("reflector-requests");
  if (ol.dataset.lines === lines.join("|")) return;
  ol.dataset.lines = lines.join("|");
  ol.replaceChildren(...lines.map((l) => { const li = document.createElement("li"); li.textContent = l; return li; }));
}

// streamLine says how the reflector got the whole state: streaming now
// (how many objects so far), the bookmark that ended the last stream, or a
// LIST (where the server cannot stream).
function streamLine(r) {
  const objects = (n) => `${n} object${n === 1 ? "" : "s"}`;
  if (r.phase === "STREAM") return `streaming the initial state: ${objects(r.streamed)} so far, waiting for the bookmark`;
  if (r.fetched === "stream") return `initial state: ${objects(r.streamed)} streamed, bookmark at rv ${r.bookmark}`;
  if (r.fetched === "list") return `initial state: ${objects(r.listed)} listed (no stream)`;
  return "";
}

function drawPipeline(p) {
  p.listeners = p.listeners || []; // none before the informer is attached
  text("informer", p.informer);
  text("source", p.source);
  const r = p.reflector;
  text("reflector-phase", r.phase);
  text("reflector-rv", r.rv || "–");
  text("reflector-streams", r.streams);
  text("reflector-lists", r.lists);
  text("reflector-watches", r.watches);
  text("reflector-events", r.watchEvents);
  text("reflector-errors", r.watchErrors);
  // Without a probe on the reflector's requests (phase "–": an informer
  // whose ListerWatcher the factory built), say so rather than show
  // counters stuck at 0.
  const probed = r.phase !== "–";
  $("reflector-counts").hidden = !probed;
  $("reflector-unprobed").hidden = probed;
  text("reflector-stream", probed ? streamLine(r) : "");
  text("reflector-error", r.lastError || "");
  drawRequests(r.requests || []);
  $("st-reflector").classList.toggle("busy", r.phase === "LIST" || r.phase === "STREAM");
  text("queue-kind", p.queue.kind === "deltafifo" ? "DeltaFIFO" : "RealFIFO");
  text("queue-depth", p.queue.depth);
  $("st-queue").classList.toggle("busy", p.queue.depth > 0);
  $("queue-bar").style.width = Math.min(100, p.queue.depth / 10) + "%";
  text("handledeltas", p.handleDeltas);
  text("indexer", p.indexer);
  text("indexer-held", bytesText(p));
  text("reflector-relist", relistText(p));
  const arrows = document.querySelectorAll("#pipeline > .arrow");
  pulse(arrows[0], "in", [r.watchEvents, r.streamed, r.lists, r.streams].join());
  pulse(arrows[1], "hd", p.handleDeltas);
  pulse(arrows[2], "dist", p.handleDeltas);
  pulse(arrows[3], "fan", p.handleDeltas);
  const box = $("listeners");
  const names = p.listeners.map((l) => l.name + (l.workqueue ? "+wq" : "")).join("|");
  if (box.dataset.names !== names) {
    box.dataset.names = names;
    box.innerHTML = "";
    p.listeners.forEach((l, i) => {
      const row = document.createElement("div");
      row.className = "listener";
      row.dataset.listener = l.name;
      row.innerHTML = `<span class="name"></span>
        <div class="stage" data-k="addCh"><h2>addCh</h2><span class="v"></span></div><span>→</span>
        <div class="stage" data-k="pending"><h2>pending</h2><span class="v"></span></div><span>→</span>
        <div class="stage" data-k="nextCh"><h2>nextCh</h2><span class="v">·</span></div><span>→</span>
        <div class="stage" data-k="handler"><h2>handler</h2><span class="v"></span></div>`;
      if (l.workqueue) {
        // A controller's handler: its workqueue and reconciles go on the row.
        row.insertAdjacentHTML("beforeend", `<span>→</span>
        <div class="stage" data-k="workqueue"><h2>workqueue</h2><span class="v"></span></div><span>→</span>
        <div class="stage" data-k="reconcile"><h2>reconcile</h2><span class="v"></span></div>`);
      }
      row.querySelector(".name").textContent = l.name;
      box.appendChild(row);
    });
  }
  p.listeners.forEach((l, i) => {
    const row = box.children[i];
    const set = (k, v, busy) => {
      const s = row.querySelector(`[data-k="${k}"]`);
      const e = s.querySelector(".v");
      if (e.textContent !== v) e.textContent = v;
      s.classList.toggle("busy", busy);
    };
    set("addCh", String(l.addCh), l.addCh > 0);
    set("pending", String(l.pending), l.pending > 0);
    set("handler", `${l.calls} calls · mean ${fmtMicros(l.meanMicros)} · max ${fmtMicros(l.maxMicros)}`, false);
    if (l.workqueue) {
      const w = l.workqueue;
      set("workqueue", `${w.depth} waiting · ${w.adds} adds · ${w.merged} merged`, w.depth > 0);
      set("reconcile", `${w.reconciles} reconciles · last ${fmtMicros(w.lastMicros)}`, false);
    }
    row.querySelectorAll(".listener > span:not(.name)").forEach((a) => pulse(a, "l" + l.name + a.previousElementSibling.dataset.k, l.calls));
  });
}

function drawEvents(st) {
  // Spans the exporter's queue dropped (it was full: tracing never waits
  // for the exporter) are still here; only the exporter lacks them.
  const dropped = st.spansDropped ? `; ${st.spansDropped} spans not exported: the exporter could not keep up, and tracing drops rather than wait` : "";
  const ignored = st.traceparentsIgnored ? `; ${st.traceparentsIgnored} tracing.k8s.io/traceparent annotations ignored: they did not parse, so no link was made` : "";
  // A change whose trace was evicted (the newest traces are kept whole)
  // may still be in a handler's buffer or the workqueue: its later spans
  // are dropped, so that they cannot push out a newer trace.
  const late = st.lateSpansDropped ? `; ${st.lateSpansDropped} later spans of evicted traces dropped` : "";
  text("events-note", `(last ${st.events.length}; ${st.tracesKept} traces kept, ${st.tracesEvicted} evicted${late}${dropped}${ignored})`);
  const body = $("events").tBodies[0];
  const sig = st.events.map((e) => e.traceID + e.handlerCalls).join();
  if (body.dataset.sig === sig) return;
  body.dataset.sig = sig;
  body.innerHTML = "";
  for (const e of st.events) {
    const tr = body.insertRow();
    tr.dataset.key = e.key;
    tr.dataset.type = e.type;
    for (const v of [e.type, e.key, e.rv, e.handlerCalls, e.totalMicros ? fmtMicros(e.totalMicros) : "…"]) {
      tr.insertCell().textContent = v;
    }
    tr.onclick = () => openWaterfall(e);
  }
}

// cell appends a cell with v as its text (never as HTML: the names come
// from the user's process).
function cell(tr, v) { tr.insertCell().textContent = v; }

// fmtAgo says how long ago, from milliseconds.
const fmtAgo = (ms) => ms >= 60000 ? Math.round(ms / 60000) + " min" : ms >= 1000 ? (ms / 1000).toFixed(1) + " s" : ms + " ms";

// reflectorLine is a reflector's box of the demo in one line: its phase,
// how it got the whole state, its requests and events, and the times.
function reflectorLine(r) {
  const parts = [`reflector ${r.phase}`];
  if (r.phase === "idle" && r.idleMillis >= 0 && r.lastError) parts.push(`backing off for ${fmtAgo(r.idleMillis)} after an error`);
  const got = streamLine(r);
  if (got) parts.push(got);
  parts.push(`STREAM ${r.streams} · LIST ${r.lists} · WATCH ${r.watches} · events ${r.watchEvents} · errors ${r.watchErrors}`);
  if (r.unprobed) parts.push("this watch began before the live view existed: its events are counted from the next one");
  else parts.push(r.sinceEventMillis >= 0 ? `last event ${fmtAgo(r.sinceEventMillis)} ago` : "no event yet");
  return parts.join(" · ");
}

// drawProcess draws a user's process: one box per informer with its
// handlers, and one row per traced workqueue. Redrawn only when the state
// changed since the last poll.
let processSig = "";
function drawProcess(p) {
  if ($("process").hidden) {
    // The demo's parts have nothing to show here.
    for (const id of ["pipeline", "controls-box", "events-box", "waterfall-box"]) $(id).hidden = true;
    $("process").hidden = false;
    text("informer", "· your process");
  }
  const sig = JSON.stringify(p);
  if (sig === processSig) return;
  processSig = sig;
  const n = p.informers.length;
  text("source", `${n} informer${n === 1 ? "" : "s"}, ${p.queues.length} workqueue${p.queues.length === 1 ? "" : "s"}` +
    (p.traceparentsIgnored ? `; ${p.traceparentsIgnored} tracing.k8s.io/traceparent annotations ignored (did not parse)` : ""));
  const box = $("process-informers");
  box.replaceChildren(...p.informers.map((inf) => {
    const div = document.createElement("div");
    div.className = "stage informer" + (inf.queueDepth > 0 ? " busy" : "");
    const h = document.createElement("h2");
    h.textContent = inf.resource ? `${inf.resource} (${inf.type})` : inf.type;
    const line = document.createElement("div");
    line.className = "small";
    line.textContent = [inf.started ? (inf.synced ? "synced" : "syncing…") : "not started",
      `rv ${inf.rv || "–"}`, `${inf.queueKind === "deltafifo" ? "DeltaFIFO" : "RealFIFO"} ${inf.queueDepth} queued`,
      `${inf.handleDeltas} changes applied`, `${inf.cached} objects cached`].join(" · ");
    const held = document.createElement("div");
    held.className = "small held";
    held.textContent = heldLine(inf);
    const refl = document.createElement("div");
    refl.className = "small";
    refl.textContent = reflectorLine(inf.reflector);
    const err = document.createElement("div");
    err.className = "small err";
    err.textContent = inf.reflector.lastError || "";
    const reqs = document.createElement("ol");
    reqs.className = "small requests";
    reqs.title = "the reflector's last requests, oldest first";
    for (const q of (inf.reflector.requests || []).slice(-shownRequests)) reqs.appendChild(document.createElement("li")).textContent = requestLine(q);
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const t of ["handler", "addCh", "pending", "calls", "mean", "max", "synced"]) head.appendChild(document.createElement("th")).textContent = t;
    const body = table.createTBody();
    for (const l of inf.handlers) {
      const tr = body.insertRow();
      tr.dataset.listener = l.name;
      for (const v of [l.name, l.addCh, l.pending, l.calls, fmtMicros(l.meanMicros), fmtMicros(l.maxMicros), l.synced ? "yes" : "no"]) cell(tr, v);
    }
    div.append(h, line, held, refl, reqs, err, table);
    return div;
  }));
  const qb = $("process-queues").tBodies[0];
  qb.replaceChildren();
  for (const q of p.queues) {
    const tr = qb.insertRow();
    tr.dataset.queue = q.name;
    for (const v of [q.name, q.kind, q.depth, q.adds, q.merged, q.reconciles, q.retries, q.inFlight, q.inFlight ? fmtMicros(q.longestMicros) : "–", fmtMicros(q.meanMicros), fmtMicros(q.lastMicros)]) cell(tr, v);
  }
}

// fmtBytes is n bytes in the unit that reads best.
function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < units.length - 1);
  return `${n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

// heldLine says what the informer's cache holds (an estimate: see
// docs/07-your-controller.md) and its last relist: the process's box
// shows both on one line, the demo's Indexer box the first and its
// Reflector box the second. Both servers send the same fields
// (internal/livepage's Holdings).
function heldLine(inf) {
  return [bytesText(inf), relistText(inf)].filter((s) => s).join(" · ");
}

function bytesText(inf) {
  if (!(inf.cachedBytes >= 0)) return "";
  let s = `≈ ${fmtBytes(inf.cachedBytes)} held`;
  if (inf.bytesBeforeTransform >= 0) s += ` (≈ ${fmtBytes(inf.bytesBeforeTransform)} before the transform)`;
  return s;
}

function relistText(inf) {
  const r = inf.lastRelist;
  if (!r) return "";
  let s = `last relist: ${r.reason}, at ${new Date(r.startedMillis).toLocaleTimeString()}`;
  const d = r.durationMillis;
  if (r.endUnseen) s += ", sent before the live view existed (its end not seen)";
  else {
    s += d < 0 ? ", fetching…" : d >= 1000 ? `, took ${(d / 1000).toFixed(1)} s` : `, took ${d} ms`;
    s += `, ${r.objects} object${r.objects === 1 ? "" : "s"}`;
  }
  if (r.peakHeap) s += `, heap peak ${fmtBytes(r.peakHeap)}`;
  return s;
}

// drawReconciles lists the last reconciles; a click opens the trace that
// says why each ran.
let reconcilesSig = "";
function drawReconciles(rs) {
  const sig = rs.map((r) => r.traceID + r.key + r.start).join();
  if (sig === reconcilesSig) return;
  reconcilesSig = sig;
  const body = $("reconciles").tBodies[0];
  body.replaceChildren();
  for (const r of rs) {
    const tr = body.insertRow();
    tr.dataset.key = r.key;
    for (const v of [r.queue, r.key, fmtMicros(r.micros), r.links]) cell(tr, v);
    tr.onclick = () => openWaterfall({ traceID: r.traceID, type: "reconcile", key: r.key, rv: "" });
  }
}

// The plots: api/history answers, per series, the points of the last
// minutes (one a second at most, sampled only while a page asks). The page
// asks once a second for the points after the last one it has, keeps them
// for the window the server keeps (intervalMillis × maxPoints), and draws
// one plot per metric, titled with its name, a line per series.
const plotMetrics = [
  ["informer_queued_items", "per informer: changes waiting in its queue (RealFIFO)"],
  ["informer_handler_pending_notifications", "per handler: notifications waiting for it (addCh and its buffer)"],
  ["informer_handler_processing_latency_seconds", "per handler: mean time of the calls that ended in each second"],
  ["workqueue_depth", "per queue: keys waiting for a worker"],
  ["workqueue_adds_total", "per queue: adds that made a key dirty, per second (rate)"],
  ["workqueue_work_duration_seconds", "per queue: mean Get-to-Done time of the keys done in each second"],
];
const plotColors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
const hist = { since: 0, windowMillis: 300000, intervalMillis: 1000, now: 0, series: new Map() };
let historyPolling = false;

function seriesLabel(s) {
  return s.labels.handler ? `${s.labels.name} · ${s.labels.handler}` : s.labels.name;
}

function fmtValue(v, unit) {
  if (unit === "s") return v === 0 ? "0" : fmtMicros(v * 1e6);
  const r = Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 100) / 100;
  return `${r} ${unit}`;
}

async function pollHistory() {
  try {
    const res = await fetch("api/history?since=" + hist.since, { cache: "no-store" });
    if (res.ok) mergeHistory(await res.json());
  } catch (err) {
    // The state's poll says the process is not answering.
  }
  setTimeout(pollHistory, 1000);
}

function mergeHistory(a) {
  hist.windowMillis = a.intervalMillis * a.maxPoints;
  hist.intervalMillis = a.intervalMillis;
  hist.now = a.now;
  const present = new Set();
  for (const s of a.series) {
    const key = s.metric + "|" + JSON.stringify(Object.entries(s.labels).sort());
    present.add(key);
    let mine = hist.series.get(key);
    if (!mine) { mine = { metric: s.metric, unit: s.unit, labels: s.labels, points: [] }; hist.series.set(key, mine); }
    const last = mine.points.length ? mine.points[mine.points.length - 1][0] : -1;
    for (const p of s.points) if (p[0] > last) mine.points.push(p);
    for (const p of s.points) hist.since = Math.max(hist.since, p[0]);
  }
  const oldest = a.now - hist.windowMillis;
  for (const [key, s] of hist.series) {
    while (s.points.length && s.points[0][0] < oldest) s.points.shift();
    if (!present.has(key) && s.points.length === 0) hist.series.delete(key);
  }
  drawPlots();
}

// The SVG namespace, as the HTML parser gives it to an <svg> element:
// taken from one rather than written out, the script holds no URL at all
// (the assets' test refuses any, so that nothing points off the machine).
const svgNS = (() => { const d = document.createElement("div"); d.innerHTML = "<svg></svg>"; return d.firstChild.namespaceURI; })();
function svgEl(name, attrs) {
  const e = document.createElementNS(svgNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// drawPlots draws the six plots, empty until the first answer: they are
// drawn with the process's first state, so that nothing below them moves
// when the history arrives (a click aimed at a reconcile would land on
// another row).
function drawPlots() {
  $("plots-box").hidden = false;
  text("plots-note", hist.now === 0 ? "(waiting for the first sample)" :
    `(the last ${Math.round(hist.windowMillis / 60000)} minutes, one point a second while a page is open: the numbers of the metrics of these names)`);
  const box = $("plots");
  const W = 360, H = 110, left = 44, bottom = 14;
  // The x axis spans the points kept, from one minute up to the window:
  // a page opened a few seconds ago would otherwise draw its points as a
  // dot at the right edge of five empty minutes.
  let first = hist.now;
  for (const s of hist.series.values()) if (s.points.length) first = Math.min(first, s.points[0][0]);
  const span = Math.min(hist.windowMillis, Math.max(60000, hist.now - first));
  const x0 = hist.now - span;
  const spanText = span >= 120000 ? `-${Math.round(span / 60000)} min` : `-${Math.round(span / 1000)} s`;
  box.replaceChildren(...plotMetrics.map(([metric, what]) => {
    const series = [...hist.series.values()].filter((s) => s.metric === metric);
    const div = document.createElement("div");
    div.className = "plot";
    div.dataset.metric = metric;
    const h = document.createElement("h3");
    h.textContent = metric;
    const sub = document.createElement("div");
    sub.className = "small";
    sub.textContent = what;
    let top = 0;
    for (const s of series) for (const p of s.points) top = Math.max(top, p[1]);
    const unit = series.length ? series[0].unit : "";
    if (top === 0) top = unit === "s" ? 0.001 : 1;
    const svg = svgEl("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
    svg.appendChild(svgEl("line", { x1: left, y1: 2, x2: left, y2: H - bottom, stroke: "#999" }));
    svg.appendChild(svgEl("line", { x1: left, y1: H - bottom, x2: W, y2: H - bottom, stroke: "#999" }));
    const axis = (x, y, anchor, t) => { const e = svgEl("text", { x, y, "text-anchor": anchor, class: "axis" }); e.textContent = t; svg.appendChild(e); };
    // The axis says the number; the unit is in the legend.
    axis(left - 3, 10, "end", unit === "s" ? fmtValue(top, unit) : String(Math.round(top * 100) / 100));
    axis(left - 3, H - bottom, "end", "0");
    axis(left, H - 2, "start", spanText);
    axis(W, H - 2, "end", "now");
    const px = (t) => left + (W - left) * (t - x0) / span;
    const py = (v) => (H - bottom) - (H - bottom - 4) * v / top;
    const legend = document.createElement("ul");
    legend.className = "legend";
    series.forEach((s, i) => {
      const color = plotColors[i % plotColors.length];
      // A gap (no page open, no work ended) breaks the line; a point
      // with no neighbour is drawn as a dot.
      const near = (a, b) => b && Math.abs(a[0] - b[0]) < 2.5 * hist.intervalMillis;
      let d = "";
      s.points.forEach((p, j) => {
        d += `${near(p, s.points[j - 1]) ? "L" : "M"}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)} `;
        if (!near(p, s.points[j - 1]) && !near(p, s.points[j + 1])) svg.appendChild(svgEl("circle", { cx: px(p[0]), cy: py(p[1]), r: 2, fill: color }));
      });
      if (d) {
        const path = svgEl("path", { d, fill: "none", stroke: color, "stroke-width": 1.5 });
        path.dataset.series = seriesLabel(s);
        path.dataset.max = Math.max(...s.points.map((p) => p[1]));
        path.dataset.points = s.points.length;
        svg.appendChild(path);
      }
      const li = document.createElement("li");
      li.style.color = color;
      const lastP = s.points[s.points.length - 1];
      li.textContent = `— ${seriesLabel(s)}: ${lastP ? fmtValue(lastP[1], s.unit) : "no point yet"}`;
      li.title = li.textContent;
      legend.appendChild(li);
    });
    if (series.length === 0) {
      const li = document.createElement("li");
      li.textContent = hist.now === 0 ? "…" : "no series: nothing of this kind in the process";
      legend.appendChild(li);
    }
    div.append(h, sub, svg, legend);
    return div;
  }));
}

// Trace one key: shown where the process's code opted in
// (dropin.LiveViewTraceOneKey); the key is the process's, so a read-only
// page says which key is traced too.
function drawTraceKey(st) {
  $("tracekey-form").hidden = !st.traceKeyControl;
  text("tracekey-note", st.tracedKey ?
    `Tracing narrowed from a page: only ${st.tracedKey} starts a trace now (its spans reach your exporter; every other object's do not).` :
    (st.traceKeyControl ? "Every object your informers' filters select is traced; type a key to trace that one alone." : ""));
}

async function setTraceKey(key) {
  text("tracekey-result", "…");
  try {
    const res = await fetch("api/trace-key?key=" + encodeURIComponent(key), { method: "POST" });
    text("tracekey-result", (await res.json()).message);
  } catch (err) {
    text("tracekey-result", "the process is not answering");
  }
}

$("tracekey-form").onsubmit = (ev) => { ev.preventDefault(); setTraceKey($("tracekey-input").value.trim()); };
$("tracekey-clear").onclick = () => { $("tracekey-input").value = ""; setTraceKey(""); };

async function poll() {
  try {
    const res = await fetch("api/state", { cache: "no-store" });
    const st = await res.json();
    if (st.process) {
      drawProcess(st.process);
      drawTraceKey(st);
      if (!historyPolling) { historyPolling = true; drawPlots(); pollHistory(); }
      // With the process's span store on its tracer provider
      // (dropin.LiveViewSpanProcessor): the events and the reconciles.
      $("events-box").hidden = !st.spans;
      $("reconciles-box").hidden = !st.spans;
      if (st.spans && !paused) { drawEvents(st); drawReconciles(st.reconciles); }
    } else {
      drawPipeline(st.pipeline);
      if (!paused) drawEvents(st);
    }
    text("status", "");
  } catch (err) {
    text("status", $("process").hidden ? "the demo is not answering (stopped?)" : "the process is not answering (stopped?)");
  }
  setTimeout(poll, 200);
}

async function loadControls() {
  const res = await fetch("api/controls");
  const c = await res.json();
  const box = $("controls");
  if (!c.controls || c.controls.length === 0) {
    box.textContent = c.none || "no controls yet: the informer is starting";
    if (!c.none) setTimeout(loadControls, 500); // attached once it has started
    return;
  }
  box.textContent = "";
  for (const ctl of c.controls) {
    const b = document.createElement("button");
    b.textContent = ctl.label;
    b.title = ctl.lookFor;
    b.dataset.name = ctl.name;
    let input = null;
    if (ctl.param) {
      input = document.createElement("input");
      input.type = "number"; input.value = 100; input.min = 1; input.max = ctl.max; input.size = 6;
      input.title = ctl.param;
    }
    b.onclick = async () => {
      const q = input ? "?n=" + encodeURIComponent(input.value) : "";
      text("control-result", ctl.label + ": …");
      const res = await fetch("api/control/" + ctl.name + q, { method: "POST" });
      const r = await res.json();
      text("control-result", `${ctl.label}: ${r.message}. Look for: ${r.lookFor}`);
    };
    box.appendChild(b);
    if (input) box.appendChild(input);
  }
}

async function openWaterfall(e) {
  const res = await fetch("api/trace/" + e.traceID);
  const box = $("waterfall");
  $("waterfall-box").hidden = false;
  text("waterfall-title", e.rv ? `${e.type} ${e.key} rv ${e.rv}` : `${e.type} ${e.key}`);
  box.innerHTML = "";
  if (!res.ok) { box.textContent = (await res.json()).error; return; }
  const wf = await res.json();
  const kids = {};
  let total = 1;
  for (const s of wf.spans) {
    (kids[s.parentID || ""] = kids[s.parentID || ""] || []).push(s);
    total = Math.max(total, s.offsetMicros + s.micros);
  }
  const draw = (parent, s) => {
    const d = document.createElement("details");
    d.open = true;
    d.dataset.span = s.name;
    const sum = document.createElement("summary");
    // The server says which attributes to show, and which spans are
    // waits (internal/livepage's WaterfallSpan): the waterfall names no
    // span and no attribute key, so that renaming one in internal/tracing
    // cannot leave the page behind (TestAppNamesNoSpan).
    sum.textContent = `${s.name} +${fmtMicros(s.offsetMicros)} ${fmtMicros(s.micros)}  ${s.attrText}`;
    sum.title = sum.textContent;
    // The bars share one time axis: a track of 30em at the right of the
    // box (see app.css), whatever the indentation and length of the text.
    const bar = document.createElement("span");
    bar.className = "wbar" + (s.wait ? " wait" : "");
    bar.style.left = `calc(100% - 31em + ${30 * s.offsetMicros / total}em)`;
    bar.style.width = Math.max(0.1, 30 * s.micros / total) + "em";
    sum.appendChild(bar);
    d.appendChild(sum);
    for (const l of s.links || []) {
      const div = document.createElement("div");
      div.className = "link";
      if (l.writer) {
        // The span the object's annotation names as its writer: a claim
        // anyone who can write the object can make, so the page says what
        // the link is in the server's words (internal/livepage's
        // WriterNote), never that the span wrote the object. A link, not a
        // parent. Clicking opens the named span's trace.
        div.className = "link writer";
        div.textContent = `↪ ${l.name || "a span the page does not hold (evicted, or another process's)"} (trace ${l.traceID.slice(0, 8)}…): ${l.note}; a link, not a parent`;
        if (l.name) {
          div.title = "open the trace of the span the annotation names";
          div.onclick = (ev) => { ev.stopPropagation(); openWaterfall({ traceID: l.traceID, type: "named as writer (unverified):", key: l.name, rv: "" }); };
        }
      } else {
        div.textContent = `↪ link to ${l.name || "a span the page does not hold (still running, as the reflector's cycle is, or evicted)"} (trace ${l.traceID.slice(0, 8)}…)`;
      }
      d.appendChild(div);
    }
    for (const c of kids[s.spanID] || []) draw(d, c);
    parent.appendChild(d);
  };
  const ids = new Set(wf.spans.map((s) => s.spanID));
  for (const s of wf.spans) if (!s.parentID || !ids.has(s.parentID)) draw(box, s);
  box.scrollIntoView({ behavior: "smooth" });
}

$("events").onmouseenter = () => { paused = true; };
$("events").onmouseleave = () => { paused = false; };
loadControls();
poll();
