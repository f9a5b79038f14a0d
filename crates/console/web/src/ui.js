// Drawing: elements made from data (text from the API is only ever set
// as text, never as HTML), the view and its refresh timer, alerts.

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
  clearInterval(timer);
  timer = null;
  document.title = title + " · keel console";
  view.replaceChildren(h("h1", { text: title }), ...content.filter((c) => c !== null && c !== undefined));
  view.focus();
}

/// Runs `f` every `ms` until the view changes.
export function repeat(f, ms) {
  clearInterval(timer);
  timer = setInterval(f, ms);
}

export function alertBox() {
  return h("p", { role: "alert", class: "alert", hidden: true });
}

export function say(box, text, kind = "alert") {
  box.textContent = text || "";
  box.className = kind;
  box.hidden = !text;
}

/// A table that scrolls sideways on a narrow screen.
export function table(caption, head, rows) {
  // Each cell names its column: at phone width a row is a card of them.
  for (const row of rows) [...row.children].forEach((cell, i) => head[i] && cell.setAttribute("data-label", head[i]));
  return h(
    "div",
    { class: "scroll", tabindex: "0", role: "region", "aria-label": caption },
    h(
      "table",
      {},
      h("caption", { class: "sr-only", text: caption }),
      h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col", text: c })))),
      h("tbody", {}, rows),
    ),
  );
}

export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "—";
}

/// A form field with its label.
export function field(label, input) {
  if (!input.id) input.id = "f-" + Math.random().toString(36).slice(2);
  return h("p", { class: "field" }, h("label", { for: input.id, text: label }), input);
}

const SVG = "http://www.w3.org/2000/svg";

/// A small line chart of `values` (one a minute, the last to now), with
/// its latest and highest value in words.
export function chart(title, values, format) {
  const w = 300, hgt = 60;
  const top = Math.max(...values, 0) || 1;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  svg.setAttribute("role", "img");
  const latest = values.length ? values[values.length - 1] : 0;
  const summary = values.length ? `now ${format(latest)}, highest ${format(Math.max(...values))}` : "no reading yet";
  svg.setAttribute("aria-label", `${title}: ${summary}`);
  const line = document.createElementNS(SVG, "polyline");
  // One reading (the first minute) is drawn as a level line.
  const drawn = values.length === 1 ? [latest, latest] : values;
  const step = drawn.length > 1 ? w / (drawn.length - 1) : w;
  line.setAttribute("points", drawn.map((v, i) => `${(i * step).toFixed(1)},${(hgt - (v / top) * (hgt - 4) - 2).toFixed(1)}`).join(" "));
  svg.append(line);
  return h("figure", { class: "chart" }, h("figcaption", { text: title }), svg, h("p", { class: "muted", text: summary }));
}
