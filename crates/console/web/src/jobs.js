// Jobs (the jobs role): each kind's queue, the failed jobs with their
// error; retry or discard one, or every failed job of a kind. Refreshed
// every 5 s while open.

import { call, problem } from "./api.js";
import { h, show, alertBox, say, table, when, repeat } from "./ui.js";

let shown = "";

export async function jobs(again = false) {
  const box = alertBox();
  const r = await call("GET", "/jobs");
  if (r.status !== 200) return show("Jobs", h("p", { class: "alert", role: "alert", text: problem(r) }));
  // A refresh that would draw the same page leaves it (and the focus) be.
  const seen = JSON.stringify(r.data);
  if (again && seen === shown) return;
  shown = seen;
  const act = async (path, sure) => {
    if (sure && !window.confirm(sure)) return;
    const res = await call("POST", path, {});
    if (res.status !== 200) return say(box, problem(res));
    await jobs();
  };
  const kinds = r.data.kinds.map((k) =>
    h(
      "tr",
      {},
      h("th", { scope: "row", text: k.kind }),
      h("td", { text: k.queued }),
      h("td", { text: k.due }),
      h("td", { text: k.running }),
      h("td", { text: k.failed }),
      h("td", { text: Math.round(k.oldest_due_secs) + " s" }),
      h(
        "td",
        {},
        k.failed
          ? [
              h("button", { type: "button", onclick: () => act(`/jobs/kinds/${encodeURIComponent(k.kind)}/retry`), text: "Retry all" }),
              h("button", { type: "button", class: "danger", onclick: () => act(`/jobs/kinds/${encodeURIComponent(k.kind)}/discard`, `Discard every failed ${k.kind} job?`), text: "Discard all" }),
            ]
          : "",
      ),
    ),
  );
  const failed = r.data.failed.map((j) =>
    h(
      "tr",
      {},
      h("td", { text: j.id }),
      h("td", { text: j.kind }),
      h("td", { text: j.attempts }),
      h("td", {}, h("code", { text: j.last_error || "—" })),
      h("td", { text: when(j.last_run_at) }),
      h(
        "td",
        {},
        h("button", { type: "button", "data-job": j.id, onclick: () => act(`/jobs/${j.id}/retry`), text: "Retry" }),
        h("button", { type: "button", class: "danger", onclick: () => act(`/jobs/${j.id}/discard`, `Discard job ${j.id}?`), text: "Discard" }),
      ),
    ),
  );
  show(
    "Jobs",
    box,
    table("Job kinds", ["Kind", "Queued", "Due", "Running", "Failed", "Oldest due", ""], kinds),
    h("h2", { text: "Failed jobs" }),
    failed.length ? table("Failed jobs", ["Id", "Kind", "Attempts", "Last error", "Last try", ""], failed) : h("p", { text: "No failed job." }),
  );
  repeat(refresh, 5000);
}

async function refresh() {
  if (location.hash.startsWith("#/jobs")) await jobs(true);
}
