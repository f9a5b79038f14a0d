// The audit log: newest first, filtered by event and form.

import { call, problem, query } from "./api.js";
import { failed, h, pager, show, table, when } from "./ui.js";

const EVENTS = [["svc_forms_appcheck_verified", "App Check token verified (a form submission)"]];

export async function audit(params) {
  const event = params.get("event") || "";
  const form = params.get("form_id") || "";
  const page = Number(params.get("page") || 1);
  const res = await call("GET", `/admin/audit${query({ event, form_id: form, page, per_page: 50 })}`);
  if (res.status !== 200) return failed("Audit log", problem(res));
  const filter = h("form", { id: "audit-filter", onsubmit: (e) => {
    e.preventDefault();
    location.hash = `#/audit${query({ event: filter.querySelector("#audit-event").value, form_id: filter.querySelector("#audit-form").value.trim() })}`;
  } },
    h("label", { for: "audit-event" }, "Event"),
    h("select", { id: "audit-event" }, h("option", { value: "" }, "every event"),
      EVENTS.map(([v, text]) => h("option", { value: v, selected: v === event }, text))),
    h("label", { for: "audit-form" }, "Form id"),
    h("input", { id: "audit-form", maxlength: 100, value: form }),
    h("button", { type: "submit" }, "Filter"));
  const rows = res.data.entries.map((a) =>
    h("tr", {}, h("td", {}, when(a.created_at)), h("td", {}, a.event), h("td", {}, a.app_id), h("td", {}, a.form_id || ""),
      h("td", { class: "hash" }, a.token_hash.slice(0, 12) + "…")));
  const total = res.data.total;
  const pages = Math.max(1, Math.ceil(total / res.data.per_page));
  const filtered = event || form;
  show("Audit log", filter,
    rows.length
      ? table(`${total} entr${total === 1 ? "y" : "ies"}${filtered ? " matching" : ""}, newest first`,
          ["When", "Event", "App", "Form", "Token (SHA-256)"], rows, { id: "audit-list" })
      : h("p", { id: "audit-empty" }, filtered ? "No entry matches." : "Nothing recorded yet: App Check verifications of form submissions are written here."),
    pager("#/audit", page, pages, Object.fromEntries(Object.entries({ event, form_id: form }).filter(([, v]) => v))));
}
