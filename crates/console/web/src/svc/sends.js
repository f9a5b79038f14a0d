// The sends list and one send's progress, drawn live.

import { call, problem } from "./api.js";
import { alertBox, failed, h, heading, pager, plural, repeat, repeating, say, show, stopRepeating, table, when } from "../ui.js";

const FINAL = new Set(["sent", "cancelled"]);
const STATES = ["pending", "queued", "sent", "failed", "skipped", "cancelled"];
// A send's page asks every 1.5 s for this long after it was opened, then
// every 30 s until the send is done and its receipts are in.
const WATCH_MS = 15 * 60 * 1000;
const SLOW_MS = 30 * 1000;

export async function sends(page) {
  const res = await call("GET", `/sends?page=${page}&per_page=20`);
  if (res.status !== 200) return failed("Sends", problem(res));
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
  const list = rows.length
    ? table(`${plural(res.data.total, "send", "sends")}, newest first`,
        ["Title", "Status", ["Recipients", "num"], ["Sent", "num"], ["Failed", "num"], "Created"], rows, { id: "send-list" }, null)
    : h("p", {}, "No sends yet. ", h("a", { href: "#/compose" }, "Compose the first one."));
  show("Sends", h("p", {}, h("a", { href: "#/compose", class: "button" }, "New send")), list,
    pager("#/sends", page, res.data.total_pages));
}

/// The filters a send was made with, in words.
function audience(a) {
  const parts = [];
  if (a.device_type) parts.push(a.device_type === "ios" ? "iOS" : "Android");
  if (a.locale) parts.push(`locale ${a.locale}`);
  if (a.app_version) parts.push(`app version ${a.app_version}`);
  if (a.push_tokens !== undefined) parts.push(plural(a.push_tokens, "push token named", "push tokens named"));
  return parts.length ? parts.join(", ") : "every active device";
}

export async function send(id) {
  const error = alertBox("send-error");
  const figures = h("dl", { class: "figures", id: "figures" });
  const bar = h("div", { class: "bar-chart", id: "progress", role: "img" });
  const status = h("p", { id: "status", "aria-live": "polite" });
  const message = h("div", { class: "preview", id: "message", "aria-label": "The message" });
  const receipts = h("p", { id: "receipts-note" });
  const cancel = h("button", { type: "button", id: "cancel", hidden: true, onclick: doCancel }, "Cancel what has not gone out");
  show("Send", message, status, bar, figures, receipts, cancel, error, h("p", {}, h("a", { href: "#/sends" }, "All sends")));
  const opened = Date.now();
  let slow = false;
  async function draw() {
    const res = await call("GET", `/send/${encodeURIComponent(id)}`);
    if (res.status !== 200) return say(error, problem(res));
    const s = res.data;
    document.title = `${s.title} · keel console`;
    heading().textContent = s.title;
    message.replaceChildren(h("strong", {}, s.title), h("span", {}, s.body));
    const at = s.local_time ? `at ${s.local_time} in each device's zone` : `at ${when(s.send_at)}`;
    status.textContent = `${s.status}: to ${plural(s.recipients, "device", "devices")} (${audience(s.audience)}), ${at}`;
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
    receipts.textContent = done || p.sent === 0 ? ""
      : "Receipts (delivered or not, as Expo learns from Apple and Google) come in over the next minutes; this page keeps counting them.";
    if (done) stopRepeating();
    else if (!slow && Date.now() - opened > WATCH_MS) {
      slow = true;
      repeat(draw, SLOW_MS);
    }
  }
  async function doCancel() {
    if (!confirm("Cancel every message of this send that has not gone to Expo?")) return;
    const res = await call("DELETE", `/send/${encodeURIComponent(id)}`);
    if (res.status !== 200) say(error, problem(res));
    draw();
  }
  await draw();
  if (!repeating() && status.dataset.watching === "true") repeat(draw, 1500);
}
