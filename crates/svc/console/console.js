// svc console: the views, drawn from svc's own API (the paths below are
// routes of /openapi.json). Signed in with the admin login (the session
// cookie, and the nonce its answer gives, kept for this tab only); every
// call sends the nonce. Text from the API is only ever set as text.

const api = document.body.dataset.api;
const view = document.getElementById("view");
const nav = document.getElementById("nav");
const FINAL = new Set(["sent", "cancelled"]);
// A send's page stops asking this long after it was opened.
const WATCH_MS = 15 * 60 * 1000;
let timer = null;

// --- calling the API -------------------------------------------------

async function call(method, path, body, idempotencyKey) {
  const headers = { Accept: "application/json" };
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const nonce = sessionStorage.getItem("svc-nonce");
  if (nonce) headers["X-Svc-Nonce"] = nonce;
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
    signedOut("Your session has ended: sign in again.");
  }
  return { status: r.status, data };
}

function problem(res) {
  if (res.data && res.data.message) return res.data.message;
  return "svc answered " + res.status;
}

// --- drawing ---------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function show(title, ...content) {
  clearInterval(timer);
  timer = null;
  document.title = title + " · svc console";
  view.replaceChildren(h("h1", { text: title }), ...content);
  view.focus();
}

function alertBox(id) {
  return h("p", { id, role: "alert", class: "alert", hidden: true });
}

function say(box, text) {
  box.textContent = text || "";
  box.hidden = !text;
}

// Newer / Page n of m / Older, for a list view at `base` (a hash).
function pager(base, page, pages) {
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? h("a", { href: `${base}?page=${page - 1}` }, "Newer") : null,
    pages > 1 ? h("span", {}, `Page ${page} of ${pages}`) : null,
    page < pages ? h("a", { href: `${base}?page=${page + 1}` }, "Older") : null);
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}

// --- signing in and out ----------------------------------------------

// The sign-in view shows `message` (kept until it is drawn).
function signedOut(message) {
  sessionStorage.removeItem("svc-nonce");
  sessionStorage.removeItem("svc-user");
  if (message) sessionStorage.setItem("svc-why", message);
  nav.hidden = true;
  if (location.hash !== "#/sign-in") location.hash = "#/sign-in";
  else signIn();
}

function signIn() {
  const why = sessionStorage.getItem("svc-why");
  sessionStorage.removeItem("svc-why");
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
    sessionStorage.setItem("svc-nonce", res.data.nonce);
    sessionStorage.setItem("svc-user", JSON.stringify(res.data.user));
    location.hash = "#/sends";
  }
}

document.getElementById("sign-out").addEventListener("click", async () => {
  await call("POST", "/admin/logout");
  signedOut("Signed out.");
});

function user() {
  try {
    return JSON.parse(sessionStorage.getItem("svc-user"));
  } catch (_) {
    return null;
  }
}

function mayPush() {
  const u = user();
  return !!u && (u.capabilities || []).includes("svc_manage");
}

function cannotPush() {
  show(
    "Not allowed",
    h("p", { class: "alert", role: "alert" },
      "Your account may not send pushes, see sends or change settings: it lacks the svc_manage capability. Ask an administrator for an account that holds it (keel svc admin add)."),
  );
}

// --- sends -----------------------------------------------------------

async function sends(page) {
  const res = await call("GET", `/sends?page=${page}&per_page=20`);
  if (res.status !== 200) return show("Sends", h("p", { class: "alert", role: "alert" }, problem(res)));
  const rows = res.data.sends.map((s) =>
    h("tr", {},
      h("td", {}, h("a", { href: `#/sends/${s.id}` }, s.title)),
      h("td", {}, h("span", { class: `status ${s.status}` }, s.status)),
      h("td", { class: "num" }, s.recipients),
      h("td", { class: "num" }, s.progress.sent),
      h("td", { class: "num" }, s.progress.failed),
      h("td", {}, when(s.created_at)),
    ),
  );
  const table = rows.length
    ? h("table", {},
        h("caption", {}, `${res.data.total} send${res.data.total === 1 ? "" : "s"}, newest first`),
        h("thead", {}, h("tr", {}, ["Title", "Status", "Recipients", "Sent", "Failed", "Created"].map((t) =>
          h("th", { scope: "col", class: ["Recipients", "Sent", "Failed"].includes(t) ? "num" : null }, t)))),
        h("tbody", {}, rows))
    : h("p", {}, "No sends yet. ", h("a", { href: "#/compose" }, "Compose the first one."));
  show("Sends", h("p", {}, h("a", { href: "#/compose", class: "button" }, "New send")), table,
    pager("#/sends", page, res.data.total_pages));
}

const STATES = ["pending", "queued", "sent", "failed", "skipped", "cancelled"];

async function send(id) {
  const error = alertBox("send-error");
  const figures = h("dl", { class: "figures", id: "figures" });
  const bar = h("div", { class: "bar-chart", id: "progress", role: "img" });
  const status = h("p", { id: "status", "aria-live": "polite" });
  const cancel = h("button", { type: "button", id: "cancel", hidden: true, onclick: doCancel }, "Cancel what has not gone out");
  show("Send", status, bar, figures, cancel, error, h("p", {}, h("a", { href: "#/sends" }, "All sends")));
  async function draw() {
    const res = await call("GET", `/send/${encodeURIComponent(id)}`);
    if (res.status !== 200) return say(error, problem(res));
    const s = res.data;
    document.title = `${s.title} · svc console`;
    view.querySelector("h1").textContent = s.title;
    status.textContent = `${s.status}: ${s.recipients} recipients; ${s.local_time ? "at " + s.local_time + " in each device's zone" : "from " + when(s.send_at)}`;
    status.dataset.status = s.status;
    const total = Math.max(1, s.recipients);
    bar.replaceChildren(...STATES.filter((k) => s.progress[k] > 0).map((k) => {
      const seg = h("span", { class: `seg ${k}` });
      seg.style.width = `${(100 * s.progress[k]) / total}%`; // CSSOM: allowed by the policy
      return seg;
    }));
    bar.setAttribute("aria-label", STATES.map((k) => `${k} ${s.progress[k]}`).join(", "));
    figures.replaceChildren(
      ...STATES.concat(["receipts_ok", "receipts_error"]).flatMap((k) => [
        h("dt", {}, k.replace("_", " ")),
        h("dd", { id: `n-${k}` }, s.progress[k]),
      ]),
    );
    cancel.hidden = FINAL.has(s.status);
    // Under way, or sent with receipts still to come from Expo.
    const p = s.progress;
    const done = s.status === "cancelled" || (s.status === "sent" && p.receipts_ok + p.receipts_error >= p.sent);
    status.dataset.watching = String(!done);
    if (done || Date.now() - opened > WATCH_MS) {
      clearInterval(timer);
      timer = null;
    }
  }
  const opened = Date.now();
  async function doCancel() {
    if (!confirm("Cancel every message of this send that has not gone to Expo?")) return;
    const res = await call("DELETE", `/send/${encodeURIComponent(id)}`);
    if (res.status !== 200) say(error, problem(res));
    draw();
  }
  await draw();
  if (!timer && status.dataset.watching === "true") timer = setInterval(draw, 1500);
}

// --- compose ---------------------------------------------------------

function compose() {
  const error = alertBox("compose-error");
  const count = h("p", { id: "recipients", "aria-live": "polite" }, "Counting recipients…");
  const dataRows = h("div", { id: "data-rows" });
  const addRow = () => {
    const n = dataRows.children.length + 1;
    dataRows.append(h("div", { class: "row" },
      h("label", { for: `data-key-${n}` }, `Data key ${n}`),
      h("input", { id: `data-key-${n}`, class: "data-key" }),
      h("label", { for: `data-value-${n}` }, `Value ${n}`),
      h("input", { id: `data-value-${n}`, class: "data-value" })));
  };
  // Counted again only when the audience changes, not at each letter of
  // the title.
  const form = h("form", { id: "compose", oninput: (e) => e.target.closest("#audience") && recount(), onsubmit: review },
    h("label", { for: "title" }, "Title"),
    h("input", { id: "title", required: true, maxlength: 200 }),
    h("label", { for: "body" }, "Message"),
    h("textarea", { id: "body", required: true, maxlength: 2000, rows: 3 }),
    h("fieldset", {}, h("legend", {}, "Data (optional)"), dataRows,
      h("button", { type: "button", class: "link", onclick: addRow }, "Add a data field")),
    h("fieldset", { id: "audience" }, h("legend", {}, "Audience: every active device matching all the filters given"),
      h("label", { for: "device-type" }, "Device type"),
      h("select", { id: "device-type" }, h("option", { value: "" }, "any"), h("option", { value: "ios" }, "iOS"), h("option", { value: "android" }, "Android")),
      h("label", { for: "locale" }, "Locale (e.g. en-US)"),
      h("input", { id: "locale", maxlength: 35 }),
      h("label", { for: "app-version" }, "App version"),
      h("input", { id: "app-version", maxlength: 50 }),
      h("label", { for: "push-tokens" }, "Push tokens, one a line (at most 10,000)"),
      h("textarea", { id: "push-tokens", rows: 3 })),
    count,
    h("fieldset", {}, h("legend", {}, "When"),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "when", value: "now", checked: true }), "Now"),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "when", value: "at" }), "At a time"),
      h("label", { for: "send-at" }, "Date and time (yours)"),
      h("input", { id: "send-at", type: "datetime-local" }),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "when", value: "local" }), "At a time in each device's zone"),
      h("label", { for: "local-time" }, "Local time"),
      h("input", { id: "local-time", type: "time" })),
    h("button", { type: "submit" }, "Review"),
    error);
  const confirmBox = h("section", { id: "confirm", hidden: true, "aria-labelledby": "confirm-title" });
  show("New send", form, confirmBox);
  let counting = null;
  let last = null;

  function target() {
    const t = {};
    const type = form.querySelector("#device-type").value;
    if (type) t.device_type = type;
    const locale = form.querySelector("#locale").value.trim();
    if (locale) t.locale = locale;
    const version = form.querySelector("#app-version").value.trim();
    if (version) t.app_version = version;
    const tokens = form.querySelector("#push-tokens").value.split(/\s+/).filter(Boolean);
    if (tokens.length) t.push_tokens = tokens;
    return Object.keys(t).length ? t : "all";
  }
  function recount() {
    clearTimeout(counting);
    counting = setTimeout(async () => {
      const res = await call("POST", "/recipients/count", { target: target() });
      if (res.status !== 200) {
        last = null;
        count.textContent = "Cannot count: " + problem(res);
        return;
      }
      last = res.data.recipients;
      count.textContent = `This send would reach ${last} device${last === 1 ? "" : "s"}.`;
      count.dataset.recipients = last;
    }, 250);
  }
  function body() {
    const b = { title: form.querySelector("#title").value, body: form.querySelector("#body").value, target: target() };
    const data = {};
    for (const row of dataRows.children) {
      const k = row.querySelector(".data-key").value.trim();
      if (k) data[k] = row.querySelector(".data-value").value;
    }
    if (Object.keys(data).length) b.data = data;
    const when = form.querySelector("input[name=when]:checked").value;
    if (when === "at") {
      const at = form.querySelector("#send-at").value;
      if (at) b.send_at = new Date(at).toISOString();
    } else if (when === "local") {
      b.local_time = form.querySelector("#local-time").value;
    }
    return b;
  }
  async function review(e) {
    e.preventDefault();
    say(error, "");
    const b = body();
    const res = await call("POST", "/recipients/count", { target: b.target });
    if (res.status !== 200) return say(error, problem(res));
    const n = res.data.recipients;
    const key = crypto.randomUUID();
    const whenText = b.local_time ? `at ${b.local_time} in each device's zone` : b.send_at ? `at ${new Date(b.send_at).toLocaleString()}` : "now";
    confirmBox.replaceChildren(
      h("h2", { id: "confirm-title" }, "Send it?"),
      h("p", { id: "confirm-text" }, `“${b.title}” to ${n} device${n === 1 ? "" : "s"}, ${whenText}.`),
      h("div", { class: "preview", "aria-label": "Preview" }, h("strong", {}, b.title), h("span", {}, b.body)),
      h("button", { type: "button", id: "send-now", onclick: go }, `Send to ${n} device${n === 1 ? "" : "s"}`),
      h("button", { type: "button", class: "link", onclick: () => { confirmBox.hidden = true; form.hidden = false; } }, "Back"));
    form.hidden = true;
    confirmBox.hidden = false;
    confirmBox.querySelector("#send-now").focus();
    async function go() {
      const made = await call("POST", "/send", b, key);
      if (made.status !== 202) {
        confirmBox.hidden = true;
        form.hidden = false;
        return say(error, problem(made));
      }
      location.hash = `#/sends/${made.data.id}`;
    }
  }
  recount();
}

// --- devices ---------------------------------------------------------

// The first rows of a CSV file as the import will read them (quoted
// fields, commas and doubled quotes inside them).
function csvRows(text, limit) {
  const rows = [];
  let row = [], cell = "", quoted = false;
  for (let i = 0; i < text.length && rows.length < limit; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(cell); cell = ""; }
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(cell); rows.push(row); row = []; cell = "";
    } else cell += c;
  }
  if ((cell || row.length) && rows.length < limit) { row.push(cell); rows.push(row); }
  return rows;
}

function devices() {
  const nonce = encodeURIComponent(sessionStorage.getItem("svc-nonce") || "");
  const error = alertBox("import-error");
  const preview = h("section", { id: "import-preview", hidden: true, "aria-labelledby": "preview-title" });
  const report = h("section", { id: "import-report", hidden: true, "aria-live": "polite" });
  const progress = h("progress", { id: "import-progress", max: 100, value: 0, hidden: true, "aria-label": "Upload" });
  const file = h("input", { id: "import-file", type: "file", accept: ".csv,text/csv", onchange: look });
  show("Devices",
    h("p", {}, h("a", { href: `${api}/devices/export?_wpnonce=${nonce}`, download: "devices.csv", id: "export" }, "Export every device as CSV"),
      " (streamed: any number of devices)."),
    h("h2", {}, "Import"),
    h("p", {}, "A CSV file whose header names at least push_token and device_type; the other columns (device_model, os_version, app_version, locale, timezone, user_label, active) are kept where the file has none. Known devices are updated."),
    h("label", { for: "import-file" }, "CSV file"), file, preview, progress, report, error);
  let chosen = null;
  async function look() {
    say(error, "");
    report.hidden = true;
    chosen = file.files[0] || null;
    if (!chosen) return (preview.hidden = true);
    const rows = csvRows(await chosen.slice(0, 64 * 1024).text(), 6);
    const [head, ...body] = rows;
    preview.replaceChildren(
      h("h3", { id: "preview-title" }, `${chosen.name}: the first rows as they will be read`),
      h("table", {}, h("thead", {}, h("tr", {}, (head || []).map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, body.map((r) => h("tr", {}, r.map((c) => h("td", {}, c)))))),
      h("button", { type: "button", id: "import-go", onclick: upload }, `Import ${chosen.name}`));
    preview.hidden = false;
  }
  function upload() {
    const form = new FormData();
    form.append("file", chosen, chosen.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${api}/devices/import`);
    xhr.setRequestHeader("X-Svc-Nonce", sessionStorage.getItem("svc-nonce") || "");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) progress.value = (100 * e.loaded) / e.total; };
    xhr.onload = () => {
      progress.hidden = true;
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch (_) { data = null; }
      if (xhr.status !== 200) return say(error, problem({ status: xhr.status, data }));
      preview.hidden = true;
      report.replaceChildren(
        h("h3", {}, "Imported"),
        h("p", { id: "import-counts" }, `${data.imported} new, ${data.updated} updated, ${data.skipped} unchanged, ${data.errors.length} refused.`),
        data.errors.length
          ? h("table", { id: "import-errors" }, h("caption", {}, "Refused lines"),
              h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Line"), h("th", { scope: "col" }, "Why"))),
              h("tbody", {}, data.errors.map((e) => h("tr", {}, h("td", {}, e.line), h("td", {}, e.reason)))))
          : null);
      report.hidden = false;
    };
    xhr.onerror = () => { progress.hidden = true; say(error, "svc did not answer the upload"); };
    progress.hidden = false;
    progress.value = 0;
    xhr.send(form);
  }
}

// --- settings --------------------------------------------------------

const SETTINGS = [
  ["push_enabled", "Push API on", "check", "Off: every push route answers 404, within a second on every node."],
  ["allowed_origins", "Origins whose browsers may call the form API", "lines", "One a line, scheme://host[:port], no path."],
  ["forms_allowlist", "Forms the form API serves", "lines", "Form ids, one a line."],
  ["appcheck_project_number", "Firebase project number", "text", "Digits; empty clears it. App Check tokens must name this project."],
  ["appcheck_app_ids", "App ids whose App Check tokens are accepted", "lines", "One a line, e.g. 1:123456:ios:abc."],
  ["submission_rate_limit", "Submissions a minute from one app", "number", "1 to 100,000,000."],
  ["payload_limit_bytes", "Largest submission, in bytes", "number", "256 to 8,388,608."],
];

async function settings() {
  const res = await call("GET", "/admin/settings");
  if (res.status !== 200) return show("Settings", h("p", { class: "alert", role: "alert" }, problem(res)));
  const current = res.data;
  const error = alertBox("settings-error");
  const saved = h("p", { id: "settings-saved", role: "status" });
  const fields = SETTINGS.map(([key, label, kind, help]) => {
    const id = `setting-${key}`;
    const hint = h("small", { id: `${id}-help` }, help);
    let input;
    if (kind === "check") {
      input = h("input", { id, type: "checkbox", "aria-describedby": `${id}-help` });
      input.checked = !!current[key];
      return h("div", { class: "setting" }, h("label", { class: "choice" }, input, label), hint);
    }
    if (kind === "lines") {
      input = h("textarea", { id, rows: 3, "aria-describedby": `${id}-help` });
      input.value = (current[key] || []).join("\n");
    } else {
      input = h("input", { id, type: kind === "number" ? "number" : "text", "aria-describedby": `${id}-help` });
      input.value = current[key] ?? "";
    }
    return h("div", { class: "setting" }, h("label", { for: id }, label), input, hint);
  });
  const form = h("form", { id: "settings", onsubmit: save }, fields, h("button", { type: "submit" }, "Save"), error, saved);
  show("Settings", h("p", {}, `${current.appcheck_debug_tokens} App Check debug tokens are accepted (change them with the API or keel svc settings).`), form);
  async function save(e) {
    e.preventDefault();
    say(error, "");
    saved.textContent = "";
    const patch = {};
    for (const [key, , kind] of SETTINGS) {
      const el = form.querySelector(`#setting-${key}`);
      let value;
      if (kind === "check") value = el.checked;
      else if (kind === "lines") value = el.value.split(/\s+/).filter(Boolean);
      else if (kind === "number") value = el.value === "" ? null : Number(el.value);
      else value = el.value.trim();
      if (JSON.stringify(value) !== JSON.stringify(current[key] ?? (kind === "text" ? "" : current[key]))) patch[key] = value;
    }
    const res = await call("PATCH", "/admin/settings", patch);
    if (res.status !== 200) return say(error, problem(res));
    Object.assign(current, res.data);
    saved.textContent = Object.keys(patch).length ? `Saved: ${Object.keys(patch).join(", ")}.` : "Nothing changed.";
  }
}

// --- audit log -------------------------------------------------------

async function audit(page) {
  const res = await call("GET", `/admin/audit?page=${page}&per_page=50`);
  if (res.status !== 200) return show("Audit log", h("p", { class: "alert", role: "alert" }, problem(res)));
  const rows = res.data.entries.map((a) =>
    h("tr", {}, h("td", {}, when(a.created_at)), h("td", {}, a.event), h("td", {}, a.app_id), h("td", {}, a.form_id || ""),
      h("td", { class: "hash" }, a.token_hash.slice(0, 12) + "…")));
  const pages = Math.max(1, Math.ceil(res.data.total / res.data.per_page));
  show("Audit log",
    rows.length
      ? h("table", {}, h("caption", {}, `${res.data.total} entr${res.data.total === 1 ? "y" : "ies"}, newest first`),
          h("thead", {}, h("tr", {}, ["When", "Event", "App", "Form", "Token (SHA-256)"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, rows))
      : h("p", {}, "Nothing recorded yet: App Check verifications of form submissions and device registrations are written here."),
    pager("#/audit", page, pages));
}

// --- routing ---------------------------------------------------------

async function route() {
  const hash = location.hash || "#/sends";
  if (hash === "#/sign-in" || !sessionStorage.getItem("svc-nonce")) {
    nav.hidden = true;
    if (hash !== "#/sign-in") location.hash = "#/sign-in";
    return signIn();
  }
  nav.hidden = false;
  if (!mayPush()) return cannotPush();
  const page = Number((hash.match(/page=(\d+)/) || [])[1] || 1);
  if (hash === "#/settings") return settings();
  if (hash === "#/devices") return devices();
  if (hash.startsWith("#/audit")) return audit(page);
  const one = hash.match(/^#\/sends\/([^?]+)$/);
  if (one) return send(decodeURIComponent(one[1]));
  if (hash === "#/compose") return compose();
  return sends(page);
}

window.addEventListener("hashchange", route);
route();
