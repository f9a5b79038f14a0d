// Viewer charts (current session, last 7 days) and past sessions, drawn
// with uPlot, which this module alone loads.

import uPlot from 'uplot';
import { query } from '../trpc.js';
import { h } from '../ui.js';

function chart(el, samples, title) {
  el.replaceChildren();
  if (!samples.length) {
    el.append(h('p', { class: 'muted' }, `${title}: no samples yet.`));
    return;
  }
  const xs = samples.map((s) => Date.parse(s.at) / 1000);
  const ys = samples.map((s) => s.viewers);
  const width = Math.max(260, el.clientWidth || 600);
  const opts = {
    title,
    width,
    height: 200,
    series: [{}, { label: 'Viewers', stroke: '#7c3aed', fill: 'rgba(124,58,237,0.15)', width: 2 }],
    axes: [{}, { label: 'Viewers' }],
    scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
  };
  // eslint-disable-next-line no-new
  new uPlot(opts, [xs, ys], el);
  el.setAttribute('aria-label', `${title}: peak ${Math.max(...ys)} viewers over ${ys.length} samples`);
}

function sessions(el, list) {
  el.replaceChildren(
    ...list.map((s) =>
      h(
        'tr',
        {},
        h('td', {}, new Date(s.startedAt).toLocaleString()),
        h('td', {}, s.endedAt ? new Date(s.endedAt).toLocaleTimeString() : 'live'),
        h('td', {}, String(s.peakViewers)),
        h('td', {}, s.averageViewers == null ? '–' : s.averageViewers.toFixed(1)),
      ),
    ),
  );
}

export async function analytics() {
  const current = document.getElementById('chart-current');
  if (!current) return;
  try {
    const r = await query('analytics.viewers');
    chart(current, r.current?.samples || [], 'Current session');
    chart(document.getElementById('chart-week'), r.lastSevenDays || [], 'Last 7 days');
    sessions(document.getElementById('session-rows'), r.sessions || []);
    document.getElementById('no-sessions').hidden = (r.sessions || []).length > 0;
  } catch (e) {
    current.replaceChildren(h('p', { class: 'error' }, e.message));
  }
}
