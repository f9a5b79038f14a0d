// Calling the console's API (/console/v1, every path a route of
// /openapi.json) with the session cookie and, on every change, the
// session's CSRF token, kept for this tab only.

const BASE = "/console/v1";

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

function headers(method) {
  const all = { Accept: "application/json" };
  if (method !== "GET") all["X-Console-Csrf"] = csrf();
  return all;
}

/// The answer's JSON body, or null.
async function json(r) {
  try {
    return await r.json();
  } catch (_) {
    return null;
  }
}

/// Whether an answer says the session is over (and says so once).
function over(method, path, status, data) {
  const signingIn = path === "/session" && method === "POST";
  if (!signingIn && (status === 401 || (data && data.code === "csrf_token_invalid"))) {
    ended("Your session has ended: sign in again.");
  }
}

export async function call(method, path, body, idempotencyKey) {
  const all = headers(method);
  if (idempotencyKey) all["Idempotency-Key"] = idempotencyKey;
  const init = { method, headers: all, credentials: "same-origin" };
  if (body !== undefined) {
    all["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(BASE + path, init);
  } catch (e) {
    return { status: 0, data: { message: "keel did not answer: " + e.message } };
  }
  const data = await json(r);
  over(method, path, r.status, data);
  return { status: r.status, data, headers: r.headers };
}

/// Uploads `form` (a FormData) with POST, reporting the share sent to
/// `progress` (0 to 100); answers as `call` does.
export function upload(path, form, progress) {
  return new Promise((done) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", BASE + path);
    for (const [k, v] of Object.entries(headers("POST"))) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) progress((100 * e.loaded) / e.total);
    };
    xhr.onload = () => {
      let data = null;
      try {
        data = JSON.parse(xhr.responseText);
      } catch (_) {
        data = null;
      }
      over("POST", path, xhr.status, data);
      done({ status: xhr.status, data });
    };
    xhr.onerror = () => done({ status: 0, data: { message: "keel did not answer the upload" } });
    xhr.send(form);
  });
}

/// Downloads the file at `path`, saved under the name keel gives it. A
/// failure is returned as `call`'s are.
export async function download(path) {
  let r;
  try {
    r = await fetch(BASE + path, { headers: headers("GET"), credentials: "same-origin" });
  } catch (e) {
    return { status: 0, data: { message: "keel did not answer: " + e.message } };
  }
  if (!r.ok) {
    const data = await json(r);
    over("GET", path, r.status, data);
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

/// The message of a failed call, for an alert.
export function problem(r) {
  return (r.data && r.data.message) || `keel answered ${r.status}.`;
}

/// `?a=1&b=2` of the entries whose value is not empty.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}
