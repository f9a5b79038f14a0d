// Calling svc's API (the paths are routes of /openapi.json) with the
// admin's cookie session and its nonce, kept for this tab only.

export const api = document.body.dataset.api;

let ended = () => {};

/// What to do when svc says the session is over.
export function onSessionEnded(f) {
  ended = f;
}

export function nonce() {
  return sessionStorage.getItem("svc-nonce") || "";
}

export async function call(method, path, body, idempotencyKey) {
  const headers = { Accept: "application/json" };
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  if (nonce()) headers["X-Svc-Nonce"] = nonce();
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(api + path, init);
  } catch (e) {
    return { status: 0, data: { message: "svc did not answer: " + e.message } };
  }
  let data = null;
  try {
    data = await r.json();
  } catch (_) {
    data = null;
  }
  const signingIn = path === "/admin/login";
  if (!signingIn && (r.status === 401 || (r.status === 403 && data && /nonce|cookie/.test(data.code || "")))) {
    ended("Your session has ended: sign in again.");
  } else if (r.status === 403 && data && data.code === "svc_push_forbidden" && (await sessionGone())) {
    // The push routes answer 403 whether the session ended or the admin
    // lacks the capability: a route that answers 401 tells them apart.
    ended("Your session has ended: sign in again.");
  }
  return { status: r.status, data, headers: r.headers };
}

/// Whether svc no longer knows this tab's session (its own list of
/// application passwords answers 401 then).
async function sessionGone() {
  try {
    const r = await fetch(api + "/admin/app-passwords", {
      headers: { Accept: "application/json", "X-Svc-Nonce": nonce() },
      credentials: "same-origin",
    });
    return r.status === 401;
  } catch (_) {
    return false;
  }
}

/// Downloads the file at `path` with the session's nonce in its header
/// (never in the URL: proxies and browsers' histories keep URLs), saved
/// under the name svc gives it. A failure is returned as `call`'s are.
export async function download(path) {
  let r;
  try {
    r = await fetch(api + path, { headers: { "X-Svc-Nonce": nonce() }, credentials: "same-origin" });
  } catch (e) {
    return { status: 0, data: { message: "svc did not answer: " + e.message } };
  }
  if (!r.ok) {
    let data = null;
    try { data = await r.json(); } catch (_) { data = null; }
    if (r.status === 401) ended("Your session has ended: sign in again.");
    return { status: r.status, data };
  }
  const named = /filename="([^"]+)"/.exec(r.headers.get("Content-Disposition") || "");
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = named ? named[1] : "export.csv";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  return { status: r.status, data: null };
}

/// What went wrong, as svc said it, with why each parameter was refused
/// when svc says (`data.params`: `{target: "push_tokens[0] must be ..."}`).
export function problem(res) {
  const d = res.data;
  if (!d || !d.message) return "svc answered " + res.status;
  // The console calls only routes svc has: one that is not found is a
  // push route while push is switched off.
  if (d.code === "rest_no_route") return "The push API is switched off: turn on “Push API on” under Settings to use this page.";
  const params = d.data && d.data.params;
  if (params && typeof params === "object" && !Array.isArray(params)) {
    const why = Object.entries(params).map(([k, v]) => `${k}: ${v}`).join("; ");
    if (why) return `${d.message} (${why})`;
  }
  return d.message;
}

/// `?a=1&b=2` of the entries whose value is not empty.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}
