// The settings as a form: each with its meaning and limits; only what
// changed is sent, and a refusal names the setting.

import { call, problem } from "./api.js";
import { alertBox, failed, h, plural, say, show } from "../ui.js";

const SETTINGS = [
  ["push_enabled", "Push API on", "check", "Off: every push route answers 404, within a second on every node."],
  ["allowed_origins", "Origins whose browsers may call the form API", "lines", "One a line, scheme://host[:port], no path."],
  ["forms_allowlist", "Forms the form API serves", "lines", "Form ids, one a line."],
  ["appcheck_project_number", "Firebase project number", "text", "Digits; empty clears it. App Check tokens must name this project."],
  ["appcheck_app_ids", "App ids whose App Check tokens are accepted", "lines", "One a line, e.g. 1:123456:ios:abc."],
  ["submission_rate_limit", "Submissions a minute from one app", "number", "1 to 100,000,000."],
  ["payload_limit_bytes", "Largest submission, in bytes", "number", "256 to 8,388,608."],
];

export async function settings() {
  const res = await call("GET", "/admin/settings");
  if (res.status !== 200) return failed("Settings", problem(res));
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
  const tokens = plural(current.appcheck_debug_tokens, "App Check debug token is", "App Check debug tokens are");
  show("Settings", h("p", {}, `${tokens} accepted (change them with the API or keel svc settings).`), form);
  const labelOf = (key) => (SETTINGS.find(([k]) => k === key) || [key, key])[1];
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
    for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
    const res = await call("PATCH", "/admin/settings", patch);
    if (res.status !== 200) return refused(res);
    Object.assign(current, res.data);
    saved.textContent = Object.keys(patch).length ? `Saved: ${Object.keys(patch).map(labelOf).join("; ")}.` : "Nothing changed.";
  }
  /// The refusal said in the setting's own words, the setting marked and
  /// focused.
  function refused(res) {
    const params = res.data && res.data.data && res.data.data.params;
    const key = Array.isArray(params) ? params[0] : null;
    const el = key && form.querySelector(`#setting-${key}`);
    if (!el) return say(error, problem(res));
    const why = (res.data.message || "").replace(`Invalid parameter: ${key} `, "");
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-errormessage", "settings-error");
    say(error, `${labelOf(key)}: ${why}`);
    el.focus();
  }
}
