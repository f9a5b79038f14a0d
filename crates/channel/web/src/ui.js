// Small DOM helpers shared by the pages: element creation without
// innerHTML (so nothing the API returns is ever parsed as HTML), and the
// status line every action reports to.

/** Creates an element with attributes and children (strings become text). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Reads the JSON a page embeds in `<script type="application/json" id=...>`. */
export function pageData(id) {
  const el = document.getElementById(id);
  if (!el) return {};
  try {
    return JSON.parse(el.textContent || '{}');
  } catch {
    return {};
  }
}

/** Shows a success or error message in the page's status region. */
export function notify(message, kind = 'ok') {
  const region = document.getElementById('status');
  if (!region) return;
  region.textContent = message;
  region.dataset.kind = kind;
  region.hidden = false;
  clearTimeout(notify.timer);
  if (kind === 'ok') {
    notify.timer = setTimeout(() => {
      region.hidden = true;
    }, 6000);
  }
}

/** Runs `action` with `button` disabled meanwhile; reports its outcome. */
export async function busy(button, action, success) {
  if (button) button.disabled = true;
  try {
    const out = await action();
    if (success) notify(success, 'ok');
    return out;
  } catch (e) {
    notify(e.message || 'Something went wrong', 'error');
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/** A form's fields as an object of trimmed strings. */
export function fields(form) {
  const out = {};
  for (const [k, v] of new FormData(form).entries()) {
    if (typeof v === 'string') out[k] = v.trim();
  }
  return out;
}

/** Copies text to the clipboard (with a fallback for older browsers). */
export async function copy(text) {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = h('textarea', { class: 'visually-hidden' }, text);
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/** "3 viewers", "1 viewer". */
export function viewers(n) {
  return `${n} ${n === 1 ? 'viewer' : 'viewers'}`;
}
