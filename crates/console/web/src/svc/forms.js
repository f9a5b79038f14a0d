// Forms: the list, a form's editor (create, edit fields, remove), and its
// submissions, paged on the server and exported as CSV.

import { call, download, problem, query } from "./api.js";
import { alertBox, failed, h, pager, plural, say, show, table, when } from "../ui.js";

const TYPES = ["text", "textarea", "email", "number", "url", "tel", "date", "select", "radio", "checkbox", "hidden"];
const WITH_CHOICES = new Set(["select", "radio", "checkbox"]);

export async function forms() {
  const res = await call("GET", "/admin/forms");
  if (res.status !== 200) return failed("Forms", problem(res));
  const rows = res.data.forms.map((f) => h("tr", {},
    h("td", {}, f.id), h("td", {}, h("a", { href: `#/forms/${encodeURIComponent(f.id)}` }, f.title)),
    h("td", { class: "num" }, f.fields.length),
    h("td", {}, h("a", { href: `#/forms/${encodeURIComponent(f.id)}/submissions` }, `Submissions to ${f.title}`))));
  show("Forms", h("p", {}, h("a", { href: "#/forms/new", class: "button", id: "new-form" }, "New form")),
    rows.length ? table(plural(rows.length, "form", "forms"), ["Id", "Title", ["Fields", "num"], "Submissions"], rows, { id: "form-list" }, null)
      : h("p", {}, "No forms yet."));
}

/// The editor of form `id` (null: a new form).
export async function form(id) {
  fieldNo = 0;
  let def = { id: "", title: "", fields: [] };
  if (id !== null) {
    const res = await call("GET", `/admin/forms/${encodeURIComponent(id)}`);
    if (res.status !== 200) return failed("Form", problem(res));
    def = res.data;
  }
  const error = alertBox("form-error");
  const saved = h("p", { id: "form-saved", role: "status" });
  const fields = h("div", { id: "fields" });
  const editor = h("form", { id: "form-editor", onsubmit: save },
    h("label", { for: "form-id" }, "Id (digits, e.g. 12)"),
    h("input", { id: "form-id", required: true, maxlength: 100, value: def.id, readonly: id !== null, inputmode: "numeric" }),
    h("label", { for: "form-title" }, "Title"),
    h("input", { id: "form-title", required: true, maxlength: 200, value: def.title }),
    h("fieldset", {}, h("legend", {}, "Fields"), fields,
      h("button", { type: "button", class: "link", id: "add-field", onclick: () => addField(fields, {}) }, "Add a field")),
    h("button", { type: "submit" }, id === null ? "Create" : "Save"), error, saved);
  for (const f of def.fields) addField(fields, f);
  const remove = id === null ? null : h("section", { "aria-labelledby": "remove-title" },
    h("h2", { id: "remove-title" }, "Remove"),
    h("button", { type: "button", class: "danger", id: "remove-form", onclick: drop }, `Remove ${def.title} and its submissions`));
  const served = id === null ? null : await servedNote(id);
  show(id === null ? "New form" : def.title, served, editor,
    id === null ? null : h("p", {}, h("a", { href: `#/forms/${encodeURIComponent(id)}/submissions` }, "Its submissions")),
    remove, h("p", {}, h("a", { href: "#/forms" }, "All forms")));

  async function save(e) {
    e.preventDefault();
    say(error, "");
    saved.textContent = "";
    const body = { id: editor.querySelector("#form-id").value.trim(), title: editor.querySelector("#form-title").value, fields: [...fields.children].map(readField) };
    const res = id === null
      ? await call("POST", "/admin/forms", body)
      : await call("PUT", `/admin/forms/${encodeURIComponent(id)}`, body);
    if (res.status !== 200 && res.status !== 201) return say(error, problem(res));
    if (id === null) location.hash = `#/forms/${encodeURIComponent(res.data.id)}`;
    else saved.textContent = "Saved.";
  }
  async function drop() {
    const n = await call("GET", `/admin/forms/${encodeURIComponent(id)}/submissions?per_page=1`);
    const total = n.status === 200 ? n.data.total : null;
    const goes = total === null ? "Its submissions go" : total === 1 ? "Its one submission goes" : `Its ${total} submissions go`;
    if (!confirm(`Remove “${def.title}”? ${goes} with it; this cannot be undone.`)) return;
    const res = await call("DELETE", `/admin/forms/${encodeURIComponent(id)}`);
    if (res.status !== 200) return say(error, problem(res));
    location.hash = "#/forms";
  }
}

let fieldNo = 0;

/// For a form the form API does not serve yet (not in the settings'
/// allow-list, so its public routes answer 404): a line saying so, with a
/// button that adds it.
async function servedNote(id) {
  const res = await call("GET", "/admin/settings");
  if (res.status !== 200 || (res.data.forms_allowlist || []).includes(id)) return null;
  const error = alertBox("serve-error");
  const note = h("section", { id: "not-served", "aria-labelledby": "not-served-title" },
    h("h2", { id: "not-served-title" }, "Not served yet"),
    h("p", {}, `Apps get 404 from the form API for form ${id} until it is in “Forms the form API serves” (Settings).`),
    h("button", { type: "button", id: "serve-form", onclick: serve }, `Serve form ${id}`), error);
  async function serve() {
    say(error, "");
    const now = await call("GET", "/admin/settings");
    if (now.status !== 200) return say(error, problem(now));
    const list = [...new Set([...(now.data.forms_allowlist || []), id])];
    const r = await call("PATCH", "/admin/settings", { forms_allowlist: list });
    if (r.status !== 200) return say(error, problem(r));
    note.replaceChildren(h("p", { class: "note", role: "status", id: "served" }, `Form ${id} is served: apps may fetch and submit it.`));
  }
  return note;
}

function addField(list, f) {
  const n = ++fieldNo;
  const kind = h("select", { id: `field-type-${n}`, class: "field-type" }, TYPES.map((t) => h("option", { value: t, selected: t === (f.type || "text") }, t)));
  const choices = h("textarea", { id: `field-choices-${n}`, class: "field-choices", rows: 2 });
  choices.value = (f.choices || []).join("\n");
  const choiceBox = h("div", { class: "choices" }, h("label", { for: `field-choices-${n}` }, "Choices, one a line"), choices);
  const showChoices = () => { choiceBox.hidden = !WITH_CHOICES.has(kind.value); };
  kind.addEventListener("change", showChoices);
  const row = h("div", { class: "field-row" },
    h("label", { for: `field-id-${n}` }, "Field id"), h("input", { id: `field-id-${n}`, class: "field-id", required: true, maxlength: 64, value: f.id || "" }),
    h("label", { for: `field-label-${n}` }, "Label"), h("input", { id: `field-label-${n}`, class: "field-label", value: f.label || "" }),
    h("label", { for: `field-type-${n}` }, "Type"), kind,
    h("label", { for: `field-max-${n}` }, "Longest answer (optional)"), h("input", { id: `field-max-${n}`, class: "field-max", type: "number", min: 1, max: 1000000, value: f.max_length ?? "" }),
    h("label", { class: "choice" }, h("input", { type: "checkbox", class: "field-required", checked: !!f.required }), "Required"),
    choiceBox,
    h("button", { type: "button", class: "link danger", onclick: () => row.remove() }, `Remove field ${n}`));
  showChoices();
  list.append(row);
}

function readField(row) {
  const f = {
    id: row.querySelector(".field-id").value.trim(),
    label: row.querySelector(".field-label").value,
    type: row.querySelector(".field-type").value,
    required: row.querySelector(".field-required").checked,
  };
  if (WITH_CHOICES.has(f.type)) f.choices = row.querySelector(".field-choices").value.split("\n").map((c) => c.trim()).filter(Boolean);
  const max = row.querySelector(".field-max").value;
  if (max !== "") f.max_length = Number(max);
  return f;
}

export async function submissions(id, params) {
  const page = Number(params.get("page") || 1);
  const [def, res] = await Promise.all([
    call("GET", `/admin/forms/${encodeURIComponent(id)}`),
    call("GET", `/admin/forms/${encodeURIComponent(id)}/submissions${query({ page, per_page: 25 })}`),
  ]);
  if (def.status !== 200) return failed("Submissions", problem(def));
  if (res.status !== 200) return failed("Submissions", problem(res));
  const fields = def.data.fields;
  const cell = (v) => (v === undefined || v === null ? "" : Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v));
  const rows = res.data.submissions.map((s) => h("tr", {},
    h("td", { class: "num" }, s.id), h("td", {}, when(s.created_at)), h("td", {}, s.app_id),
    fields.map((f) => h("td", {}, cell(s.values[f.id])))));
  const d = res.data;
  const exportError = alertBox("export-error");
  const exportPath = `/admin/forms/${encodeURIComponent(id)}/submissions/export`;
  const save = async () => {
    say(exportError, "");
    const r = await download(exportPath);
    if (r.status !== 200) say(exportError, problem(r));
  };
  show(`Submissions: ${def.data.title}`,
    h("p", {}, h("button", { type: "button", id: "export-submissions", onclick: save }, "Export every submission as CSV")),
    exportError,
    rows.length
      ? table(`${plural(d.total, "submission", "submissions")}, newest first`,
          [["Id", "num"], "Received", "App", ...fields.map((f) => f.label || f.id)], rows, { id: "submission-list" }, null)
      : h("p", { id: "submission-none" }, "Nothing submitted yet."),
    pager(`#/forms/${encodeURIComponent(id)}/submissions`, page, d.total_pages),
    h("p", {}, h("a", { href: `#/forms/${encodeURIComponent(id)}` }, "The form"), " · ", h("a", { href: "#/forms" }, "All forms")));
}
