// The operator console: sign-in, then the views of the areas the
// operator's roles open (users, jobs) and those every operator has
// (health, audit), chosen by the address's hash.

import { call, keepCsrf, onSessionEnded, problem } from "./api.js";
import { h, show, alertBox, say, field } from "./ui.js";
import { users, user } from "./users.js";
import { jobs } from "./jobs.js";
import { health } from "./health.js";
import { audit } from "./audit.js";
import { operators } from "./operators.js";

const nav = document.getElementById("nav");
let me = null;

function signIn(message) {
  me = null;
  keepCsrf(null);
  nav.hidden = true;
  const box = alertBox();
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
  show("Sign in", message ? h("p", { class: "note", role: "status", text: message }) : null, box, form);
}

function drawNav() {
  const links = [];
  for (const a of me.areas) if (me.roles.includes(a.role)) links.push([a.name, a.title]);
  if (me.roles.includes("jobs")) links.push(["jobs", "Jobs"]);
  if (me.roles.includes("operators")) links.push(["operators", "Operators"]);
  links.push(["health", "Health"], ["audit", "Audit log"]);
  nav.replaceChildren(
    ...links.map(([k, t]) => h("a", { href: "#/" + k, text: t })),
    h("span", { class: "who", text: me.name }),
    h("button", { type: "button", class: "link", onclick: signOut, text: "Sign out" }),
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
  switch (parts[0]) {
    case "users":
      return parts[1] ? user(parts[1]) : users(params);
    case "jobs":
      return jobs(params);
    case "audit":
      return audit(params);
    case "operators":
      return operators(me);
    default:
      return health();
  }
}

async function start() {
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
