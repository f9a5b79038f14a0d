// Calling the console's API (/console/v1, every path a route of
// /openapi.json) with the session cookie and, on every change, the
// session's CSRF token, kept for this tab only.

let ended = () => {};

/// What to do when the console says the session is over.
export function onSessionEnded(f) {
  ended = f;
}

export function csrf() {
  return sessionStorage.getItem("console-csrf") || "";
}

export function keepCsrf(token) {
  if (token) sessionStorage.setItem("console-csrf", token);
  else sessionStorage.removeItem("console-csrf");
}

export async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-Console-Csrf"] = csrf();
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch("/console/v1" + path, init);
  } catch (e) {
    return { status: 0, data: { message: "keel did not answer: " + e.message } };
  }
  let data = null;
  try {
    data = await r.json();
  } catch (_) {
    data = null;
  }
  const code = data && data.code;
  if (path !== "/session" || method !== "POST") {
    if (r.status === 401 || code === "csrf_token_invalid") ended("Your session has ended: sign in again.");
  }
  return { status: r.status, data };
}

/// The message of a failed call, for an alert.
export function problem(r) {
  return (r.data && r.data.message) || `keel answered ${r.status}.`;
}
