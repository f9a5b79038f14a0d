// svc's own users (who sign in to svc's API and make its application
// passwords), for an operator with the operators role: disable and
// enable, a new login password (shown once), end every session and
// application password, remove. Each change is in the audit log.

import { call, problem } from "./api.js";
import { alertBox, failed, h, say, show, table, when } from "../ui.js";

export async function admins() {
  const res = await call("GET", "/admin/users");
  if (res.status !== 200) return failed("svc admins", problem(res));
  const error = alertBox("admins-error");
  const made = h("section", { id: "admin-password", hidden: true, "aria-live": "polite" });
  const rows = res.data.map((u) => {
    const act = (label, f, danger) =>
      h("button", { type: "button", class: danger ? "link danger" : "link", onclick: f, "aria-label": `${label} ${u.username}` }, label);
    return h("tr", { "data-user": u.username },
      h("td", {}, u.username),
      h("td", {}, u.capabilities.join(", ") || "none"),
      h("td", { class: "state" }, u.disabled ? "Disabled" : "Active"),
      h("td", { class: "num" }, String(u.sessions)),
      h("td", { class: "num" }, String(u.app_passwords)),
      h("td", {}, when(u.created_at)),
      h("td", { class: "actions" },
        act(u.disabled ? "Enable" : "Disable", () => change(u, u.disabled ? "enable" : "disable")),
        " ", act("New password", () => password(u)),
        " ", act("End sessions", () => change(u, "end-sessions")),
        " ", act("Remove", () => remove(u), true)));
  });
  show("svc admins",
    h("p", {}, "Everyone who may sign in to svc's API (keel svc admin add), and so make application passwords for scripts. Disabling someone ends their sessions and application passwords at once; a new password is shown to you once, to give them."),
    made, error,
    table(`${rows.length} user${rows.length === 1 ? "" : "s"}`,
      ["Username", "Capabilities", "State", ["Sessions", "num"], ["App passwords", "num"], "Added", "Actions"], rows, { id: "admin-list" }, null));

  async function change(u, what) {
    const ask = {
      disable: `Disable ${u.username}? Their sessions and application passwords end now.`,
      "end-sessions": `End every session and revoke every application password of ${u.username}?`,
    }[what];
    if (ask && !confirm(ask)) return;
    const r = await call("POST", `/admin/users/${encodeURIComponent(u.username)}/${what}`);
    if (r.status !== 200) return say(error, problem(r));
    admins();
  }
  async function password(u) {
    if (!confirm(`Set a new login password for ${u.username}? Their sessions end.`)) return;
    const r = await call("POST", `/admin/users/${encodeURIComponent(u.username)}/password`);
    if (r.status !== 200) return say(error, problem(r));
    await admins();
    const shown = document.getElementById("admin-password");
    shown.replaceChildren(
      h("h2", {}, `New password for ${r.data.username}`),
      h("p", {}, "Give it to them now: it is not shown again."),
      h("p", {}, h("code", { id: "admin-password-value" }, r.data.password)));
    shown.hidden = false;
  }
  async function remove(u) {
    if (!confirm(`Remove ${u.username} for good?`)) return;
    const r = await call("DELETE", `/admin/users/${encodeURIComponent(u.username)}`);
    if (r.status !== 200) return say(error, problem(r));
    admins();
  }
}
