// Panels: add, edit, reorder (move up/down: keyboard- and touch-friendly),
// delete. The list is drawn from what the API answers after each change.

import { mutate } from '../trpc.js';
import { busy, fields, h, pageData } from '../ui.js';

let panels = [];
const list = () => document.getElementById('panel-list');
const orNull = (v) => (v === '' ? null : v);

function input(label, name, value, attrs = {}) {
  const id = `${name}-${Math.random().toString(36).slice(2, 8)}`;
  const control =
    attrs.multiline
      ? h('textarea', { id, name, rows: 3 }, value || '')
      : h('input', { id, name, value: value || '', type: attrs.type || 'text', required: attrs.required });
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

function editor(p) {
  const form = h(
    'form',
    { class: 'panel-edit', hidden: true },
    input('Title', 'title', p.title, { required: true }),
    input('Text', 'body', p.body, { multiline: true }),
    input('Link', 'linkUrl', p.linkUrl, { type: 'url' }),
    input('Image URL', 'imageUrl', p.imageUrl, { type: 'url' }),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Save'),
      h('button', { type: 'button', class: 'cancel' }, 'Cancel'),
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = fields(form);
    busy(e.submitter, async () => {
      const saved = await mutate('panels.update', {
        id: p.id,
        title: f.title,
        body: f.body,
        linkUrl: orNull(f.linkUrl),
        imageUrl: orNull(f.imageUrl),
      });
      panels = panels.map((x) => (x.id === saved.id ? saved : x));
      draw();
    }, 'Panel saved');
  });
  form.querySelector('.cancel').addEventListener('click', () => {
    form.hidden = true;
  });
  return form;
}

function move(p, by) {
  const ids = panels.map((x) => x.id);
  const at = ids.indexOf(p.id);
  const to = at + by;
  if (to < 0 || to >= ids.length) return Promise.resolve();
  [ids[at], ids[to]] = [ids[to], ids[at]];
  return mutate('panels.reorder', { ids }).then((r) => {
    panels = r.panels;
    draw();
    list().querySelector(`[data-id="${CSS.escape(p.id)}"] .${by < 0 ? 'up' : 'down'}`)?.focus();
  });
}

function item(p, i) {
  const form = editor(p);
  return h(
    'li',
    { class: 'panel-item', 'data-id': p.id },
    h('div', { class: 'panel-view' }, h('strong', { class: 'panel-title' }, p.title), p.body ? h('p', {}, p.body) : null),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'up', 'aria-label': `Move “${p.title}” up`, disabled: i === 0, onclick: (e) => busy(e.currentTarget, () => move(p, -1)) }, '↑'),
      h('button', { type: 'button', class: 'down', 'aria-label': `Move “${p.title}” down`, disabled: i === panels.length - 1, onclick: (e) => busy(e.currentTarget, () => move(p, 1)) }, '↓'),
      h('button', { type: 'button', class: 'edit', onclick: () => { form.hidden = !form.hidden; } }, 'Edit'),
      h('button', {
        type: 'button',
        class: 'danger delete',
        onclick: (e) =>
          busy(e.currentTarget, async () => {
            await mutate('panels.delete', { id: p.id });
            panels = panels.filter((x) => x.id !== p.id);
            draw();
          }, 'Panel deleted'),
      }, 'Delete'),
    ),
    form,
  );
}

function draw() {
  const el = list();
  el.replaceChildren(...panels.map(item));
  document.getElementById('no-panels').hidden = panels.length > 0;
}

export function panelsEditor() {
  if (!list()) return;
  panels = pageData('dashboard-state').panels || [];
  draw();
  const form = document.getElementById('panel-form');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = fields(form);
    busy(e.submitter, async () => {
      const created = await mutate('panels.create', {
        title: f.title,
        body: f.body,
        ...(f.linkUrl ? { linkUrl: f.linkUrl } : {}),
        ...(f.imageUrl ? { imageUrl: f.imageUrl } : {}),
      });
      panels = [...panels, created];
      draw();
      form.reset();
    }, 'Panel added');
  });
}
