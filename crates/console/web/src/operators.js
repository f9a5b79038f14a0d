// Operators (the operators role): who may sign in, with which roles;
// add one (the password and the authenticator secret are shown once),
// change roles, disable, enable, remove.

import { call, problem } from "./api.js";
import { h, show, alertBox, say, table, when, field } from "./ui.js";

const ROLES = ["users", "jobs", "push", "forms", "operators"];

function roleBoxes(prefix, chosen) {
  return h(
    "fieldset",
    { class: "roles" },
    h("legend", { text: "Roles" }),
    ROLES.map((r) =>
      h("label", { class: "choice" }, h("input", { type: "checkbox", id: `${prefix}-${r}`, value: r, checked: chosen.includes(r) }), r),
    ),
  );
}

function checked(box) {
  return [...box.querySelectorAll("input:checked")].map((i) => i.value);
}

export async function operators(me) {
  const r = await call("GET", "/operators");
  if (r.status !== 200) return show("Operators", h("p", { class: "alert", role: "alert", text: problem(r) }));
  const box = alertBox();
  const act = async (method, path, body) => {
    const res = await call(method, path, body);
    if (res.status >= 300) return say(box, problem(res));
    await operators(me);
  };
  const rows = r.data.operators.map((o) => {
    const roles = roleBoxes("op-" + o.name, o.roles);
    const self = o.name === me.name;
    return h(
      "tr",
      {},
      h("th", { scope: "row", text: o.name + (self ? " (you)" : "") }),
      h("td", {}, roles, h("button", { type: "button", onclick: () => act("PUT", `/operators/${encodeURIComponent(o.name)}/roles`, { roles: checked(roles) }), text: "Save roles" })),
      h("td", { text: o.disabled ? "disabled" : "active" }),
      h("td", { text: when(o.created_at) }),
      h(
        "td",
        {},
        self
          ? ""
          : [
              h("button", { type: "button", onclick: () => act("POST", `/operators/${encodeURIComponent(o.name)}/${o.disabled ? "enable" : "disable"}`, {}), text: o.disabled ? "Enable" : "Disable" }),
              h("button", { type: "button", onclick: () => act("POST", `/operators/${encodeURIComponent(o.name)}/sessions/end`, {}), text: "End sessions" }),
              h("button", { type: "button", class: "danger", onclick: () => window.confirm(`Remove ${o.name}?`) && act("DELETE", `/operators/${encodeURIComponent(o.name)}`), text: "Remove" }),
            ],
      ),
    );
  });
  const name = h("input", { id: "new-operator", name: "name", required: true, maxlength: "60", autocomplete: "off" });
  const roles = roleBoxes("new", []);
  const made = h("div", { id: "made", role: "status" });
  const form = h(
    "form",
    {
      id: "add-operator",
      class: "action",
      onsubmit: async (e) => {
        e.preventDefault();
        const res = await call("POST", "/operators", { name: name.value.trim(), roles: checked(roles) });
        if (res.status !== 201) return say(box, problem(res));
        await operators(me);
        document.getElementById("made").replaceChildren(
          h("p", { class: "note", text: `${res.data.operator.name} added. Give them these now; they are not shown again.` }),
          h("dl", {}, [h("dt", { text: "Password" }), h("dd", {}, h("code", { text: res.data.password })), h("dt", { text: "Authenticator secret" }), h("dd", {}, h("code", { text: res.data.totp_secret }))]),
        );
      },
    },
    field("Name", name),
    roles,
    h("button", { type: "submit", text: "Add operator" }),
  );
  show("Operators", box, made, table("Operators", ["Name", "Roles", "State", "Added", ""], rows), h("h2", { text: "Add an operator" }), form);
}
