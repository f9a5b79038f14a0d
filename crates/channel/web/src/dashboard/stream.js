// Streaming: provision, the RTMPS URL and the stream key (masked, reveal,
// copy), Go live / End stream, and the live status with viewers.

import { mutate, query } from '../trpc.js';
import { busy, copy, notify, viewers } from '../ui.js';

const POLL_MS = 10_000;
const MASK = '••••••••••••••••';
const $ = (id) => document.getElementById(id);

function showLive(s) {
  const badge = $('live-state');
  badge.textContent = s.isLive ? 'Live' : 'Offline';
  badge.dataset.live = String(Boolean(s.isLive));
  $('live-viewers').textContent = s.isLive ? viewers(s.viewerCount || 0) : '';
  $('go-live').disabled = Boolean(s.isLive);
  $('end-stream').disabled = !s.isLive;
}

function showProvisioned(p) {
  $('not-provisioned').hidden = true;
  $('provisioned').hidden = false;
  $('rtmps-url').textContent = p.rtmpsUrl;
}

let key = null;

async function reveal(button) {
  const shown = button.getAttribute('aria-pressed') === 'true';
  if (shown) {
    $('stream-key').textContent = MASK;
    button.setAttribute('aria-pressed', 'false');
    button.textContent = 'Reveal';
    return;
  }
  await busy(button, async () => {
    key = key || (await query('stream.credentials')).streamKey;
    $('stream-key').textContent = key;
    button.setAttribute('aria-pressed', 'true');
    button.textContent = 'Hide';
  });
}

export function streamCard() {
  if (!$('stream-card')) return;
  $('provision')?.addEventListener('click', (e) =>
    busy(e.currentTarget, async () => showProvisioned(await mutate('stream.provision')), 'Streaming is set up. Point OBS at the URL and key below.'),
  );
  $('reveal-key')?.addEventListener('click', (e) => reveal(e.currentTarget));
  $('copy-key')?.addEventListener('click', (e) =>
    busy(e.currentTarget, async () => {
      key = key || (await query('stream.credentials')).streamKey;
      await copy(key);
    }, 'Stream key copied'),
  );
  $('copy-url')?.addEventListener('click', (e) =>
    busy(e.currentTarget, () => copy($('rtmps-url').textContent), 'RTMPS URL copied'),
  );
  $('go-live')?.addEventListener('click', (e) =>
    busy(e.currentTarget, () => mutate('stream.goLive'), 'The stream is public: it goes live as soon as the provider reports it.'),
  );
  $('end-stream')?.addEventListener('click', (e) =>
    busy(e.currentTarget, async () => showLive(await mutate('stream.end')), 'The stream has ended.'),
  );
  const poll = () =>
    query('stream.isLive')
      .then(showLive)
      .catch((err) => notify(err.message, 'error'));
  poll();
  setInterval(() => {
    if (!document.hidden) poll();
  }, POLL_MS);
}
