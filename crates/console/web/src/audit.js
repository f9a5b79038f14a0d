// The audit log (every operator): newest first, narrowed by actor,
// action or subject, 50 a page.

import { call, problem } from "./api.js";
import { h, show, table, when, field } from "./ui.js";

// svc's events in words (the code is shown beside them).
const NAMES = {
  svc_admin_signed_in: "svc admin signed in",
  svc_admin_sign_in_refused: "svc admin's sign-in refused",
  svc_admin_sign_in_throttled: "svc admin's sign-in throttled",
  svc_admin_signed_out: "svc admin signed out",
  svc_app_password_created: "Application password made",
  svc_app_password_revoked: "Application password revoked",
  svc_settings_changed: "svc settings changed",
  svc_devices_imported: "Devices imported",
  svc_form_created: "Form created",
  svc_form_changed: "Form changed",
  svc_form_removed: "Form removed",
  svc_send_created: "Send made",
  svc_send_cancelled: "Send cancelled",
  svc_admin_added: "svc admin added",
  svc_admin_removed: "svc admin removed",
  svc_admin_disabled: "svc admin disabled",
  svc_admin_enabled: "svc admin enabled",
  svc_admin_password_set: "svc admin's password set",
  svc_admin_sessions_ended: "svc admin's sessions ended",
  svc_admin_capabilities_changed: "svc admin's capabilities changed",
  svc_forms_appcheck_verified: "App Check token verified (a form submission)",
};

/// An action in words, its code beside.
function what(action) {
  const words = NAMES[action];
  return words ? [words, " ", h("small", { text: action })] : action;
}

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
      h("td", {}, what(e.action)),
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
