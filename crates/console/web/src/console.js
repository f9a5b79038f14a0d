// The operator console: sign-in, then the views of the areas the
// operator's roles open (users, jobs, svc's push and forms, operators)
// and those every operator has (health, audit), chosen by the address's
// hash.

import { call, csrf, keepCsrf, onSessionEnded, problem } from "./api.js";
import { h, show, alertBox, say, field, failed } from "./ui.js";
import { users, user } from "./users.js";
import { jobs } from "./jobs.js";
import { health } from "./health.js";
import { audit } from "./audit.js";
import { operators } from "./operators.js";
import { admins } from "./svc/admins.js";
import { compose } from "./svc/compose.js";
import { devices } from "./svc/devices.js";
import { form, forms, submissions } from "./svc/forms.js";
import { send, sends } from "./svc/sends.js";
import { settings } from "./svc/settings.js";
import { stats } from "./svc/stats.js";

// An area's entries in the navigation, where it has more than one page.
const PAGES = {
  push: [["sends", "Sends"], ["compose", "New send"], ["stats", "Statistics"], ["devices", "Devices"]],
  forms: [["forms", "Forms"], ["settings", "Settings"]],
};

/// The pages of area `a`: [page, title] each.
function pagesOf(a) {
  return PAGES[a.name] || [[a.name, a.title]];
}

// The console's own pages, after the areas': [page, title, role] (health
// and the audit log are every operator's).
const OWN = [["jobs", "Jobs", "jobs"], ["operators", "Operators", "operators"], ["health", "Health"], ["audit", "Audit log"]];

/// The role `page` needs: its area's (as the console says it), or the
/// console's own page's.
function roleOf(page) {
  const area = me.areas.find((a) => pagesOf(a).some(([p]) => p === page));
  if (area) return area.role;
  const own = OWN.find(([p]) => p === page);
  return own ? own[2] : undefined;
}

const nav = document.getElementById("nav");
let me = null;

function signIn(message) {
  me = null;
  keepCsrf(null);
  nav.hidden = true;
  const box = alertBox("sign-in-error");
  const name = h("input", { id: "name", name: "name", autocomplete: "username", required: true });
  const password = h("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const code = h("input", { id: "code", name: "code", inputmode: "numeric", autocomplete: "one-time-code", pattern: "[0-9]{6}", maxlength: "6", required: true });
  const form = h(
    "form",
    {
      id: "sign-in",
      onsubmit: async (e) => {
        e.preventDefault();
        const r = await call("POST", "/session", { name: name.value, password: password.value, code: code.value.trim() });
        if (r.status !== 200) return say(box, problem(r));
        keepCsrf(r.data.csrf);
        me = r.data.operator;
        start();
      },
    },
    field("Name", name),
    field("Password", password),
    field("Code from your authenticator app", code),
    h("button", { type: "submit", text: "Sign in" }),
  );
  show("Sign in", h("p", { id: "sign-in-note", class: "note", role: "status", text: message || "" }), box, form);
}

function drawNav() {
  const links = [];
  for (const a of me.areas) if (me.roles.includes(a.role)) links.push(...pagesOf(a));
  for (const [page, title, role] of OWN) if (!role || me.roles.includes(role)) links.push([page, title]);
  nav.replaceChildren(
    ...links.map(([k, t]) => h("a", { href: "#/" + k, text: t })),
    h("span", { class: "who", text: me.name }),
    h("button", { type: "button", id: "sign-out", class: "link", onclick: signOut, text: "Sign out" }),
  );
  nav.hidden = false;
}

async function signOut() {
  await call("DELETE", "/session");
  signIn("Signed out.");
}

function route() {
  if (!me) return;
  const [path, query] = location.hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean);
  for (const a of nav.querySelectorAll("a")) {
    if (a.getAttribute("href") === "#/" + (parts[0] || "")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const role = roleOf(parts[0]);
  if (role && !me.roles.includes(role)) {
    return failed("Not allowed", `This page needs the ${role} role, which ${me.name} does not have. An operator with the operators role can give it.`);
  }
  switch (parts[0]) {
    case "users":
      return parts[1] ? user(parts[1]) : users(params);
    case "jobs":
      return jobs(params);
    case "audit":
      return audit(params);
    case "operators":
      return operators(me);
    case "sends":
      return parts[1] ? send(decodeURIComponent(parts[1])) : sends(Number(params.get("page") || 1));
    case "compose":
      return compose();
    case "stats":
      return stats();
    case "devices":
      return devices(params);
    case "forms":
      if (!parts[1]) return forms();
      if (parts[1] === "new") return form(null);
      if (parts[2] === "submissions") return submissions(decodeURIComponent(parts[1]), params);
      return form(decodeURIComponent(parts[1]));
    case "settings":
      return settings();
    case "svc-admins":
      return admins();
    default:
      return health();
  }
}

async function start() {
  // The CSRF token is shown once, at sign-in: a tab without it signs in.
  if (!csrf()) return signIn();
  if (!me) {
    const r = await call("GET", "/session");
    if (r.status !== 200) return signIn();
    me = r.data;
  }
  drawNav();
  route();
}

onSessionEnded((message) => signIn(message));
window.addEventListener("hashchange", route);
start();
