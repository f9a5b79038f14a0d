// Devices: searched and paged on the server, exported as CSV (streamed),
// imported from CSV with a preview, progress and a report.

import { call, download, problem, query, upload as send } from "./api.js";
import { csvRows } from "./csv.js";
import { alertBox, h, pager, plural, say, show, table, when } from "../ui.js";

const PER_PAGE = 50;
// The columns an import cannot do without.
const REQUIRED = ["push_token", "device_type"];

export async function devices(params) {
  const search = params.get("search") || "";
  const page = Number(params.get("page") || 1);
  const form = h("form", { id: "device-search", role: "search", onsubmit: (e) => {
    e.preventDefault();
    location.hash = `#/devices${query({ search: form.querySelector("#search").value.trim() })}`;
  } },
    h("label", { for: "search" }, "Push token or label contains"),
    h("input", { id: "search", type: "search", maxlength: 200, value: search }),
    h("button", { type: "submit" }, "Search"));
  const res = await call("GET", `/devices${query({ search, page, per_page: PER_PAGE })}`);
  const list = res.status === 200 ? deviceList(res.data, search) : h("p", { class: "alert", role: "alert" }, problem(res));
  const pages = res.status === 200 ? res.data.total_pages : 1;
  const exportError = alertBox("export-error");
  async function saveExport(path) {
    say(exportError, "");
    const r = await download(path);
    if (r.status !== 200) say(exportError, problem(r));
  }
  show("Devices",
    h("p", {}, h("button", { type: "button", id: "export", onclick: () => saveExport("/devices/export") }, "Export every device as CSV"),
      " (push-devices.csv, every device)."),
    exportError,
    form, list, pager("#/devices", page, pages, search ? { search } : {}, ["Previous", "Next"]),
    importer(refresh));
  /// The list drawn again after an import, the import's report kept.
  async function refresh() {
    const fresh = await call("GET", `/devices${query({ search, page, per_page: PER_PAGE })}`);
    if (fresh.status !== 200) return;
    const drawn = document.getElementById("device-count") || document.getElementById("device-list-region");
    if (drawn) drawn.replaceWith(deviceList(fresh.data, search));
  }
}

/// The page of devices `d` as a table (or that there are none), with the
/// element a refresh replaces.
function deviceList(d, search) {
  if (d.devices.length === 0) {
    return h("p", { id: "device-count" }, search ? `No device's token or label contains “${search}”.` : "No devices yet.");
  }
  return h("div", { id: "device-list-region" }, table(
    `${plural(d.total, "device", "devices")}${search ? ` matching “${search}”` : ""}, by push token`,
    ["Push token", "Type", "App version", "Locale", "Label", "Active", "Registered"],
    d.devices.map((v) => h("tr", {},
      h("td", { class: "token" }, v.push_token), h("td", {}, v.device_type), h("td", {}, v.app_version || ""),
      h("td", {}, v.locale || ""), h("td", {}, v.user_label || ""),
      h("td", {}, v.active ? "yes" : `no (${v.inactive_reason || "inactive"})`), h("td", {}, when(v.registered_at)))),
    { id: "device-list" }, null));
}

function importer(imported) {
  const error = alertBox("import-error");
  const preview = h("section", { id: "import-preview", hidden: true, "aria-labelledby": "preview-title" });
  const report = h("section", { id: "import-report", hidden: true, "aria-live": "polite" });
  const progress = h("progress", { id: "import-progress", max: 100, value: 0, hidden: true, "aria-label": "Upload" });
  const file = h("input", { id: "import-file", type: "file", accept: ".csv,text/csv", onchange: look });
  const section = h("section", { "aria-labelledby": "import-title" },
    h("h2", { id: "import-title" }, "Import"),
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
    const lacking = REQUIRED.filter((c) => !(head || []).map((x) => x.trim()).includes(c));
    preview.replaceChildren(
      h("h3", { id: "preview-title" }, `${chosen.name}: the first rows as they will be read`),
      lacking.length
        ? h("p", { id: "preview-warning", class: "alert", role: "alert" },
            `The header has no ${lacking.join(" and no ")} column: every line will be refused. The first line must name the columns.`)
        : null,
      table("The file's first rows", head || [], body.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))),
      h("button", { type: "button", id: "import-go", onclick: upload }, `Import ${chosen.name}`));
    preview.hidden = false;
  }
  async function upload() {
    const form = new FormData();
    form.append("file", chosen, chosen.name);
    progress.hidden = false;
    progress.value = 0;
    const res = await send("/devices/import", form, (share) => { progress.value = share; });
    progress.hidden = true;
    if (res.status !== 200) return say(error, problem(res));
    const data = res.data;
    preview.hidden = true;
    const refused = data.errors.map((e) => h("tr", {}, h("td", {}, e.line), h("td", { class: "change" }, e.reason)));
    report.replaceChildren(
      h("h3", {}, "Imported"),
      h("p", { id: "import-counts" }, `${data.imported} new, ${data.updated} updated, ${data.skipped} unchanged, ${data.errors.length} refused.`),
      refused.length ? table("Refused lines", ["Line", "Why"], refused, { id: "import-errors" }, null) : null);
    report.hidden = false;
    imported();
  }
  return section;
}
