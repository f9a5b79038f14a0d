// svc console: the views, drawn from svc's own API. Each hash is a view:
// #/sends, #/sends/{id}, #/compose, #/stats, #/devices, #/forms,
// #/forms/new, #/forms/{id}, #/forms/{id}/submissions, #/settings,
// #/passwords, #/audit, #/admins; list views take their page and filters
// after `?`.

import { admins } from "./admins.js";
import { audit } from "./audit.js";
import { compose } from "./compose.js";
import { devices } from "./devices.js";
import { form, forms, submissions } from "./forms.js";
import { passwords } from "./passwords.js";
import { send, sends } from "./sends.js";
import { cannotManage, mayManage, mayManageAdmins, signIn, signedIn } from "./session.js";
import { settings } from "./settings.js";
import { stats } from "./stats.js";

const nav = document.getElementById("nav");

async function route() {
  const hash = location.hash || "#/sends";
  if (hash === "#/sign-in" || !signedIn()) {
    nav.hidden = true;
    if (hash !== "#/sign-in") location.hash = "#/sign-in";
    return signIn();
  }
  nav.hidden = false;
  document.getElementById("nav-admins").hidden = !mayManageAdmins();
  const [path, q] = hash.slice(1).split("?");
  const params = new URLSearchParams(q || "");
  for (const a of nav.querySelectorAll("a")) {
    const here = path === a.getAttribute("href").slice(1) || path.startsWith(a.getAttribute("href").slice(1) + "/");
    if (here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (!mayManage()) return cannotManage();
  const parts = path.split("/").slice(1).map(decodeURIComponent);
  switch (parts[0]) {
    case "compose": return compose();
    case "stats": return stats();
    case "devices": return devices(params);
    case "settings": return settings();
    case "passwords": return passwords();
    case "audit": return audit(params);
    case "admins": return admins();
    case "forms":
      if (parts.length === 1) return forms();
      if (parts[1] === "new") return form(null);
      if (parts[2] === "submissions") return submissions(parts[1], params);
      return form(parts[1]);
    default:
      if (parts[0] === "sends" && parts[1]) return send(parts[1]);
      return sends(Number(params.get("page") || 1));
  }
}

window.addEventListener("hashchange", route);
route();
