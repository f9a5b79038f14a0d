// The signed-in administrator's application passwords: made (the value
// shown once, with a copy button) and revoked.

import { api, call, problem } from "./api.js";
import { currentUser } from "./session.js";
import { alertBox, failed, h, say, show, table, when } from "./ui.js";

export async function passwords() {
  const res = await call("GET", "/admin/app-passwords");
  if (res.status !== 200) return failed("Application passwords", problem(res));
  const error = alertBox("password-error");
  const made = h("section", { id: "password-made", hidden: true, "aria-live": "polite" });
  const form = h("form", { id: "new-password", onsubmit: create },
    h("label", { for: "password-name" }, "Name (what it is for, e.g. the deploy script)"),
    h("input", { id: "password-name", required: true, maxlength: 100 }),
    h("button", { type: "submit" }, "Create"));
  const rows = res.data.map((p) => h("tr", {},
    h("td", {}, p.name), h("td", {}, when(p.created_at)),
    h("td", {}, h("button", { type: "button", class: "link danger", "data-uuid": p.uuid, onclick: () => revoke(p) }, `Revoke ${p.name}`))));
  show("Application passwords",
    h("p", {}, "An application password signs scripts and other programs in to the API over HTTP Basic, as you, without your login password. Each is shown once, when it is made; revoke one you no longer use."),
    made, form, error,
    rows.length ? table(`${rows.length} application password${rows.length === 1 ? "" : "s"}`, ["Name", "Created", "Revoke"], rows, { id: "password-list" })
      : h("p", { id: "password-none" }, "You have no application passwords."));
  async function create(e) {
    e.preventDefault();
    say(error, "");
    const r = await call("POST", "/admin/app-passwords", { name: form.querySelector("#password-name").value });
    if (r.status !== 201) return say(error, problem(r));
    await passwords();
    showMade(r.data);
  }
  async function revoke(p) {
    if (!confirm(`Revoke “${p.name}”? Programs using it are refused from now on.`)) return;
    const r = await call("DELETE", `/admin/app-passwords/${encodeURIComponent(p.uuid)}`);
    if (r.status !== 200) return say(error, problem(r));
    passwords();
  }
}

function showMade(p) {
  const made = document.getElementById("password-made");
  const value = h("code", { id: "password-value" }, p.password);
  const copied = h("span", { role: "status", id: "password-copied" });
  made.replaceChildren(
    h("h2", {}, `“${p.name}” made`),
    h("p", {}, "Copy it now: it is not shown again. Use it with your username, ",
      h("code", { id: "password-username" }, (currentUser() || {}).username || ""),
      ", over HTTP Basic, e.g. ",
      h("code", {}, `curl -u ${(currentUser() || {}).username || "USERNAME"}:PASSWORD ${new URL(api, location.href).href}/stats`), "."),
    h("p", {}, value, " ", h("button", { type: "button", id: "password-copy", onclick: async () => {
      try {
        await navigator.clipboard.writeText(p.password);
        copied.textContent = "Copied.";
      } catch (_) {
        getSelection().selectAllChildren(value);
        copied.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
      }
    } }, "Copy"), " ", copied));
  made.hidden = false;
}
