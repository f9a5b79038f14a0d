// Health (every operator): readiness and each dependency as keel checks
// them now (and quotebot's Discord gateway, when keel is told where
// quotebot is), the version, the database and its replica, the migrations.
// Refreshed every 5 s while open.

import { call, problem } from "./api.js";
import { h, show, table, when, repeat, chart } from "./ui.js";

let shown = "";

export async function health(again = false) {
  const r = await call("GET", "/health");
  if (r.status !== 200) return show("Health", h("p", { class: "alert", role: "alert", text: problem(r) }));
  const d = r.data;
  // A refresh that would draw the same page leaves it (and the focus) be.
  const seen = JSON.stringify({ ...d, database_bytes: 0, traffic: d.traffic.slice(0, -1) });
  if (again && seen === shown) return;
  shown = seen;
  const checks = Object.entries(d.readiness.checks || {}).map(([k, v]) =>
    h("tr", {}, h("th", { scope: "row", text: k }), h("td", { class: v === "ok" ? "ok" : "bad", text: v })),
  );
  const q = d.quotebot;
  if (q) {
    const ok = q.answered && q.shards > 0 && q.ready === q.shards;
    const text = q.answered ? `${q.what}${q.restarts ? `, ${q.restarts} started again` : ""}${q.changed_at ? ` (since ${when(q.changed_at)})` : ""}` : q.what;
    checks.push(h("tr", {}, h("th", { scope: "row", text: "Discord gateway (quotebot)" }), h("td", { class: ok ? "ok" : "bad", text })));
  }
  const facts = [
    ["Status", d.readiness.status],
    ["Version", d.version],
    ["Services", d.services.join(", ")],
    ["Database", d.database + (d.database_bytes != null ? ` (${(d.database_bytes / 1048576).toFixed(1)} MiB)` : "")],
    ["Replica", d.replica ? `last sync ${when(d.replica.last_sync)}${d.replica.behind ? " (behind)" : ""}` : "not replicated"],
  ];
  const t = d.traffic;
  const perSec = (v) => `${v.toFixed(2)}/s`;
  show(
    "Health",
    h("dl", {}, facts.map(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })])),
    h("h2", { text: "The last hour" }),
    h(
      "div",
      { class: "charts" },
      chart("Requests", t.map((i) => i.requests_per_second), perSec),
      chart("Server errors (5xx)", t.map((i) => i.errors_per_second), perSec),
      chart("p99 latency", t.map((i) => (i.p99_seconds || 0) * 1000), (v) => `≤ ${v >= 10 ? v.toFixed(0) : v.toFixed(1)} ms`),
    ),
    h("h2", { text: "Dependencies" }),
    table("Dependencies", ["Dependency", "Answer"], checks),
    h("h2", { text: "Providers" }),
    d.providers.length
      ? table(
          "Providers: their last answer",
          ["Provider", "Last answer", "When"],
          d.providers.map((p) => h("tr", {}, h("th", { scope: "row", text: p.peer }), h("td", { class: p.ok ? "ok" : "bad", text: p.what }), h("td", { text: when(p.at) }))),
        )
      : h("p", { text: "No provider called since keel started." }),
    h("h2", { text: "Migrations" }),
    table(
      "Migrations",
      ["Part", "Version", "Applied"],
      d.migrations.map((m) => h("tr", {}, h("td", { text: m.component }), h("td", { text: m.version }), h("td", { text: when(m.applied_at) }))),
    ),
  );
  repeat(() => (/^(#\/?health)?$/.test(location.hash) ? health(true) : null), 5000);
}
