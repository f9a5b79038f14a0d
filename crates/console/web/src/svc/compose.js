// A new send: the message, its audience with a live recipient count, when;
// a review step stating the count; sent with an Idempotency-Key.

import { call, problem } from "./api.js";
import { alertBox, h, say, show } from "../ui.js";

export function compose() {
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
  const form = h("form", { id: "compose", oninput: (e) => e.target.closest("#audience") && recount(), onchange: whenChosen, onsubmit: review },
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
    h("fieldset", { id: "when" }, h("legend", {}, "When"),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "when", value: "now", checked: true }), "Now"),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "when", value: "at" }), "At a date and time (yours)"),
      h("label", { for: "send-at", class: "sub" }, "Date and time"),
      h("input", { id: "send-at", type: "datetime-local", class: "sub", disabled: true }),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "when", value: "local" }), "At a time of day in each device's zone"),
      h("label", { for: "local-time", class: "sub" }, "Local time"),
      h("input", { id: "local-time", type: "time", class: "sub", disabled: true })),
    h("button", { type: "submit" }, "Review"),
    error);
  const confirmBox = h("section", { id: "confirm", hidden: true, "aria-labelledby": "confirm-title" });
  show("New send", form, confirmBox);
  let counting = null;
  let last = null;

  /// Only the chosen way's boxes can be filled in (and reached by Tab).
  function whenChosen(e) {
    if (e.target.name !== "when") return;
    const when = e.target.value;
    form.querySelector("#send-at").disabled = when !== "at";
    form.querySelector("#local-time").disabled = when !== "local";
  }
  /// Why the "When" part cannot be sent as it is, or "".
  function whenProblem() {
    const when = form.querySelector("input[name=when]:checked").value;
    if (when === "at") {
      const at = form.querySelector("#send-at").value;
      if (!at) return "Choose the date and time to send at, or choose Now.";
      if (new Date(at) <= new Date()) return "That time has passed: choose a later one, or choose Now.";
    }
    if (when === "local" && !form.querySelector("#local-time").value) {
      return "Choose the time of day to send at in each device's zone, or choose Now.";
    }
    return "";
  }

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
      b.send_at = new Date(form.querySelector("#send-at").value).toISOString();
    } else if (when === "local") {
      b.local_time = form.querySelector("#local-time").value;
    }
    return b;
  }
  async function review(e) {
    e.preventDefault();
    say(error, "");
    const why = whenProblem();
    if (why) return say(error, why);
    const b = body();
    const res = await call("POST", "/recipients/count", { target: b.target });
    if (res.status !== 200) return say(error, problem(res));
    const n = res.data.recipients;
    if (n === 0) return say(error, "No active device matches this audience: the send would reach no one. Widen the filters.");
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
