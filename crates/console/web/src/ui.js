// Drawing: elements made from data (text from the API is only ever set
// as text, never as HTML), the view and its refresh timer, alerts,
// tables, pagers and charts.

import { csrf } from "./api.js";

const view = document.getElementById("view");
let timer = null;

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/// Replaces the view (its refresh timer stops).
export function show(title, ...content) {
  // A view whose calls finish after the session ended (they answered
  // 401) does not cover the sign-in view that replaced it.
  if (title !== "Sign in" && !csrf()) return;
  clearInterval(timer);
  timer = null;
  document.title = title + " · keel console";
  view.replaceChildren(h("h1", { text: title }), ...content.filter((c) => c !== null && c !== undefined));
  view.focus();
}

/// The view's heading.
export function heading() {
  return view.querySelector("h1");
}

/// A view that could not be drawn: its title and why.
export function failed(title, message) {
  show(title, h("p", { class: "alert", role: "alert", text: message }));
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

export function alertBox(id) {
  return h("p", { id, role: "alert", class: "alert", hidden: true });
}

export function say(box, text, kind = "alert") {
  box.textContent = text || "";
  box.className = kind;
  box.hidden = !text;
}

/// A table that scrolls sideways on a narrow screen. A column head is its
/// text, or [text, class] (`num`: right-aligned); `attrs` go on the
/// table; the caption is for screen readers unless `captionClass` says
/// otherwise (null: shown).
export function table(caption, head, rows, attrs = {}, captionClass = "sr-only") {
  const heads = head.map((c) => (Array.isArray(c) ? c : [c, null]));
  // Each cell names its column: at phone width a row is a card of them.
  for (const row of rows) [...row.children].forEach((cell, i) => heads[i] && heads[i][0] && cell.setAttribute("data-label", heads[i][0]));
  return h(
    "div",
    { class: "scroll", tabindex: "0", role: "region", "aria-label": caption },
    h(
      "table",
      attrs,
      h("caption", { class: captionClass, text: caption }),
      h("thead", {}, h("tr", {}, heads.map(([text, cls]) => h("th", { scope: "col", class: cls, text })))),
      h("tbody", {}, rows),
    ),
  );
}

/// Newer / Page n of m / Older, for a list view at `base` (a hash whose
/// other parameters are in `params`).
export function pager(base, page, pages, params = {}, labels = ["Newer", "Older"]) {
  const at = (p) => `${base}?${new URLSearchParams({ ...params, page: String(p) })}`;
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? h("a", { href: at(page - 1), text: labels[0] }) : null,
    pages > 1 ? h("span", { text: `Page ${page} of ${pages}` }) : null,
    page < pages ? h("a", { href: at(page + 1), text: labels[1] }) : null);
}

/// A time (ISO text or milliseconds) in the reader's zone.
export function when(t) {
  return t ? new Date(t).toLocaleString() : "—";
}

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

/// A form field with its label.
export function field(label, input) {
  if (!input.id) input.id = "f-" + Math.random().toString(36).slice(2);
  return h("p", { class: "field" }, h("label", { for: input.id, text: label }), input);
}

const SVG = "http://www.w3.org/2000/svg";

function svg(w, hgt, label) {
  const el = document.createElementNS(SVG, "svg");
  el.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", label);
  return el;
}

/// A small line chart of `values` (one a minute, the last to now), with
/// its latest and highest value in words.
export function chart(title, values, format) {
  const w = 300, hgt = 60;
  const top = Math.max(...values, 0) || 1;
  const latest = values.length ? values[values.length - 1] : 0;
  const summary = values.length ? `now ${format(latest)}, highest ${format(Math.max(...values))}` : "no reading yet";
  const el = svg(w, hgt, `${title}: ${summary}`);
  const line = document.createElementNS(SVG, "polyline");
  // One reading (the first minute) is drawn as a level line.
  const drawn = values.length === 1 ? [latest, latest] : values;
  const step = drawn.length > 1 ? w / (drawn.length - 1) : w;
  line.setAttribute("points", drawn.map((v, i) => `${(i * step).toFixed(1)},${(hgt - (v / top) * (hgt - 4) - 2).toFixed(1)}`).join(" "));
  el.append(line);
  return h("figure", { class: "chart" }, h("figcaption", { text: title }), el, h("p", { class: "muted", text: summary }));
}

/// A bar chart of `rows` ([label, count]), each bar labelled below.
export function bars(title, rows) {
  const w = 300, hgt = 120, foot = 18;
  const top = Math.max(...rows.map(([, n]) => n), 1);
  const el = svg(w, hgt, `${title}: ${rows.map(([k, n]) => `${k} ${n}`).join(", ")}`);
  const slot = w / Math.max(rows.length, 1);
  rows.forEach(([k, n], i) => {
    const tall = ((hgt - foot - 4) * n) / top;
    const bar = document.createElementNS(SVG, "rect");
    bar.setAttribute("x", (i * slot + slot * 0.2).toFixed(1));
    bar.setAttribute("width", (slot * 0.6).toFixed(1));
    bar.setAttribute("y", (hgt - foot - tall).toFixed(1));
    bar.setAttribute("height", tall.toFixed(1));
    const label = document.createElementNS(SVG, "text");
    label.setAttribute("x", (i * slot + slot / 2).toFixed(1));
    label.setAttribute("y", String(hgt - 4));
    label.setAttribute("text-anchor", "middle");
    label.textContent = String(k);
    el.append(bar, label);
  });
  return el;
}
