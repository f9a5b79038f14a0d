// The audit log: newest first, filtered by event, admin and form.

import { call, problem, query } from "./api.js";
import { failed, h, pager, show, table, when } from "./ui.js";

const EVENTS = [
  ["svc_admin_signed_in", "Signed in"],
  ["svc_admin_sign_in_refused", "Sign-in refused"],
  ["svc_admin_sign_in_throttled", "Sign-in throttled"],
  ["svc_admin_signed_out", "Signed out"],
  ["svc_app_password_created", "Application password made"],
  ["svc_app_password_revoked", "Application password revoked"],
  ["svc_settings_changed", "Settings changed"],
  ["svc_devices_imported", "Devices imported"],
  ["svc_form_created", "Form created"],
  ["svc_form_changed", "Form changed"],
  ["svc_form_removed", "Form removed"],
  ["svc_send_created", "Send made"],
  ["svc_send_cancelled", "Send cancelled"],
  ["svc_admin_added", "Admin added"],
  ["svc_admin_removed", "Admin removed"],
  ["svc_admin_disabled", "Admin disabled"],
  ["svc_admin_enabled", "Admin enabled"],
  ["svc_admin_password_set", "Admin's password set"],
  ["svc_admin_sessions_ended", "Admin's sessions ended"],
  ["svc_admin_capabilities_changed", "Admin's capabilities changed"],
  ["svc_forms_appcheck_verified", "App Check token verified (a form submission)"],
];
const NAMES = Object.fromEntries(EVENTS);

/// A change or detail as short text: `key: value` pairs.
function brief(v) {
  if (v === null || v === undefined) return "";
  if (typeof v !== "object") return String(v);
  return Object.entries(v).map(([k, x]) => `${k}: ${typeof x === "object" ? JSON.stringify(x) : x}`).join("; ");
}

export async function audit(params) {
  const event = params.get("event") || "";
  const actor = params.get("actor") || "";
  const form = params.get("form_id") || "";
  const page = Number(params.get("page") || 1);
  const res = await call("GET", `/admin/audit${query({ event, actor, form_id: form, page, per_page: 50 })}`);
  if (res.status !== 200) return failed("Audit log", problem(res));
  const field = (id) => filter.querySelector(id).value.trim();
  const filter = h("form", { id: "audit-filter", onsubmit: (e) => {
    e.preventDefault();
    location.hash = `#/audit${query({ event: field("#audit-event"), actor: field("#audit-actor"), form_id: field("#audit-form") })}`;
  } },
    h("label", { for: "audit-event" }, "Event"),
    h("select", { id: "audit-event" }, h("option", { value: "" }, "every event"),
      EVENTS.map(([v, text]) => h("option", { value: v, selected: v === event }, text))),
    h("label", { for: "audit-actor" }, "Who (username, app id or cli)"),
    h("input", { id: "audit-actor", maxlength: 200, value: actor }),
    h("label", { for: "audit-form" }, "Form id"),
    h("input", { id: "audit-form", maxlength: 100, value: form }),
    h("button", { type: "submit" }, "Filter"));
  const rows = res.data.entries.map((a) => {
    const change = a.before || a.after ? `${brief(a.before) || "—"} → ${brief(a.after) || "—"}` : brief(a.detail);
    return h("tr", {}, h("td", {}, when(a.created_at)), h("td", {}, NAMES[a.event] || a.event),
      h("td", {}, a.actor), h("td", {}, a.subject || ""), h("td", { class: "change" }, change), h("td", {}, a.address || ""));
  });
  const total = res.data.total;
  const pages = Math.max(1, Math.ceil(total / res.data.per_page));
  const filtered = event || actor || form;
  show("Audit log", filter,
    rows.length
      ? h("div", { class: "scroll" }, table(`${total} entr${total === 1 ? "y" : "ies"}${filtered ? " matching" : ""}, newest first`,
          ["When", "Event", "Who", "On", "Change", "From"], rows, { id: "audit-list" }))
      : h("p", { id: "audit-empty" }, filtered ? "No entry matches." : "Nothing recorded yet: sign-ins, changes and App Check verifications of form submissions are written here."),
    pager("#/audit", page, pages, Object.fromEntries(Object.entries({ event, actor, form_id: form }).filter(([, v]) => v))));
}
