// Signing in and out with the admin login; who is signed in.

import { call, onSessionEnded, problem } from "./api.js";
import { alertBox, h, say, show } from "./ui.js";

const nav = document.getElementById("nav");

/// Back to the sign-in view, showing `message` there (an alert; with
/// `note`, a plain status line).
export function signedOut(message, note) {
  sessionStorage.removeItem("svc-nonce");
  sessionStorage.removeItem("svc-user");
  if (message) sessionStorage.setItem(note ? "svc-note" : "svc-why", message);
  nav.hidden = true;
  if (location.hash !== "#/sign-in") location.hash = "#/sign-in";
  else signIn();
}

onSessionEnded(signedOut);

export function signIn() {
  // Kept until the next sign-in: a view may be drawn again meanwhile.
  const why = sessionStorage.getItem("svc-why");
  const note = sessionStorage.getItem("svc-note");
  const error = alertBox("sign-in-error");
  const form = h(
    "form",
    { id: "sign-in", onsubmit: submit },
    h("label", { for: "username" }, "Username"),
    h("input", { id: "username", name: "username", autocomplete: "username", required: true }),
    h("label", { for: "password" }, "Password"),
    h("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", required: true }),
    h("button", { type: "submit" }, "Sign in"),
    error,
    h("p", { id: "sign-in-note", class: "note", role: "status", hidden: !note }, note || ""),
  );
  show("Sign in", form);
  say(error, why);
  async function submit(e) {
    e.preventDefault();
    const res = await call("POST", "/admin/login", {
      username: form.username.value,
      password: form.password.value,
    });
    if (res.status !== 200) return say(error, problem(res));
    sessionStorage.removeItem("svc-why");
    sessionStorage.removeItem("svc-note");
    sessionStorage.setItem("svc-nonce", res.data.nonce);
    sessionStorage.setItem("svc-user", JSON.stringify(res.data.user));
    location.hash = "#/sends";
  }
}

document.getElementById("sign-out").addEventListener("click", async () => {
  await call("POST", "/admin/logout");
  sessionStorage.removeItem("svc-why");
  signedOut("Signed out.", true);
});

export function currentUser() {
  return user();
}

function user() {
  try {
    return JSON.parse(sessionStorage.getItem("svc-user"));
  } catch (_) {
    return null;
  }
}

export function signedIn() {
  return !!sessionStorage.getItem("svc-nonce");
}

export function mayManage() {
  const u = user();
  return !!u && (u.capabilities || []).includes("svc_manage");
}

export function mayManageAdmins() {
  const u = user();
  return !!u && (u.capabilities || []).includes("svc_manage_admins");
}

export function cannotManage() {
  show(
    "Not allowed",
    h("p", { class: "alert", role: "alert" },
      "Your account may not send pushes, see sends, read forms or change settings: it lacks the svc_manage capability. Ask an administrator for an account that holds it (keel svc admin add)."),
  );
}
