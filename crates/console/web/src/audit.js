// The audit log (every operator): newest first, narrowed by actor,
// action or subject, 50 a page.

import { call, problem } from "./api.js";
import { h, show, table, when, field } from "./ui.js";

export async function audit(params) {
  const page = Number(params.get("page") || "1");
  const inputs = ["actor", "action", "subject"].map((k) => [k, h("input", { name: k, value: params.get(k) || "" })]);
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (e) => {
        e.preventDefault();
        const q = new URLSearchParams();
        for (const [k, i] of inputs) if (i.value.trim()) q.set(k, i.value.trim());
        location.hash = "#/audit?" + q;
      },
    },
    inputs.map(([k, i]) => field(k[0].toUpperCase() + k.slice(1), i)),
    h("button", { type: "submit", text: "Filter" }),
  );
  const q = new URLSearchParams();
  for (const k of ["actor", "action", "subject"]) if (params.get(k)) q.set(k, params.get(k));
  q.set("page", String(page));
  const r = await call("GET", "/audit?" + q);
  if (r.status !== 200) return show("Audit log", form, h("p", { class: "alert", role: "alert", text: problem(r) }));
  const rows = r.data.entries.map((e) =>
    h(
      "tr",
      {},
      h("td", { text: when(e.at) }),
      h("td", { text: e.actor }),
      h("td", { text: e.action }),
      h("td", { text: e.subject || "" }),
      h("td", {}, h("code", { text: JSON.stringify({ before: e.before, after: e.after, detail: e.detail }, (k, v) => (v === null ? undefined : v)) })),
    ),
  );
  const pages = Math.max(1, Math.ceil(r.data.total / r.data.per_page));
  const at = (p) => {
    const n = new URLSearchParams(q);
    n.set("page", String(p));
    return "#/audit?" + n;
  };
  const exported = new URLSearchParams(q);
  exported.delete("page");
  show(
    "Audit log",
    form,
    h("p", {}, h("a", { href: "/console/v1/audit/export?" + exported, download: "audit.csv", text: "Export these entries (CSV)" })),
    rows.length ? table("Audit entries", ["When", "Who", "What", "On", "Change"], rows) : h("p", { text: "No entry." }),
    h(
      "nav",
      { class: "pager", "aria-label": "Pages" },
      page > 1 ? h("a", { href: at(page - 1), text: "Newer" }) : null,
      h("span", { text: `Page ${page} of ${pages}` }),
      page < pages ? h("a", { href: at(page + 1), text: "Older" }) : null,
    ),
  );
}
