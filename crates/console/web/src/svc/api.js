// svc's routes as the console serves them (/console/v1/svc/...: the same
// routes svc's admins and scripts call), and svc's refusals said in full.

import * as console from "../api.js";

export { query } from "../api.js";

const SVC = "/svc";

export function call(method, path, body, idempotencyKey) {
  return console.call(method, SVC + path, body, idempotencyKey);
}

export function download(path) {
  return console.download(SVC + path);
}

export function upload(path, form, progress) {
  return console.upload(SVC + path, form, progress);
}

/// What went wrong, as svc said it, with why each parameter was refused
/// when svc says (`data.params`: `{target: "push_tokens[0] must be ..."}`).
export function problem(res) {
  const d = res.data;
  if (!d || !d.message) return console.problem(res);
  // Only routes svc has are called: one that is not found is a push
  // route while push is switched off.
  if (d.code === "rest_no_route") return "The push API is switched off: turn on “Push API on” under Forms › Settings to use this page.";
  const params = d.data && d.data.params;
  if (params && typeof params === "object" && !Array.isArray(params)) {
    const why = Object.entries(params).map(([k, v]) => `${k}: ${v}`).join("; ");
    if (why) return `${d.message} (${why})`;
  }
  return d.message;
}
