// kaspar's live console: polls /api/snapshot once a sampling period and
// draws the actor graph, the actors' table, the throughput history and the
// selected actor's details. Names from the system are only ever set as
// text (textContent, SVG text nodes), never parsed as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const OUTSIDE = 0;
let selected = null;
let last = null;
let lastAt = 0;

function el(tag, attrs, text) {
  const ns = ["svg", "g", "rect", "text", "path", "polyline", "polygon", "line", "defs", "marker", "title"];
  const e = ns.includes(tag) ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function rate(x) {
  if (x === null || x === undefined) return "–";
  if (x >= 1e6) return (x / 1e6).toFixed(x >= 1e7 ? 1 : 2) + "M";
  if (x >= 1e3) return (x / 1e3).toFixed(x >= 1e4 ? 1 : 2) + "k";
  if (x >= 10) return x.toFixed(0);
  return x.toFixed(x > 0 ? 1 : 0);
}

function count(n) { return n.toLocaleString("en-US"); }

function nanos(ns) {
  if (ns === null || ns === undefined) return "–";
  if (ns < 1000) return ns + " ns";
  if (ns < 1e6) return (ns / 1e3).toFixed(ns < 1e4 ? 2 : 1) + " µs";
  if (ns < 1e9) return (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1) + " ms";
  return (ns / 1e9).toFixed(2) + " s";
}

function duration(s) {
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
  return h ? `${h}h ${m}m` : m ? `${m}m ${sec}s` : `${sec}s`;
}

// A group's members share its name: they go by their type, the group's
// name below it.
function label(a) { return a.group ? a.type : a.name || a.type; }
function sub(a) { return a.group && a.name ? `#${a.id} · ${a.name}` : `${a.type}#${a.id}`; }
function fullName(a) { return a.name ? `${a.name} (${a.type}#${a.id})` : `${a.type}#${a.id}`; }

// The class with the most runs: the actor's traffic, not a one-off (the
// wiring). Every class is in the details.
function busiest(a) {
  let w = null;
  for (const c of a.latency) if (c.count > 0 && (!w || c.count > w.count)) w = c;
  return w;
}

function refusals(a) { return a.busy + a.cycles + a.deadlocks; }

async function poll() {
  let wait = 2000;
  try {
    const r = await fetch("/api/snapshot", { cache: "no-store" });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const doc = await r.json();
    last = doc;
    lastAt = Date.now();
    render(doc);
    wait = Math.min(5000, Math.max(200, doc.system.period_s * 1000));
  } catch (e) {
    setStatus("bad", "disconnected");
  }
  setTimeout(poll, wait);
}

function setStatus(kind, text) {
  const s = document.getElementById("status");
  s.className = "pill " + kind;
  s.textContent = text;
}

function render(doc) {
  const sys = doc.system;
  const actors = doc.actors;
  // The sample shown, for scripts that watch the page (the browser test).
  document.body.dataset.seq = sys.seq;
  setStatus(sys.running ? "ok" : "wait", sys.running ? "running" : "shut down");
  const dead = Object.values(sys.dead_letters).reduce((x, y) => x + y, 0);
  const refused = actors.reduce((x, a) => x + refusals(a), 0);
  const panics = actors.reduce((x, a) => x + a.panics, 0);
  const depth = actors.reduce((x, a) => Math.max(x, a.depth), 0);
  kpi("kpi-actors", count(sys.actors));
  kpi("kpi-rate", rate(sys.handled_per_s));
  kpi("kpi-depth", count(depth), false, depth > 0);
  kpi("kpi-refusals", count(refused), refused > 0);
  kpi("kpi-panics", count(panics), panics > 0);
  kpi("kpi-dead", count(dead), dead > 0);
  kpi("kpi-uptime", duration(sys.uptime_s));
  drawGraph(doc);
  drawTable(doc);
  drawHistory(sys.history);
  drawDead(sys);
  drawDetail(doc);
}

function kpi(id, text, alert, hot) {
  const d = document.getElementById(id);
  d.textContent = text;
  d.classList.toggle("alert", !!alert);
  d.classList.toggle("hot", !!hot);
}

setInterval(() => {
  if (!last) return;
  const age = (Date.now() - lastAt) / 1000;
  document.getElementById("updated").textContent =
    `sample ${last.system.seq} · ${age < 1 ? "just now" : age.toFixed(0) + " s ago"}`;
  if (age > 3 * Math.max(1, last.system.period_s)) setStatus("bad", "stale");
}, 500);

// ---- the graph -----------------------------------------------------------

const NODE_W = 124, NODE_H = 50, COL = 186, ROW = 66, PAD = 16;

function layout(doc) {
  const byId = new Map(doc.actors.map(a => [a.id, a]));
  const nodes = doc.actors.map(a => ({ id: a.id, actor: a }));
  if (doc.edges.some(e => e.from === OUTSIDE)) nodes.unshift({ id: OUTSIDE, outside: true });
  const edges = doc.edges.filter(e => e.from !== null && (e.from === OUTSIDE || byId.has(e.from)));
  // Layers: the longest path from a node nothing sends to (bounded, so a
  // cycle does not loop forever).
  const layer = new Map(nodes.map(n => [n.id, 0]));
  for (let round = 0; round < nodes.length; round++) {
    let moved = false;
    for (const e of edges) {
      if (e.from === e.to) continue;
      const want = layer.get(e.from) + 1;
      if (want > layer.get(e.to) && want < nodes.length + 1) { layer.set(e.to, want); moved = true; }
    }
    if (!moved) break;
  }
  const columns = [];
  for (const n of nodes) (columns[layer.get(n.id)] ||= []).push(n);
  const key = n => n.outside ? "" : (n.actor.thread || "~") + "/" + String(n.id).padStart(12, "0");
  const rows = Math.max(1, ...columns.map(c => (c || []).length));
  const height = PAD * 2 + rows * ROW + 40;
  columns.forEach((col, x) => {
    if (!col) return;
    col.sort((a, b) => key(a).localeCompare(key(b)));
    const top = (height - col.length * ROW) / 2;
    col.forEach((n, y) => { n.x = PAD + x * COL; n.y = top + y * ROW + (ROW - NODE_H) / 2 + 6; });
  });
  return { nodes, edges, width: PAD * 2 + columns.length * COL - (COL - NODE_W), height };
}

function drawGraph(doc) {
  const svg = document.getElementById("graph");
  clear(svg);
  const { nodes, edges, width, height } = layout(doc);
  svg.setAttribute("viewBox", `0 0 ${Math.max(width, 600)} ${Math.max(height, 160)}`);
  const at = new Map(nodes.map(n => [n.id, n]));
  const defs = el("defs");
  for (const kind of ["cross", "same", "others"]) {
    const m = el("marker", { id: "arrow-" + kind, viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
    m.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", class: "head " + kind }));
    defs.appendChild(m);
  }
  svg.appendChild(defs);
  // Groups: a dashed box around the members that share a thread.
  const groups = new Map();
  for (const n of nodes) if (n.actor && n.actor.group) {
    const k = n.actor.thread;
    if (!groups.has(k)) groups.set(k, { a: n.actor, members: [] });
    groups.get(k).members.push(n);
  }
  for (const [thread, g] of groups) {
    const xs = g.members.map(n => n.x), ys = g.members.map(n => n.y);
    const x0 = Math.min(...xs) - 10, y0 = Math.min(...ys) - 22;
    const x1 = Math.max(...xs) + NODE_W + 10, y1 = Math.max(...ys) + NODE_H + 10;
    const box = el("g", { class: "group" });
    box.appendChild(el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 8 }));
    box.appendChild(el("text", { x: x0 + 8, y: y0 + 14 }, `${g.a.group}${g.a.name ? " “" + g.a.name + "”" : ""} · ${thread}`));
    svg.appendChild(box);
  }
  const maxRate = Math.max(1, ...doc.edges.map(e => e.rate));
  for (const e of doc.edges) {
    const to = at.get(e.to);
    if (!to) continue;
    let from = e.from === null ? null : at.get(e.from);
    const kind = e.from === null ? "others"
      : from && from.actor && from.actor.thread && from.actor.thread === to.actor.thread ? "same" : "cross";
    const w = 1.2 + 4 * Math.log1p(e.rate) / Math.log1p(maxRate);
    let d, lx, ly;
    if (!from) {
      // Senders past the table: a stub into the node from above.
      d = `M${to.x + NODE_W / 2},${to.y - 26} L${to.x + NODE_W / 2},${to.y - 2}`;
      lx = to.x + NODE_W / 2 + 6; ly = to.y - 14;
    } else if (from.x < to.x) {
      const x0 = from.x + NODE_W, y0 = from.y + NODE_H / 2, x1 = to.x - 2, y1 = to.y + NODE_H / 2;
      const mx = (x0 + x1) / 2;
      d = `M${x0},${y0} C${mx},${y0} ${mx},${y1} ${x1},${y1}`;
      // The label a third of the way: edges into one node part there.
      const t = from.x + COL < to.x ? 0.25 : 0.5, u = 1 - t;
      lx = u * u * u * x0 + 3 * u * t * mx + t * t * t * x1;
      ly = (u * u * u + 3 * u * u * t) * y0 + (3 * u * t * t + t * t * t) * y1 - 5;
    } else {
      // Back or self edge: an arc under the nodes.
      const x0 = from.x + NODE_W / 2, x1 = to.x + NODE_W / 2, y = Math.max(from.y, to.y) + NODE_H;
      const dip = 26 + Math.abs(x0 - x1) / 6;
      d = `M${x0},${from.y + NODE_H} C${x0},${y + dip} ${x1},${y + dip} ${x1},${to.y + NODE_H + 2}`;
      lx = (x0 + x1) / 2; ly = y + dip * 0.75 + 4;
    }
    const p = el("path", { d, class: `edge ${kind}${e.rate > 0 ? "" : " idle"}`,
      "stroke-width": w.toFixed(2), "marker-end": `url(#arrow-${kind})` });
    p.appendChild(el("title", {}, `${e.from === null ? "others" : e.from === OUTSIDE ? "outside" : fullName(from.actor)} → ${fullName(to.actor)}: ${count(e.count)} messages`));
    svg.appendChild(p);
    // Idle edges (the wiring, a one-off ask) stay faint and unlabelled.
    if (e.rate > 0) svg.appendChild(el("text", { x: lx, y: ly, "text-anchor": "middle", class: "elabel" }, rate(e.rate) + "/s"));
  }
  for (const n of nodes) {
    const g = el("g", { class: "node", transform: `translate(${n.x},${n.y})` });
    if (n.outside) {
      g.classList.add("outside");
      g.appendChild(el("rect", { width: NODE_W, height: NODE_H, rx: 6 }));
      g.appendChild(el("text", { x: 10, y: 20, class: "title" }, "outside"));
      g.appendChild(el("text", { x: 10, y: 37, class: "sub" }, "threads running no handler"));
      svg.appendChild(g);
      continue;
    }
    const a = n.actor;
    g.dataset.id = a.id;
    if (a.stopped) g.classList.add("stopped");
    if (a.panics > 0 || a.dead_letters > 0) g.classList.add("alert");
    if (a.id === selected) g.classList.add("selected");
    g.appendChild(el("rect", { width: NODE_W, height: NODE_H, rx: 6 }));
    g.appendChild(el("text", { x: 10, y: 17, class: "title" }, clip(label(a), 17)));
    g.appendChild(el("text", { x: 10, y: 31, class: "sub" }, clip(sub(a), 22)));
    g.appendChild(el("text", { x: 10, y: 44, class: "rate" }, rate(a.rate) + "/s"));
    g.appendChild(el("text", { x: NODE_W - 10, y: 44, class: "sub depth", "text-anchor": "end" }, "depth " + count(a.depth)));
    g.appendChild(el("title", {}, fullName(a)));
    g.addEventListener("click", () => select(a.id));
    svg.appendChild(g);
  }
}

function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

function select(id) {
  selected = selected === id ? null : id;
  if (last) render(last);
}

// ---- the table -----------------------------------------------------------

function drawTable(doc) {
  const body = document.querySelector("#actors tbody");
  clear(body);
  const maxDepth = Math.max(1, ...doc.actors.map(a => a.high_water));
  for (const a of doc.actors) {
    const tr = el("tr", { "data-id": a.id, "data-type": a.type, "data-name": a.name || "" });
    if (a.stopped) tr.classList.add("stopped");
    if (a.id === selected) tr.classList.add("selected");
    tr.addEventListener("click", () => select(a.id));
    const who = el("td", { class: "l" });
    const name = el("div", { class: "name" });
    name.appendChild(el("span", { class: "dot " + (a.stopped ? "stop" : "run"), title: a.stopped ? "stopped" : "running" }));
    name.appendChild(document.createTextNode(label(a)));
    who.appendChild(name);
    who.appendChild(el("div", { class: "sub" }, sub(a)));
    tr.appendChild(who);
    const where = el("td", { class: "l" });
    where.appendChild(el("div", {}, a.group ? `${a.group}` : "standalone"));
    where.appendChild(el("div", { class: "sub" }, a.thread || "not started"));
    tr.appendChild(where);
    cell(tr, "rate", rate(a.rate));
    const spark = el("td", { class: "l" });
    spark.appendChild(sparkline(a.spark, 90, 22));
    tr.appendChild(spark);
    cell(tr, "handled", count(a.handled));
    const depth = cell(tr, "depth", "");
    const bar = el("span", { class: "bar" + (a.depth > 0 ? " hot" : "") });
    bar.style.width = Math.round(40 * a.depth / maxDepth) + "px";
    depth.appendChild(bar);
    depth.appendChild(document.createTextNode(count(a.depth)));
    cell(tr, "high_water", count(a.high_water)).className = "muted";
    const w = busiest(a);
    for (const q of ["p50_ns", "p99_ns", "p999_ns", "max_ns"]) {
      const td = cell(tr, q, w ? nanos(w[q]) : "–");
      if (w) td.title = `${w.class}: ${count(w.count)} runs timed`;
    }
    cell(tr, "refusals", `${a.busy} · ${a.cycles} · ${a.deadlocks}`, refusals(a) > 0 ? "hot" : "");
    cell(tr, "panics", `${a.panics} · ${a.restarts}`, a.panics > 0 ? "alert" : "");
    cell(tr, "dead_letters", count(a.dead_letters), a.dead_letters > 0 ? "alert" : "");
    body.appendChild(tr);
  }
}

function cell(tr, col, text, cls) {
  const td = el("td", { "data-col": col }, text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function sparkline(values, w, h) {
  const svg = el("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}` });
  if (!values.length) return svg;
  const max = Math.max(1e-9, ...values);
  const step = w / Math.max(1, values.length - 1);
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(h - 2 - (h - 4) * v / max).toFixed(1)}`);
  svg.appendChild(el("polygon", { class: "area", points: `0,${h} ${pts.join(" ")} ${((values.length - 1) * step).toFixed(1)},${h}` }));
  svg.appendChild(el("polyline", { class: "spark", points: pts.join(" ") }));
  return svg;
}

function drawHistory(history) {
  const svg = document.getElementById("history");
  clear(svg);
  const w = 330, h = 90;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.appendChild(el("line", { x1: 0, y1: h - 1, x2: w, y2: h - 1, class: "axis" }));
  const max = Math.max(1, ...history);
  document.getElementById("history-max").textContent = `peak ${rate(max)}/s, now ${rate(history[history.length - 1] || 0)}/s`;
  if (history.length < 2) return;
  const step = w / (history.length - 1);
  const pts = history.map((v, i) => `${(i * step).toFixed(1)},${(h - 4 - (h - 10) * v / max).toFixed(1)}`);
  svg.appendChild(el("polygon", { class: "area", points: `0,${h} ${pts.join(" ")} ${w},${h}` }));
  svg.appendChild(el("polyline", { class: "spark", points: pts.join(" ") }));
}

function drawDead(sys) {
  const body = document.querySelector("#dead tbody");
  clear(body);
  const rows = Object.entries(sys.dead_letters).concat([["no subscriber took", sys.unobserved]]);
  for (const [reason, n] of rows) {
    const tr = el("tr");
    tr.appendChild(el("td", { class: "l" }, reason.replace(/_/g, " ")));
    const td = el("td", { "data-col": reason }, count(n));
    if (n > 0) td.className = "alert";
    tr.appendChild(td);
    body.appendChild(tr);
  }
}

// ---- the selected actor ----------------------------------------------------

function drawDetail(doc) {
  const title = document.getElementById("detail-title");
  const body = document.getElementById("detail-body");
  const a = doc.actors.find(x => x.id === selected);
  if (!a) {
    title.textContent = "Select an actor";
    body.className = "muted";
    body.textContent = "Click a row or a node for its latency per message class and its senders and receivers.";
    return;
  }
  title.textContent = fullName(a);
  body.className = "";
  clear(body);
  const grid = el("div", { class: "detail-grid" });
  for (const [k, v] of [["thread", a.thread || "not started"], ["group", a.group || "standalone"],
    ["handled", count(a.handled)], ["void inline / queued", `${count(a.void_inline)} / ${count(a.void_queued)}`]]) {
    grid.appendChild(el("span", {}, k));
    grid.appendChild(el("span", {}, v));
  }
  body.appendChild(grid);
  body.appendChild(el("h3", {}, "Latency per message class"));
  const timed = a.latency.filter(c => c.count > 0);
  if (timed.length) {
    const t = el("table", { class: "compact" });
    const head = el("tr");
    for (const h of ["class", "runs", "p50", "p99", "p99.9", "max"]) head.appendChild(el("th", { class: h === "class" ? "l" : "" }, h));
    t.appendChild(head);
    for (const c of timed) {
      const tr = el("tr");
      tr.appendChild(el("td", { class: "l" }, c.class));
      tr.appendChild(el("td", {}, count(c.count)));
      for (const q of ["p50_ns", "p99_ns", "p999_ns", "max_ns"]) tr.appendChild(el("td", {}, nanos(c[q])));
      t.appendChild(tr);
    }
    body.appendChild(t);
  } else {
    body.appendChild(el("div", { class: "muted" }, a.latency.length ? "no handler run timed yet" : "not recorded (spawn with record_latency(true))"));
  }
  const name = id => id === null ? "others" : id === OUTSIDE ? "outside" : (x => x ? fullName(x) : `#${id}`)(doc.actors.find(y => y.id === id));
  for (const [heading, list] of [["Senders", doc.edges.filter(e => e.to === a.id).map(e => [name(e.from), e])],
    ["Receivers", doc.edges.filter(e => e.from === a.id).map(e => [name(e.to), e])]]) {
    body.appendChild(el("h3", {}, heading));
    if (!list.length) { body.appendChild(el("div", { class: "muted" }, "none")); continue; }
    const t = el("table", { class: "compact" });
    for (const [who, e] of list) {
      const tr = el("tr");
      tr.appendChild(el("td", { class: "l" }, who));
      tr.appendChild(el("td", {}, rate(e.rate) + "/s"));
      tr.appendChild(el("td", {}, count(e.count)));
      t.appendChild(tr);
    }
    body.appendChild(t);
  }
}

poll();
