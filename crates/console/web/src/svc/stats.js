// Statistics: devices by type, app version and state, deliveries and
// their errors by code, each drawn as a bar chart with its numbers in a
// table beside it.

import { call, problem } from "./api.js";
import { bars, failed, h, show, table } from "../ui.js";

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
  show("Statistics", h("p", {}, `${d.total} devices; counted now, from every send so far.`),
    h("div", { class: "charts" }, charts.map(([id, title, rows]) => figure(id, title, rows))));
}

function figure(id, title, rows) {
  const numbers = rows.length
    ? table(`${title}: the numbers`, ["", ["Count", "num"]], rows.map(([k, n]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "num" }, n))), { id: `${id}-numbers` })
    : h("p", {}, "None yet.");
  return h("figure", { class: "stat", id },
    h("figcaption", {}, title),
    rows.length ? h("div", { class: "bars" }, bars(title, rows)) : null,
    numbers);
}
