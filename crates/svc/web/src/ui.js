// Drawing: elements made from data (text from the API is only ever set as
// text), the view, alerts, pagers.

const view = document.getElementById("view");
let timer = null;
let charts = [];

export function h(tag, attrs, ...children) {
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

/// Replaces the view: stops the last view's timer and charts.
export function show(title, ...content) {
  // A view whose calls finish after the session ended (they answered 401
  // or 403) does not cover the sign-in view that replaced it.
  if (title !== "Sign in" && !sessionStorage.getItem("svc-nonce")) return;
  clearInterval(timer);
  timer = null;
  for (const c of charts) c.destroy();
  charts = [];
  document.title = title + " · svc console";
  view.replaceChildren(h("h1", { text: title }), ...content.filter((c) => c !== null && c !== undefined));
  view.focus();
}

export function heading() {
  return view.querySelector("h1");
}

/// Runs `f` every `ms` until the view changes or `stopRepeating`.
export function repeat(f, ms) {
  clearInterval(timer);
  timer = setInterval(f, ms);
}

export function stopRepeating() {
  clearInterval(timer);
  timer = null;
}

export function repeating() {
  return timer !== null;
}

/// A chart that goes when the view does.
export function own(chart) {
  charts.push(chart);
  return chart;
}

export function alertBox(id) {
  return h("p", { id, role: "alert", class: "alert", hidden: true });
}

export function say(box, text) {
  box.textContent = text || "";
  box.hidden = !text;
}

export function failed(title, message) {
  show(title, h("p", { class: "alert", role: "alert" }, message));
}

/// Newer / Page n of m / Older, for a list view at `base` (a hash whose
/// other parameters are in `params`).
export function pager(base, page, pages, params = {}, labels = ["Newer", "Older"]) {
  const at = (p) => {
    const q = new URLSearchParams({ ...params, page: String(p) });
    return `${base}?${q}`;
  };
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? h("a", { href: at(page - 1) }, labels[0]) : null,
    pages > 1 ? h("span", {}, `Page ${page} of ${pages}`) : null,
    page < pages ? h("a", { href: at(page + 1) }, labels[1]) : null);
}

export function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

/// A table with a caption, column heads (`num` ones right-aligned) and rows.
export function table(caption, heads, rows, attrs = {}, captionClass = null) {
  return h("table", attrs, h("caption", { class: captionClass }, caption),
    h("thead", {}, h("tr", {}, heads.map((t) => {
      const [text, cls] = Array.isArray(t) ? t : [t, null];
      return h("th", { scope: "col", class: cls }, text);
    }))),
    h("tbody", {}, rows));
}
