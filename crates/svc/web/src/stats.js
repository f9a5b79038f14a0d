// Statistics: devices by type, app version and state, deliveries and
// their errors by code, each drawn as a bar chart (uPlot) with its numbers
// in a table beside it.

import uPlot from "uplot";
import { call, problem } from "./api.js";
import { failed, h, own, show, table } from "./ui.js";

const STYLE = getComputedStyle(document.documentElement);
const BAR = STYLE.getPropertyValue("--accent").trim() || "#1d4ed8";
const INK = STYLE.getPropertyValue("--ink").trim() || "#1f2933";

// Steps of the count axis: whole numbers only.
const COUNTS = [1, 2, 5].flatMap((m) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].map((p) => m * p)).sort((a, b) => a - b);

export async function stats() {
  const res = await call("GET", "/stats");
  if (res.status !== 200) return failed("Statistics", problem(res));
  const { devices: d, deliveries: s } = res.data;
  const errors = { ...s.ticket_errors };
  for (const [code, n] of Object.entries(s.receipts.error)) errors[code] = (errors[code] || 0) + n;
  const charts = [
    ["by-type", "Devices by type", Object.entries(d.by_type)],
    ["by-state", "Devices by state", [["active", d.active], ["inactive", d.inactive]]],
    ["by-version", "Devices by app version", Object.entries(d.by_app_version)],
    ["deliveries", "Deliveries", [["queued", s.queued], ["sent", s.sent], ["receipts ok", s.receipts.ok]]],
    ["errors", "Delivery errors by code", Object.entries(errors)],
  ];
  const figures = charts.map(([id, title, rows]) => figure(id, title, rows));
  show("Statistics", h("p", {}, `${d.total} devices; counted now, from every send so far.`), h("div", { class: "charts" }, figures));
  for (const [i, [, title, rows]] of charts.entries()) {
    if (rows.length) draw(figures[i].querySelector(".chart"), title, rows);
  }
}

function figure(id, title, rows) {
  const numbers = rows.length
    ? table(`${title}: the numbers`, ["", ["Count", "num"]], rows.map(([k, n]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "num" }, n))), { id: `${id}-numbers` }, "sr-only")
    : h("p", {}, "None yet.");
  return h("figure", { class: "stat", id },
    h("figcaption", {}, title),
    rows.length ? h("div", { class: "chart", role: "img", "aria-label": `${title}: ${rows.map(([k, n]) => `${k} ${n}`).join(", ")}` }) : null,
    numbers);
}

/// A bar per row, labelled below.
function draw(el, title, rows) {
  const labels = rows.map(([k]) => k);
  const width = Math.max(240, Math.min(560, el.clientWidth || 320));
  const opts = {
    width,
    height: 200,
    legend: { show: false },
    cursor: { show: false },
    scales: { x: { time: false, range: [-0.5, rows.length - 0.5] }, y: { range: (_, __, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [
      { stroke: INK, splits: () => labels.map((_, i) => i), values: (_, splits) => splits.map((i) => labels[i] ?? ""), grid: { show: false } },
      { stroke: INK, size: 50, incrs: COUNTS },
    ],
    series: [{}, { label: title, fill: BAR, stroke: BAR, paths: uPlot.paths.bars({ size: [0.6, 80] }), points: { show: false } }],
  };
  own(new uPlot(opts, [labels.map((_, i) => i), rows.map(([, n]) => n)], el));
}
