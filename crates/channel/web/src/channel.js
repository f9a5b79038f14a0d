// The channel page: the server rendered it offline or live already; this
// polls stream.isLive every 10 s (the interval the channel's clients use), switches between
// the offline card and the player without a reload, and loads the player
// (hls.js) and the chat only when they are needed, after first paint.

import { query } from './trpc.js';
import { pageData, viewers } from './ui.js';

const POLL_MS = 10_000;

const root = document.querySelector('[data-channel]');
const initial = pageData('channel-state');
let live = Boolean(initial.isLive);
let player = null;
let starting = null;

function show(status) {
  live = Boolean(status.isLive);
  root.dataset.live = String(live);
  document.getElementById('offline').hidden = live;
  document.getElementById('live').hidden = !live;
  const count = document.getElementById('viewer-count');
  count.textContent = live ? viewers(status.viewerCount || 0) : '';
  count.hidden = !live;
}

async function startPlayer() {
  if (player || starting) return;
  starting = (async () => {
    const note = document.getElementById('video-note');
    try {
      const watch = await query('stream.viewerToken');
      if (!watch.hlsPlaylistUrl) {
        note.textContent = 'The stream is starting…';
        return;
      }
      const { Player } = await import('./player.js');
      player = new Player(document.getElementById('video'), note);
      await player.play(watch.hlsPlaylistUrl);
    } catch (e) {
      note.textContent = e.message;
    } finally {
      starting = null;
    }
  })();
}

function stopPlayer() {
  player?.stop();
  player = null;
  document.getElementById('video-note').textContent = 'Connecting to the stream…';
}

async function poll() {
  try {
    const status = await query('stream.isLive');
    const was = live;
    show(status);
    if (live && (!was || !player)) startPlayer();
    if (!live && was) stopPlayer();
  } catch {
    // Keep what is shown; the next poll tries again.
  }
}

function schedule() {
  setInterval(() => {
    if (!document.hidden) poll();
  }, POLL_MS);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) poll();
  });
}

function afterFirstPaint(fn) {
  requestAnimationFrame(() => setTimeout(fn, 0));
}

if (root) {
  show(initial);
  schedule();
  afterFirstPaint(() => {
    if (live) startPlayer();
    import('./chat.js').then((m) => m.start(document.getElementById('chat'), initial.streamUrl));
  });
}
