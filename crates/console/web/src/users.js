// Users (the users role): search by a prefix of a username, email or id;
// a user's page; ban (optionally until a time), unban, end sessions,
// remove the second factor, each with a reason for the audit log.

import { call, problem } from "./api.js";
import { h, show, alertBox, say, table, when, field } from "./ui.js";

export async function users(params) {
  const q = params.get("q") || "";
  const input = h("input", { id: "q", type: "search", name: "q", value: q, autocomplete: "off", required: true });
  const form = h(
    "form",
    {
      role: "search",
      onsubmit: (e) => {
        e.preventDefault();
        location.hash = "#/users?" + new URLSearchParams({ q: input.value.trim() });
      },
    },
    field("Username, email or id starts with", input),
    h("button", { type: "submit", text: "Search" }),
  );
  if (!q) return show("Users", form);
  const r = await call("GET", "/users?" + new URLSearchParams({ q }));
  if (r.status !== 200) return show("Users", form, h("p", { class: "alert", role: "alert", text: problem(r) }));
  const rows = r.data.users.map((u) =>
    h(
      "tr",
      {},
      h("td", {}, h("a", { href: "#/users/" + u.id, text: u.username })),
      h("td", { text: u.email }),
      h("td", { text: state(u) }),
      h("td", { text: when(u.created_at) }),
    ),
  );
  const found = rows.length
    ? table("Users found", ["Username", "Email", "State", "Joined"], rows)
    : h("p", { text: "No user's username, email or id starts with that." });
  show("Users", form, h("p", { role: "status", text: `${rows.length} found` }), found);
}

function state(u) {
  const s = [];
  if (u.banned) s.push(u.banned_until ? "banned until " + when(u.banned_until) : "banned");
  s.push(u.email_verified ? "verified" : "not verified");
  if (u.two_factor) s.push("2FA");
  return s.join(", ");
}

/// A form for one action: a reason (and more fields), a button.
function action(id, label, extra, send) {
  const reason = h("input", { id: id + "-reason", name: "reason", required: true, maxlength: "500" });
  return h(
    "form",
    {
      id,
      class: "action",
      onsubmit: async (e) => {
        e.preventDefault();
        await send(reason.value.trim());
      },
    },
    ...extra,
    field("Reason (kept in the audit log)", reason),
    h("button", { type: "submit", text: label }),
  );
}

export async function user(id) {
  const r = await call("GET", "/users/" + encodeURIComponent(id));
  if (r.status !== 200) return show("User", h("p", { class: "alert", role: "alert", text: problem(r) }));
  const u = r.data;
  const box = alertBox();
  const act = async (path, body, done) => {
    const res = await call("POST", `/users/${u.id}/${path}`, body);
    if (res.status >= 300) return say(box, problem(res));
    await user(u.id);
    const note = document.querySelector("#view .note");
    if (note) note.textContent = done;
  };
  const until = h("input", { id: "ban-until", name: "until", type: "datetime-local" });
  const actions = [
    u.banned
      ? action("unban", "Lift the ban", [], (reason) => act("unban", { reason }, "Ban lifted."))
      : action("ban", "Ban", [field("Until (empty: until lifted)", until)], (reason) =>
          act("ban", { reason, until: until.value ? new Date(until.value).toISOString() : undefined }, "Banned."),
        ),
    u.email_verified ? null : action("resend", "Resend the verification mail", [], (reason) => act("verification-mail", { reason }, "Verification mail sent.")),
    action("end-sessions", "End every session", [], (reason) => act("sessions/end", { reason }, "Sessions ended.")),
    u.two_factor ? action("remove-2fa", "Remove the second factor", [], (reason) => act("two-factor/remove", { reason }, "Second factor removed.")) : null,
    ...u.passkeys.map((p, i) => action(`remove-passkey-${i}`, `Remove the passkey “${p.name}”`, [], (reason) => act(`passkeys/${p.id}/remove`, { reason }, "Passkey removed."))),
    action("delete", "Delete the account", [h("p", { class: "alert", text: "Deleting erases the account and everything in it, as the user's own deletion does. It cannot be undone." })], async (reason) => {
      if (!window.confirm(`Delete ${u.username}'s account for good?`)) return;
      const res = await call("POST", `/users/${u.id}/delete`, { reason });
      if (res.status !== 204) return say(box, problem(res));
      show("Account deleted", h("p", { class: "note", role: "status", text: `${u.username}'s account was deleted.` }), h("a", { href: "#/users", text: "Back to users" }));
    }),
  ];
  const facts = [
    ["Id", u.id],
    ["Email", `${u.email} (${u.email_verified ? "verified" : "not verified"})`],
    ["State", state(u)],
    ["Joined", when(u.created_at)],
    ["Goals", `${u.weekly_goals} weekly, ${u.yearly_goals} yearly`],
  ];
  show(
    u.username,
    h("p", { class: "note", role: "status" }),
    box,
    h("dl", {}, facts.map(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })])),
    h("h2", { text: "Sessions" }),
    u.sessions.length
      ? table(
          "Live sessions",
          ["Device", "Place", "Since"],
          u.sessions.map((s) => h("tr", {}, h("td", { text: `${s.browser} on ${s.os}` }), h("td", { text: s.location || "—" }), h("td", { text: when(s.created_at) }))),
        )
      : h("p", { text: "No live session." }),
    h("h2", { text: "Sign-ins refused lately" }),
    u.refused_sign_ins.length
      ? table(
          "Sign-ins refused lately",
          ["When", "What failed", "From"],
          u.refused_sign_ins.map((r) => h("tr", {}, h("td", { text: when(r.at) }), h("td", { text: r.failed }), h("td", { text: r.address || "—" }))),
        )
      : h("p", { text: "None." }),
    h("h2", { text: "Passkeys" }),
    u.passkeys.length
      ? h("ul", {}, u.passkeys.map((p) => h("li", { text: `${p.name} (last used ${when(p.last_used_at)})` })))
      : h("p", { text: "None." }),
    h("p", {}, h("a", { href: `/console/v1/users/${encodeURIComponent(u.id)}/export`, download: `account-${u.username}.json`, text: "Export this user's data (JSON)" })),
    h("h2", { text: "Actions" }),
    ...actions.filter(Boolean),
  );
}
