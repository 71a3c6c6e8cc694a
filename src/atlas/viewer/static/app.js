// ATLAS run viewer: vanilla JS, hand-written SVG, no network beyond this page's own server.
// Polls /api/status every few seconds and reloads the run when the folder changed.
"use strict";

const POLL_MS = 3000;
const SVG_NS = "http://www.w3.org/2000/svg";
const SERIES = [
  { key: "collection", label: "Collection", cls: "s-collection" },
  { key: "deployment", label: "Deployment", cls: "s-deployment" },
  { key: "normalized", label: "Normalized", cls: "s-normalized" },
];
// Viridis-like stops for the lineage colour scale (low → high score).
const STOPS = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"];

const state = {
  run: null,
  stamp: null,
  selected: null,
  detail: null,
  logs: null,
  tab: "source",
  diffParent: null,
  lastCheck: null,
};

// ------------------------------------------------------------------ helpers
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c) node.append(c);
  return node;
}

const fmt = (v, d = 2) => (v === null || v === undefined ? "—" : Number(v).toFixed(d));
const fmtSigned = (v, d = 2) => (v === null || v === undefined ? "—" : (v > 0 ? "+" : v < 0 ? "−" : "±") + Math.abs(v).toFixed(d));
const fmtInt = (v) => (v === null || v === undefined ? "—" : Math.round(v).toLocaleString("en-US"));
const fmtCost = (v) => (v === null || v === undefined ? "—" : "$" + Number(v).toFixed(v < 0.1 ? 4 : 2));
const fmtK = (v) => (v >= 1000 ? (v / 1000).toFixed(v >= 10000 ? 0 : 1) + "k tok" : Math.round(v) + " tok");
const trunc = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

function colorFor(t) {
  // t in [0, 1] → interpolated hex colour along STOPS.
  t = Math.max(0, Math.min(1, t));
  const seg = t * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(seg));
  const f = seg - i;
  const a = STOPS[i].match(/\w\w/g).map((h) => parseInt(h, 16));
  const b = STOPS[i + 1].match(/\w\w/g).map((h) => parseInt(h, 16));
  return "#" + a.map((x, j) => Math.round(x + (b[j] - x) * f).toString(16).padStart(2, "0")).join("");
}

function textColorOn(hex) {
  const [r, g, b] = hex.match(/\w\w/g).map((h) => parseInt(h, 16));
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? "#1b1b1f" : "#ffffff";
}

async function getJSON(url) {
  let res;
  try {
    res = await fetch(url, { cache: "no-store" });
  } catch (e) {
    throw new Error("the viewer server is not reachable (was `atlas view` stopped?)");
  }
  let body = null;
  try {
    body = await res.json();
  } catch (e) {
    throw new Error(`${url}: the server sent something that is not JSON (HTTP ${res.status})`);
  }
  if (!res.ok) throw new Error(body && body.error ? body.error : `${url}: HTTP ${res.status}`);
  return body;
}

function showError(message) {
  const box = $("error");
  if (!message) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.hidden = false;
  box.replaceChildren(el("strong", { text: "Cannot read this run: " }), message, el("div", { class: "retry", text: "The page checks again every few seconds and recovers by itself once the folder is readable." }));
  if (!state.run) {
    // Nothing to show yet: say so instead of empty charts.
    $("run-name").textContent = "run unavailable";
    $("run-state").hidden = true;
    document.querySelector("main").hidden = true;
  }
}

// ------------------------------------------------------------------ loading
async function poll() {
  try {
    const st = await getJSON("/api/status");
    state.lastCheck = new Date();
    if (!st.ok) {
      showError(st.error);
      setLive("error");
    } else if (st.stamp !== state.stamp) {
      await loadRun();
    } else {
      setLive(state.run ? state.run.state : "unknown");
    }
  } catch (e) {
    showError(e.message);
    setLive("offline");
  }
}

async function loadRun() {
  const run = await getJSON("/api/run");
  showError(null);
  $("run-state").hidden = false;
  document.querySelector("main").hidden = false;
  state.run = run;
  state.stamp = run.stamp;
  renderRun();
  const ids = run.entries.map((e) => e.id);
  const wanted = decodeURIComponent(location.hash.slice(1));
  const target = ids.includes(state.selected) ? state.selected : ids.includes(wanted) ? wanted : run.best_id || ids[0];
  if (target) await selectDesign(target, { keepTab: true, refresh: true });
  setLive(run.state);
}

function setLive(kind) {
  const live = $("live");
  live.dataset.kind = kind;
  const t = state.lastCheck ? state.lastCheck.toLocaleTimeString() : "";
  const words = { running: "live · run in progress", finished: "run finished", stopped: "stopped by a limit (--resume continues)", stalled: "no activity for 15 min (stopped?)", unknown: "watching", error: "run unreadable", offline: "server offline" };
  $("live-text").textContent = `${words[kind] || kind}${t ? " · checked " + t : ""}`;
}

// ------------------------------------------------------------------ whole run
function renderRun() {
  const run = state.run;
  document.title = `ATLAS · ${run.name}`;
  $("run-name").textContent = run.name;
  $("run-dir").textContent = run.run_dir;
  const badge = $("run-state");
  badge.textContent = run.state === "unknown" ? "no trace" : run.state;
  badge.className = "badge state-" + run.state;

  const cfg = run.config || {};
  const chips = [];
  const ex = run.executor || { name: "local", retries: 0 };
  const executor = ex.name + (ex.address ? " @ " + ex.address : "") + (ex.name !== "local" || ex.retries ? ` (${ex.retries} ${ex.retries === 1 ? "retry" : "retries"})` : "");
  const shown = { env: cfg.env, model: cfg.model ?? cfg.task_model, meta: cfg.meta_model ?? cfg.meta_model_resolved, representation: run.representation, executor, iterations: cfg.iterations, episodes: cfg.episodes, seed: cfg.seed };
  for (const [label, v] of Object.entries(shown)) {
    if (v !== undefined && v !== null) chips.push(el("span", { class: "chip" }, el("b", { text: label }), " " + v));
  }
  $("run-config").replaceChildren(...chips);

  const warn = $("warnings");
  warn.hidden = !run.warnings.length;
  $("warnings-summary").textContent = `${run.warnings.length} note${run.warnings.length === 1 ? "" : "s"} while reading the run folder`;
  $("warnings-list").replaceChildren(...run.warnings.map((w) => el("li", { text: w })));

  renderKpis();
  renderTestTasks(run.held_out);
  renderScores();
  renderLineage();
  renderTable();
  renderOperators();
  renderUsage();
}

// The run's result: the pick's gain over no memory on held-out test tasks no choice saw.
function heldOutCard(card, held) {
  const pick = held && held.designs ? held.designs.find((d) => d.chosen) : null;
  if (!pick || !pick.vs_no_memory) return card("Result on test tasks", "—", "measured when the search ends (held-out test tasks)", "held-out");
  const v = pick.vs_no_memory;
  const sub = [`${pick.id} on ${held.tasks.length} test tasks (${held.source}) · 95% interval [${fmtSigned(v.ci95[0])}, ${fmtSigned(v.ci95[1])}]`];
  return card("Result on test tasks", el("span", { class: v.mean >= 0 ? "pos" : "neg", text: fmtSigned(v.mean) + " vs no memory" }), sub, "held-out");
}

// Each tested design's and no memory's result on the held-out test tasks, with their games there.
function renderTestTasks(held) {
  const box = $("test-tasks");
  const designs = held && Array.isArray(held.designs) ? held.designs : [];
  box.hidden = !designs.length;
  if (!designs.length) return $("test-table").replaceChildren();
  const logsButton = (path) => {
    const id = typeof path === "string" ? path.split("/").pop() : "";
    const open = () => showCheckLogs(id).then(() => $("design").scrollIntoView({ behavior: "smooth" }));
    return id ? el("button", { type: "button", class: "check-logs", text: "games", onclick: open }) : "";
  };
  const gain = (v) => (v ? `${fmtSigned(v.mean)} [${fmtSigned(v.ci95[0])}, ${fmtSigned(v.ci95[1])}]` : "—");
  const head = ["design", "", "chosen on (vs no memory)", "test score", "test (vs no memory) [95%]", ""];
  const row = (d) => el("tr", { "data-test": d.id },
    el("td", { class: "mono", text: d.id }),
    el("td", { text: (d.chosen ? "pick · " : "") + d.name }),
    el("td", { class: "num", text: gain(d.validation) }),
    el("td", { class: "num", text: fmt(d.test_score, 3) }),
    el("td", { class: "num", text: d.status === "ok" ? gain(d.vs_no_memory) : d.status }),
    el("td", {}, logsButton(d.logs)));
  const base = held.no_memory ? Object.values(held.no_memory) : [];
  const baseScore = base.length ? base.reduce((a, b) => a + b, 0) / base.length : null;
  const baseRow = el("tr", { "data-test": "no-memory" },
    el("td", { class: "mono", text: "—" }), el("td", { text: "no memory" }), el("td", { class: "num", text: "" }),
    el("td", { class: "num", text: fmt(baseScore, 3) }), el("td", { class: "num", text: "" }), el("td", {}, logsButton(held.no_memory_logs)));
  $("test-table").replaceChildren(
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))),
    el("tbody", {}, [...designs.map(row), baseRow]),
  );
}

function renderKpis() {
  const run = state.run;
  const best = run.entries.find((e) => e.id === run.best_id);
  const evolved = run.entries.filter((e) => e.kind === "evolved");
  const failed = run.entries.filter((e) => e.status !== "ok").length;
  const tot = run.usage_total;
  const card = (label, value, sub, cls) => el("div", { class: "kpi " + (cls || "") }, el("div", { class: "kpi-label", text: label }), el("div", { class: "kpi-value" }, value), el("div", { class: "kpi-sub" }, sub || ""));
  $("kpis").replaceChildren(
    card("Baseline (no memory)", fmt(run.baseline_score), "mean deployment score without memory"),
    card("Best design", best ? best.name : "—", best ? [`${best.id} · deployment ${fmt(best.deployment_score)} · `, el("span", { class: best.normalized_score >= 0 ? "pos" : "neg", text: fmtSigned(best.normalized_score) + " vs baseline" }), " (the tasks it was chosen on)"] : "no scored design yet", "best"),
    heldOutCard(card, run.held_out),
    card("Designs", String(run.entries.length), `${run.entries.length - evolved.length} hand-built · ${evolved.length} evolved · ${failed} failed`),
    card("Generations", String(run.generations.length), `${run.iterations.length} iteration${run.iterations.length === 1 ? "" : "s"}`),
    card("Search usage", fmtInt(tot.total_tokens) + " tok", `${fmtCost(tot.cost_usd)} · ${fmtInt(tot.calls)} LLM calls`),
  );
}

function emptyChart(target, message) {
  target.replaceChildren(el("div", { class: "empty", text: message }));
}

function renderScores() {
  const target = $("scores-chart");
  const rows = state.run.generations;
  if (!rows.some((r) => r.deployment !== null)) return emptyChart(target, "No scored design yet: the chart appears after the first evaluation.");
  const W = 620, H = 330, m = { l: 48, r: 16, t: 40, b: 40 }, pad = 24;
  const base = state.run.baseline_score;
  const values = rows.flatMap((r) => SERIES.map((s) => r[s.key])).filter((v) => v !== null);
  if (base !== null) values.push(base);
  let lo = Math.min(0, ...values), hi = Math.max(...values);
  lo = Math.floor(lo * 10) / 10;
  hi = Math.max(lo + 0.1, Math.ceil(hi * 10) / 10);
  // x follows the generation number, so a generation with no valid design leaves a visible gap.
  const g0 = rows[0].generation, g1 = rows[rows.length - 1].generation;
  const x = (i) => m.l + pad + (g1 === g0 ? (W - m.l - m.r - 2 * pad) / 2 : ((rows[i].generation - g0) * (W - m.l - m.r - 2 * pad)) / (g1 - g0));
  const y = (v) => m.t + ((hi - v) * (H - m.t - m.b)) / (hi - lo);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "svgchart", role: "img", "aria-label": "Scores per generation" });

  // grid + y axis
  const step = hi - lo > 1 ? 0.2 : 0.1;
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9; v += step) {
    const yy = y(v);
    root.append(svg("line", { x1: m.l, x2: W - m.r, y1: yy, y2: yy, class: Math.abs(v) < 1e-9 ? "axis-zero" : "grid" }));
    root.append(svg("text", { x: m.l - 8, y: yy + 4, class: "tick", "text-anchor": "end", text: v.toFixed(1) }));
  }
  const every = Math.ceil(rows.length / 16);
  rows.forEach((r, i) => {
    if (i % every === 0 || i === rows.length - 1) root.append(svg("text", { x: x(i), y: H - m.b + 18, class: "tick", "text-anchor": "middle", text: String(r.generation) }));
    if (r.deployment === null) {
      const mark = svg("text", { x: x(i), y: y(lo) - 6, class: "failed-gen", "text-anchor": "middle", text: "✕" });
      mark.append(svg("title", { text: `generation ${r.generation}: no valid design (${r.failed} of ${r.designs} failed)` }));
      root.append(mark);
    }
  });
  root.append(svg("text", { x: (m.l + W - m.r) / 2, y: H - 4, class: "axis-label", "text-anchor": "middle", text: "generation" }));
  root.append(svg("text", { x: 12, y: (m.t + H - m.b) / 2, class: "axis-label", "text-anchor": "middle", transform: `rotate(-90 12 ${(m.t + H - m.b) / 2})`, text: "score" }));

  if (base !== null) {
    root.append(svg("line", { x1: m.l, x2: W - m.r, y1: y(base), y2: y(base), class: "baseline", "data-testid": "baseline-line" }));
    root.append(svg("text", { x: W - m.r, y: y(base) - 6, class: "baseline-label", "text-anchor": "end", text: `baseline ${base.toFixed(2)}` }));
  }
  for (const s of SERIES) {
    const pts = rows.map((r, i) => (r[s.key] === null ? null : [x(i), y(r[s.key]), r])).filter(Boolean);
    if (pts.length > 1) root.append(svg("polyline", { points: pts.map((p) => p[0] + "," + p[1]).join(" "), class: "series " + s.cls }));
    for (const [px, py, r] of pts) {
      const c = svg("circle", { cx: px, cy: py, r: 5, class: `pt ${s.cls}`, "data-series": s.key, "data-generation": r.generation, "data-id": r.design_id, onclick: () => selectDesign(r.design_id) });
      c.append(svg("title", { text: `generation ${r.generation} · ${r.design_name} (${r.design_id})\n${s.label}: ${fmt(r[s.key], 3)}` }));
      root.append(c);
    }
  }
  // legend (one row above the plot)
  let lx = m.l;
  for (const s of SERIES) {
    root.append(svg("line", { x1: lx, x2: lx + 20, y1: 14, y2: 14, class: "series " + s.cls }));
    root.append(svg("circle", { cx: lx + 10, cy: 14, r: 4, class: "pt " + s.cls }));
    root.append(svg("text", { x: lx + 26, y: 18, class: "legend", text: s.label }));
    lx += 40 + s.label.length * 7;
  }
  if (base !== null) {
    root.append(svg("line", { x1: lx, x2: lx + 22, y1: 14, y2: 14, class: "baseline" }));
    root.append(svg("text", { x: lx + 28, y: 18, class: "legend", text: "baseline (no memory)" }));
  }
  target.replaceChildren(root);
}

function scoreDomain() {
  const vals = state.run.entries.map((e) => e.deployment_score).filter((v) => v !== null);
  if (!vals.length) return [0, 1];
  let lo = Math.min(...vals), hi = Math.max(...vals);
  if (hi - lo < 1e-6) { lo -= 0.05; hi += 0.05; }
  return [lo, hi];
}

function renderLineage() {
  const target = $("lineage-chart");
  const run = state.run;
  const lay = run.lineage;
  if (!lay.nodes.length) return emptyChart(target, "The archive is empty so far.");
  const byId = Object.fromEntries(run.entries.map((e) => [e.id, e]));
  const cols = lay.columns.length, rowsN = Math.max(1, lay.rows);
  const colW = 210, rowH = 84, R = 17;
  const m = { l: 90, r: 100, t: 34, b: 92 };
  const W = Math.max(600, m.l + m.r + (cols - 1) * colW), H = m.t + m.b + (rowsN - 1) * rowH;
  const spanX = cols > 1 ? (W - m.l - m.r) / (cols - 1) : 0;
  const px = (c) => (cols > 1 ? m.l + c * spanX : W / 2);
  const py = (r) => m.t + r * rowH + 8;
  const pos = Object.fromEntries(lay.nodes.map((n) => [n.id, [px(n.col), py(n.row)]]));
  const [lo, hi] = scoreDomain();

  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "svgchart lineage", role: "img", "aria-label": "Lineage of designs" });
  // Big archives keep their natural size and scroll, rather than shrinking to unreadable text.
  root.style.minWidth = `${W}px`;
  $("lineage-card").parentElement.classList.toggle("stacked", cols > 4);
  root.append(svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }))));
  lay.columns.forEach((g, c) => root.append(svg("text", { x: px(c), y: 14, class: "colhead", "text-anchor": "middle", text: `gen ${g}` })));
  for (const [p, c] of lay.edges) {
    const [x1, y1] = pos[p], [x2, y2] = pos[c];
    const dx = (x2 - x1) / 2;
    const ang = Math.atan2(y2 - y1, x2 - x1);
    const ex = x2 - Math.cos(ang) * (R + 3), ey = y2 - Math.sin(ang) * (R + 3);
    // An edge that skips a column bends around any node (and its label) lying in its way.
    let bend = 0;
    const blocker = lay.nodes.find((nd) => {
      const [nx, ny] = pos[nd.id];
      if (nx <= x1 + 1 || nx >= x2 - 1) return false;
      const ly = y1 + ((y2 - y1) * (nx - x1)) / (x2 - x1);
      return ny - R - 8 < ly && ly < ny + R + 32;
    });
    if (blocker) {
      const [nx, ny] = pos[blocker.id];
      const ly = y1 + ((y2 - y1) * (nx - x1)) / (x2 - x1);
      bend = ((ny >= ly ? ny - R - 11 : ny + R + 36) - ly) / 0.75;
    }
    root.append(svg("path", { d: `M${x1 + R},${y1} C${x1 + dx},${y1 + bend} ${ex - dx * 0.6},${ey + bend} ${ex},${ey}`, class: "edge", "marker-end": "url(#arrow)", "data-edge": `${p}->${c}` }));
  }
  for (const n of lay.nodes) {
    const e = byId[n.id];
    const [cx, cy] = pos[n.id];
    const scored = e.deployment_score !== null;
    const fill = scored ? colorFor((e.deployment_score - lo) / (hi - lo)) : "#d5d7de";
    const g = svg("g", { class: "node" + (n.id === state.selected ? " selected" : "") + (scored ? "" : " failed") + (n.id === run.best_id ? " best" : ""), "data-id": n.id, tabindex: 0, role: "button", onclick: () => selectDesign(n.id), onkeydown: (ev) => { if (ev.key === "Enter" || ev.key === " ") selectDesign(n.id); } });
    g.append(svg("title", { text: `${e.name} (${e.id})\n${e.origin}, generation ${e.generation}, ${e.status}\ncollection ${fmt(e.collection_score)} · deployment ${fmt(e.deployment_score)} · normalized ${fmtSigned(e.normalized_score)}` }));
    g.append(svg("circle", { cx, cy, r: R + 5, class: "halo" }));
    g.append(svg("circle", { cx, cy, r: R, fill, class: "dot" + (e.kind === "baseline" ? " handbuilt" : "") }));
    g.append(svg("text", { x: cx, y: cy + 4, class: "node-score", "text-anchor": "middle", fill: scored ? textColorOn(fill) : "#6b6f7b", text: scored ? e.deployment_score.toFixed(2).replace(/^0/, "") : "✕" }));
    g.append(svg("text", { x: cx, y: cy + R + 15, class: "node-label", "text-anchor": "middle", text: trunc(e.name, 26) }));
    g.append(svg("text", { x: cx, y: cy + R + 27, class: "node-id", "text-anchor": "middle", text: e.id + (n.id === run.best_id ? " ★" : "") }));
    root.append(g);
  }
  // colour legend
  const lgW = 140, lgX = W - lgW - 40, lgY = H - 16;
  const grad = svg("linearGradient", { id: "score-grad" });
  STOPS.forEach((c, i) => grad.append(svg("stop", { offset: `${(i / (STOPS.length - 1)) * 100}%`, "stop-color": c })));
  root.querySelector("defs").append(grad);
  root.append(svg("text", { x: lgX - 8, y: lgY + 4, class: "legend", "text-anchor": "end", text: `deployment ${lo.toFixed(2)}` }));
  root.append(svg("rect", { x: lgX, y: lgY - 5, width: lgW, height: 10, rx: 3, fill: "url(#score-grad)" }));
  root.append(svg("text", { x: lgX + lgW + 6, y: lgY + 4, class: "legend", text: hi.toFixed(2) }));
  const focus = pos[state.selected] || pos[run.best_id];
  root.append(svg("circle", { cx: 16, cy: lgY, r: 7, class: "dot handbuilt", fill: "#ffffff" }));
  root.append(svg("text", { x: 28, y: lgY + 4, class: "legend", text: "hand-built" }));
  root.append(svg("circle", { cx: 108, cy: lgY, r: 7, class: "dot", fill: "#ffffff", stroke: "#e0a800", "stroke-width": 3 }));
  root.append(svg("text", { x: 120, y: lgY + 4, class: "legend", text: "best" }));
  root.append(svg("text", { x: 166, y: lgY + 4, class: "legend", text: "✕ failed check" }));
  target.replaceChildren(root);
  if (!state.lineageScrolled && focus && target.scrollWidth > target.clientWidth) {
    // First view of a big archive: bring the selected (best) design into view.
    target.scrollLeft = focus[0] - target.clientWidth / 2;
    target.scrollTop = focus[1] - target.clientHeight / 2;
    state.lineageScrolled = true;
  }
}

function renderTable() {
  const run = state.run;
  const cols = [
    ["Design", (e) => el("span", {}, el("b", { text: e.name }), " ", el("span", { class: "muted mono", text: e.id }), e.id === run.best_id ? el("span", { class: "star", title: "best design", text: " ★" }) : null)],
    ["Origin", (e) => el("span", { class: "badge origin-" + e.origin, text: e.origin })],
    ["Gen", (e) => String(e.generation), "num"],
    ["Parents", (e) => e.parent_ids.join(", ") || "—", "mono"],
    ["Status", (e) => el("span", { class: "badge status-" + e.status, text: e.status })],
    ["Collection", (e) => fmt(e.collection_score), "num"],
    ["Deployment", (e) => scoreBar(e.deployment_score), "num"],
    ["Normalized", (e) => el("span", { class: e.normalized_score === null ? "" : e.normalized_score >= 0 ? "pos" : "neg", text: fmtSigned(e.normalized_score) }), "num"],
    ["Novelty", (e) => fmt(e.novelty), "num"],
    ["Sampled", (e) => String(e.times_sampled), "num"],
    ["Tokens", (e) => (e.usage.total_tokens ? fmtInt(e.usage.total_tokens) : "—"), "num"],
    ["Cost", (e) => (e.usage.cost_usd ? fmtCost(e.usage.cost_usd) : "—"), "num"],
  ];
  const head = el("thead", {}, el("tr", {}, cols.map(([h, , c]) => el("th", { class: c || "", text: h }))));
  const body = el("tbody");
  const groups = [["Hand-built designs (baselines and seed)", run.entries.filter((e) => e.kind === "baseline")], ["Evolved designs", run.entries.filter((e) => e.kind === "evolved")]];
  if (run.baseline_score !== null) {
    body.append(el("tr", { class: "baseline-row" }, el("td", {}, el("b", { text: "baseline" }), " ", el("span", { class: "muted", text: "no-memory score on the deployment tasks" })), el("td", { colspan: 5 }), el("td", { class: "num", text: "—" }), el("td", { class: "num", text: fmt(run.baseline_score) }), el("td", { class: "num", text: "±0.00" }), el("td", { colspan: 4 })));
  }
  for (const [title, list] of groups) {
    if (!list.length) continue;
    body.append(el("tr", { class: "group" }, el("td", { colspan: cols.length, text: `${title} · ${list.length}` })));
    for (const e of list) {
      const tr = el("tr", { "data-id": e.id, class: e.id === state.selected ? "selected" : "", onclick: () => selectDesign(e.id) });
      for (const [, f, c] of cols) tr.append(el("td", { class: c || "" }, f(e)));
      body.append(tr);
    }
  }
  $("designs-table").replaceChildren(head, body);
}

// The genome search's operators: the numbers of the report's "Operators" section (same JSON).
function renderOperators() {
  const target = $("operators");
  const ops = state.run.operators;
  if (!ops || !ops.rows.length) return target.replaceChildren(el("p", { class: "muted", text: "No genome operators in this run." }));
  const cols = [
    ["Operator", (r, total) => (total ? el("b", { text: "total" }) : el("span", { class: "mono", text: r.operator })), ""],
    ["Tries", (r) => String(r.tries), "num"],
    ["Beat parent", (r) => String(r.wins), "num"],
    ["Rate", (r) => el("span", { class: "barcell" }, rateBar(r.rate), el("span", { text: fmt(r.rate, 3) })), "num"],
    ["Candidates screened", (r) => String(r.candidates), "num"],
    ["Evaluated children", (r) => String(r.evaluated), "num"],
    ["Candidates per evaluated child", (r) => fmt(r.candidates_per_child, 1), "num"],
    ["Fallbacks", (r) => String(r.fallbacks), "num"],
  ];
  const head = el("thead", {}, el("tr", {}, cols.map(([h, , c]) => el("th", { class: c, text: h }))));
  const row = (r, total) => el("tr", { class: total ? "total-row" : "", "data-operator": total ? null : r.operator }, cols.map(([, f, c]) => el("td", { class: c }, f(r, total))));
  const table = el("table", { class: "grid", id: "operators-table" }, head, el("tbody", {}, ops.rows.map((r) => row(r, false)), row(ops.total, true)));
  const notes = ops.notes.length
    ? el("details", { class: "op-notes" }, el("summary", { text: `${ops.notes.length} fallback note${ops.notes.length === 1 ? "" : "s"}: an operator could not make its candidates and another stood in` }), el("ul", {}, ops.notes.map((n) => el("li", {}, el("span", { class: "mono", text: `${n.id} ${n.operator}` }), ": " + n.note))))
    : el("p", { class: "muted small-note", text: "0 fallback notes: every operator made its own candidates." });
  target.replaceChildren(table, notes);
}

function rateBar(v) {
  const bar = el("span", { class: "bar" }, el("span", { class: "bar-fill win" }));
  bar.firstChild.style.width = `${Math.max(2, Math.min(1, v || 0) * 100)}%`;
  return bar;
}

function scoreBar(v) {
  if (v === null) return "—";
  const [lo, hi] = [0, 1];
  const bar = el("span", { class: "bar" }, el("span", { class: "bar-fill" }));
  bar.firstChild.style.width = `${Math.max(2, ((v - lo) / (hi - lo)) * 100)}%`;
  return el("span", { class: "barcell" }, bar, el("span", { text: fmt(v) }));
}

function renderUsage() {
  const target = $("usage-chart");
  const rows = state.run.usage;
  if (!rows.length) return emptyChart(target, "No iteration has finished yet.");
  const W = 1100, H = 230, m = { l: 64, r: 190, t: 24, b: 44 };
  const maxTok = Math.max(1, ...rows.map((r) => r.prompt_tokens + r.completion_tokens));
  const n = rows.length;
  const slot = (W - m.l - m.r) / n, bw = Math.min(64, slot * 0.55);
  const y = (v) => m.t + (H - m.t - m.b) * (1 - v / maxTok);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "svgchart", role: "img", "aria-label": "Tokens per iteration" });
  const nice = niceStep(maxTok / 4);
  for (let v = 0; v <= maxTok + 1e-9; v += nice) {
    root.append(svg("line", { x1: m.l, x2: W - m.r, y1: y(v), y2: y(v), class: v === 0 ? "axis-zero" : "grid" }));
    root.append(svg("text", { x: m.l - 8, y: y(v) + 4, class: "tick", "text-anchor": "end", text: fmtInt(v) }));
  }
  rows.forEach((r, i) => {
    const cx = m.l + slot * (i + 0.5), x0 = cx - bw / 2;
    const g = svg("g", { class: "usage-bar" });
    g.append(svg("title", { text: `iteration ${r.iteration} (generation ${r.generation}) → ${r.child_id} [${r.status}]\nprompt ${fmtInt(r.prompt_tokens)} · completion ${fmtInt(r.completion_tokens)} tokens\n${fmtCost(r.cost_usd)} · ${fmtInt(r.calls)} calls · ${fmt(r.duration_s, 1)} s` }));
    g.append(svg("rect", { x: x0, y: y(r.prompt_tokens), width: bw, height: y(0) - y(r.prompt_tokens), class: "tok-prompt", rx: 2 }));
    g.append(svg("rect", { x: x0, y: y(r.prompt_tokens + r.completion_tokens), width: bw, height: y(0) - y(r.completion_tokens), class: "tok-completion", rx: 2 }));
    // Labels shrink with the room each bar has (a long run has many narrow bars).
    if (slot >= 60) g.append(svg("text", { x: cx, y: y(r.prompt_tokens + r.completion_tokens) - 6, class: "bar-label", "text-anchor": "middle", text: r.cost_usd > 0 ? fmtCost(r.cost_usd) : fmtK(r.total_tokens) }));
    const every = Math.ceil(24 / slot);
    if (slot >= 110) {
      g.append(svg("text", { x: cx, y: H - m.b + 16, class: "tick", "text-anchor": "middle", text: `it ${r.iteration} · gen ${r.generation}` }));
      g.append(svg("text", { x: cx, y: H - m.b + 30, class: "tick muted-svg" + (r.status === "ok" ? "" : " bad"), "text-anchor": "middle", text: `→ ${r.child_id || "?"}${r.status === "ok" ? "" : " (" + r.status + ")"}` }));
    } else if ((r.iteration - 1) % every === 0) {
      g.append(svg("text", { x: cx, y: H - m.b + 16, class: "tick" + (r.status === "ok" ? "" : " bad"), "text-anchor": "middle", text: String(r.iteration) }));
    }
    root.append(g);
  });
  if (slot < 110) root.append(svg("text", { x: (m.l + W - m.r) / 2, y: H - 8, class: "axis-label", "text-anchor": "middle", text: "iteration (hover a bar for its design, cost and time)" }));
  const tot = state.run.usage_total;
  const lx = W - m.r + 20;
  root.append(svg("rect", { x: lx, y: m.t, width: 12, height: 12, class: "tok-prompt" }));
  root.append(svg("text", { x: lx + 18, y: m.t + 10, class: "legend", text: "prompt tokens" }));
  root.append(svg("rect", { x: lx, y: m.t + 20, width: 12, height: 12, class: "tok-completion" }));
  root.append(svg("text", { x: lx + 18, y: m.t + 30, class: "legend", text: "completion tokens" }));
  root.append(svg("text", { x: lx, y: m.t + 62, class: "legend strong", text: `total ${fmtInt(tot.total_tokens)} tokens` }));
  root.append(svg("text", { x: lx, y: m.t + 80, class: "legend", text: `${fmtCost(tot.cost_usd)} · ${fmtInt(tot.calls)} calls` }));
  target.replaceChildren(root);
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  for (const k of [1, 2, 2.5, 5, 10]) if (k * p >= raw) return k * p;
  return 10 * p;
}

// ------------------------------------------------------------------ one design
async function selectDesign(id, opts = {}) {
  const changed = id !== state.selected;
  state.selected = id;
  if (changed) {
    state.diffParent = null;
    if (!opts.keepTab && state.tab === "diff") state.tab = "diff";
    history.replaceState(null, "", "#" + encodeURIComponent(id));
  }
  document.querySelectorAll("[data-id].selected").forEach((n) => n.classList.remove("selected"));
  document.querySelectorAll(`[data-id="${CSS.escape(id)}"]`).forEach((n) => { if (n.matches(".node, tr")) n.classList.add("selected"); });
  try {
    const q = state.diffParent ? `?parent=${encodeURIComponent(state.diffParent)}` : "";
    const [detail, logs] = await Promise.all([getJSON(`/api/design/${encodeURIComponent(id)}${q}`), getJSON(`/api/design/${encodeURIComponent(id)}/logs`)]);
    if (state.selected !== id) return; // another click won the race
    state.detail = detail;
    state.logs = logs;
    renderDesign(changed);
  } catch (e) {
    showError(e.message);
  }
}

function renderDesign(changed) {
  const d = state.detail;
  $("design-title").replaceChildren(...[d.name, " ", el("span", { class: "muted mono", text: d.id }), d.id === state.run.best_id ? el("span", { class: "star", text: " ★ best" }) : null].filter((c) => c !== null));
  const link = (pid) => el("a", { href: "#" + pid, class: "mono", onclick: (ev) => { ev.preventDefault(); selectDesign(pid); }, text: pid });
  const meta = [
    el("span", { class: "badge origin-" + d.origin, text: d.origin }),
    el("span", { class: "badge status-" + d.status, text: d.status }),
    el("span", { class: "chip" }, el("b", { text: "generation" }), " " + d.generation),
    el("span", { class: "chip" }, el("b", { text: "parents" }), " ", d.parent_ids.length ? d.parent_ids.flatMap((p, i) => (i ? [", ", link(p)] : [link(p)])) : "none"),
    el("span", { class: "chip" }, el("b", { text: "children" }), " ", d.children.length ? d.children.flatMap((p, i) => (i ? [", ", link(p)] : [link(p)])) : "none"),
    el("span", { class: "chip" }, el("b", { text: "sampled" }), ` ${d.times_sampled}×`),
  ];
  if (d.usage.total_tokens) meta.push(el("span", { class: "chip" }, el("b", { text: "usage" }), ` ${fmtInt(d.usage.total_tokens)} tok · ${fmtCost(d.usage.cost_usd)}`));
  if (d.operator) meta.push(el("span", { class: "chip", "data-testid": "operator" }, el("b", { text: "operator" }), " " + d.operator));
  if (d.probe_score !== null) meta.push(el("span", { class: "chip", "data-testid": "probe" }, el("b", { text: "advice probe" }), " " + fmt(d.probe_score, 3)));
  if (d.candidates.length) meta.push(el("span", { class: "chip" }, el("b", { text: "screened" }), ` ${d.candidates.length} candidate${d.candidates.length === 1 ? "" : "s"}`));
  if (d.beat_parent !== null) meta.push(el("span", { class: "chip" }, el("b", { text: "beat parent" }), d.beat_parent ? " yes" : " no"));
  if (d.played_refuted) meta.push(el("span", { class: "chip", "data-testid": "played-refuted", title: "The agent check refuted every candidate of two generations since a design was played; this one was played anyway." }, el("b", { text: "played" }), " though the agent check refuted it"));
  $("design-meta").replaceChildren(...meta);
  renderGenome(d);
  const sc = (label, v, signed) => el("div", { class: "score" }, el("div", { class: "score-label", text: label }), el("div", { class: "score-value " + (signed && v !== null ? (v >= 0 ? "pos" : "neg") : ""), text: signed ? fmtSigned(v) : fmt(v) }));
  $("design-scores").replaceChildren(sc("collection", d.collection_score), sc("deployment", d.deployment_score), sc("normalized", d.normalized_score, true), sc("novelty", d.novelty));
  const errBox = $("design-errors");
  errBox.hidden = !d.errors.length;
  errBox.replaceChildren(el("strong", { text: `This design is ${d.status}: ` }), ...d.errors.map((e) => el("div", { class: "mono", text: e })));

  // Source with line numbers.
  $("source").replaceChildren(...(d.source === null ? [el("span", { class: "muted", text: "The source of this design is not on disk yet." })] : codeLines(d.source.replace(/\n$/, "").split("\n"))));

  // Diff.
  const sel = $("diff-parent");
  sel.replaceChildren(...d.parent_ids.map((p) => el("option", { value: p, text: p + (state.run.entries.find((e) => e.id === p) ? " · " + state.run.entries.find((e) => e.id === p).name : "") })));
  sel.disabled = d.parent_ids.length < 2;
  if (d.diff_parent) sel.value = d.diff_parent;
  const diffPre = $("diff");
  if (!d.parent_ids.length) {
    diffPre.replaceChildren(el("span", { class: "muted", text: "A hand-built design has no parent to compare against." }));
    $("diff-stats").textContent = "";
  } else if (d.diff === null) {
    diffPre.replaceChildren(el("span", { class: "muted", text: "The parent's or this design's source is not on disk." }));
    $("diff-stats").textContent = "";
  } else {
    const lines = d.diff.replace(/\n$/, "").split("\n");
    const add = lines.filter((l) => l.startsWith("+") && !l.startsWith("+++")).length;
    const del = lines.filter((l) => l.startsWith("-") && !l.startsWith("---")).length;
    $("diff-stats").replaceChildren(el("span", { class: "pos", text: `+${add}` }), " ", el("span", { class: "neg", text: `−${del}` }), ` lines against ${d.diff_parent}`);
    diffPre.replaceChildren(...(lines.length && lines[0] ? lines.map((l) => el("div", { class: "dl " + (l.startsWith("@@") ? "hunk" : l.startsWith("+++") || l.startsWith("---") ? "file" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : ""), text: l || " " })) : [el("span", { class: "muted", text: "Identical to its parent." })]));
  }

  // Critique.
  $("critique").replaceChildren(d.critique ? renderCritique(d.critique) : el("p", { class: "muted", text: d.kind === "baseline" ? "Hand-built designs are not critiqued: the DebugAgent writes a critique for the parents of each new design." : "No critique was given for this design." }));

  // Tasks.
  renderTasks(d);

  // Logs: keep the search text; reset the episode choice when the design changed.
  const epSel = $("log-episode");
  const prev = changed ? "all" : epSel.value;
  const opts = [el("option", { value: "all", text: "all episodes" })];
  for (const ep of state.logs.episodes) opts.push(el("option", { value: "ep:" + ep.label, text: `episode ${ep.label} (${ep.lines.length})` }));
  if (state.logs.debug_log.length) opts.push(el("option", { value: "debug", text: `DebugLog text (${state.logs.debug_log.length})` }));
  epSel.replaceChildren(...opts);
  epSel.value = [...epSel.options].some((o) => o.value === prev) ? prev : "all";
  renderLogs();
  showTab(state.tab);
}

function renderGenome(d) {
  const box = $("design-genome");
  box.hidden = d.genome === null;
  if (d.genome === null) return;
  const made = d.operator ? `made by ${d.operator}` : "hand-built";
  $("genome-sub").textContent = d.genome_lines ? `${made} · one line per part` : `${made} · does not load: ${d.genome_error}`;
  $("genome-lines").replaceChildren(
    ...(d.genome_lines || []).map((l) => {
      const m = l.startsWith("store ") ? null : l.match(/^(\S+)(\s+)(\w+)(.*)$/);
      return el("div", { class: "gl" }, ...(m ? [el("span", { class: "g-role", text: m[1] + m[2] }), el("span", { class: "g-part", text: m[3] }), m[4]] : [el("span", { class: "g-role", text: l.slice(0, 9) }), l.slice(9)]));
    }),
  );
  $("genome-lines").hidden = !d.genome_lines;
  const notes = $("genome-notes");
  notes.hidden = !d.operator_notes.length;
  notes.replaceChildren(...d.operator_notes.map((n) => el("li", { text: n })));
  $("genome-json").textContent = JSON.stringify(d.genome, null, 2);
  $("genome-json-box").open = !d.genome_lines;
  renderChecks(d.checked || []);
}

// The genomes the agent check measured in this generation, each with a button that shows the task
// agent's collection games with it in the Logs tab.
function renderChecks(rows) {
  const box = $("genome-checks");
  box.hidden = !rows.length;
  if (!rows.length) return box.replaceChildren();
  const head = ["agent check", "retrieve parts", "screening", "with the agent's games", "its games reached", ""];
  const row = (c) => el("tr", { "data-check": c.logs_id || "" },
    el("td", { class: "mono", text: c.logs_id || "—" }),
    el("td", { text: c.parts.join(" + ") }),
    el("td", { class: "num", text: fmt(c.screen_score, 3) }),
    el("td", { class: "num", text: fmt(c.agent_probe, 3) }),
    el("td", { class: "num", text: fmt(c.collection_reached, 3) }),
    el("td", {}, c.logs_id ? el("button", { type: "button", class: "check-logs", text: "games", onclick: () => showCheckLogs(c.logs_id) }) : ""));
  box.replaceChildren(
    el("h4", { text: "Checked with the task agent's own collection games" }),
    el("table", { class: "checks" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))), el("tbody", {}, rows.map(row))),
  );
}

async function showCheckLogs(logsId) {
  try {
    state.logs = await getJSON(`/api/design/${encodeURIComponent(logsId)}/logs`);
    const opts = [el("option", { value: "all", text: `${logsId}: all games` })];
    for (const ep of state.logs.episodes) opts.push(el("option", { value: "ep:" + ep.label, text: `${logsId} ${ep.label} (${ep.lines.length})` }));
    $("log-episode").replaceChildren(...opts);
    $("log-episode").value = "all";
    renderLogs();
    showTab("logs");
  } catch (e) {
    showError(e.message);
  }
}

function renderCritique(text) {
  const out = el("div");
  for (const para of text.split(/\n\s*\n/)) {
    const lines = para.split("\n");
    if (lines.every((l, i) => i === 0 || /^\s*\d+[.)]\s/.test(l)) && lines.length > 1) {
      out.append(el("p", {}, inlineCode(lines[0])));
      out.append(el("ol", {}, lines.slice(1).map((l) => el("li", {}, inlineCode(l.replace(/^\s*\d+[.)]\s*/, ""))))));
    } else out.append(el("p", {}, inlineCode(para)));
  }
  return out;
}

function inlineCode(text) {
  return text.split(/(`[^`]+`)/).map((part) => (part.startsWith("`") && part.endsWith("`") && part.length > 1 ? el("code", { text: part.slice(1, -1) }) : part));
}

function renderTasks(d) {
  const box = $("tasks");
  if (!d.per_task.length) return box.replaceChildren(el("p", { class: "muted", text: "No per-task results (the design was not evaluated)." }));
  const gc = d.goal_completion;
  const pct = (r) => `${Math.round(r.rate * 100)}% [${Math.round(r.ci95[0] * 100)}, ${Math.round(r.ci95[1] * 100)}] (${r.successes}/${r.n})`;
  const summary = gc ? el("p", { class: "muted", text: `Deployment: task goal completion ${pct(gc.tgc)} · scenario goal completion ${pct(gc.sgc)} (a scenario counts only when all its tasks succeed; 95% Wilson intervals)` }) : "";
  const t = el("table", { class: "grid compact" }, el("thead", {}, el("tr", {}, ["Episode", "Phase", "Task", "Result", "Score", "Steps"].map((h, i) => el("th", { class: i >= 4 ? "num" : "", text: h })))));
  const body = el("tbody");
  for (const r of d.per_task) body.append(el("tr", {}, el("td", { class: "mono", text: r.label || "—" }), el("td", { text: r.phase || "" }), el("td", { class: "mono", text: r.task_id || "" }), el("td", {}, el("span", { class: "badge " + (r.success ? "status-ok" : "status-error"), text: r.success ? "success" : "failed" })), el("td", { class: "num", text: fmt(r.score) }), el("td", { class: "num", text: r.steps ?? "—" })));
  t.append(body);
  box.replaceChildren(summary, t);
}

function codeLines(lines) {
  const tokens = highlightPython(lines);
  return lines.map((l, i) => el("div", { class: "cl" }, el("span", { class: "ln", text: String(i + 1) }), el("span", { class: "lc" }, l ? tokens[i].map(([t, c]) => (c ? el("span", { class: "tok-" + c, text: t }) : t)) : " ")));
}

const PY_KEYWORDS = new Set("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield".split(" "));
const PY_CONSTS = new Set(["True", "False", "None"]);
const PY_BUILTINS = new Set("abs all any bool dict enumerate filter float int isinstance len list map max min print range reversed round set sorted str sum tuple zip".split(" "));

// A small line-by-line Python highlighter: [text, class] tokens per line; triple-quoted strings
// may span lines. Enough for reading designs; not a parser.
function highlightPython(lines) {
  const out = [];
  let triple = null; // the delimiter of an open triple-quoted string
  const re = /(#.*$)|("""|''')|([rbfRBF]{0,2}"(?:[^"\\]|\\.)*"|[rbfRBF]{0,2}'(?:[^'\\]|\\.)*')|\b(\d+(?:\.\d+)?)\b|([A-Za-z_]\w*)/g;
  for (const line of lines) {
    const toks = [];
    let i = 0;
    if (triple) {
      const end = line.indexOf(triple);
      if (end === -1) {
        out.push([[line, "str"]]);
        continue;
      }
      toks.push([line.slice(0, end + 3), "str"]);
      i = end + 3;
      triple = null;
    }
    re.lastIndex = i;
    let m;
    let prevWord = null;
    while ((m = re.exec(line))) {
      if (m.index > i) toks.push([line.slice(i, m.index), ""]);
      let cls = "";
      let text = m[0];
      if (m[1]) cls = "com";
      else if (m[2]) {
        const end = line.indexOf(m[2], m.index + 3);
        if (end === -1) {
          text = line.slice(m.index);
          triple = m[2];
        } else text = line.slice(m.index, end + 3);
        cls = "str";
      } else if (m[3]) cls = "str";
      else if (m[4]) cls = "num";
      else if (m[5]) cls = PY_KEYWORDS.has(text) ? "kw" : PY_CONSTS.has(text) ? "const" : prevWord === "def" || prevWord === "class" ? "fn" : PY_BUILTINS.has(text) ? "bi" : "";
      toks.push([text, cls]);
      prevWord = m[5] ? text : null;
      i = m.index + text.length;
      re.lastIndex = i;
      if (triple) break;
    }
    if (i < line.length) toks.push([line.slice(i), ""]);
    out.push(toks);
  }
  return out;
}

function renderLogs() {
  const logs = state.logs;
  const pre = $("logs");
  if (!logs) return;
  const choice = $("log-episode").value;
  let lines;
  if (choice === "debug") lines = logs.debug_log;
  else if (choice.startsWith("ep:")) lines = (logs.episodes.find((e) => "ep:" + e.label === choice) || { lines: [] }).lines;
  else lines = logs.episodes.flatMap((e) => e.lines);
  if (!logs.episodes.length && choice === "all" && logs.debug_log.length) lines = logs.debug_log;
  const q = $("log-search").value.trim().toLowerCase();
  const shown = q ? lines.filter((l) => l.toLowerCase().includes(q)) : lines;
  $("log-count").textContent = q ? `${shown.length} of ${lines.length} lines match` : `${lines.length} lines`;
  if (!lines.length) return pre.replaceChildren(el("span", { class: "muted", text: "No runtime logs for this design (yet)." }));
  if (!shown.length) return pre.replaceChildren(el("span", { class: "muted", text: `No line contains “${$("log-search").value.trim()}”.` }));
  pre.replaceChildren(...shown.slice(0, 5000).map((l) => logLine(l, q)));
}

function logLine(line, q) {
  const kind = /\bERROR\b|Traceback|Error:/.test(line) ? "err" : /\bSIMILARITY\b/.test(line) ? "sim" : /^---|^===/.test(line) ? "hdr" : /\bRETURN\b/.test(line) ? "ret" : /\bPRINT\b/.test(line) ? "prt" : "";
  const div = el("div", { class: "logline " + kind });
  const m = line.match(/^(\[[^\]]+\])(.*)$/);
  const parts = m ? [[m[1], "tag"], [m[2], ""]] : [[line, ""]];
  for (const [text, cls] of parts) {
    const span = el("span", { class: cls });
    if (!q) span.textContent = text;
    else {
      const low = text.toLowerCase();
      let i = 0, j;
      while ((j = low.indexOf(q, i)) !== -1) {
        span.append(text.slice(i, j), el("mark", { text: text.slice(j, j + q.length) }));
        i = j + q.length;
      }
      span.append(text.slice(i));
    }
    div.append(span);
  }
  if (!line) div.textContent = " ";
  return div;
}

function showTab(name) {
  state.tab = name;
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
  document.querySelectorAll(".tabpanel").forEach((p) => { p.hidden = p.dataset.panel !== name; });
}

// ------------------------------------------------------------------ wiring
document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
$("log-search").addEventListener("input", renderLogs);
$("log-episode").addEventListener("change", renderLogs);
$("diff-parent").addEventListener("change", (ev) => {
  state.diffParent = ev.target.value;
  selectDesign(state.selected);
});
window.addEventListener("hashchange", () => {
  const id = decodeURIComponent(location.hash.slice(1));
  if (id && id !== state.selected && state.run && state.run.entries.some((e) => e.id === id)) selectDesign(id);
});

poll();
setInterval(poll, POLL_MS);
