// The chat, read-only for anonymous viewers: a client of the provider's
// chat protocol (GetStream: a WebSocket at /connect whose first event,
// health.check, carries the connection id; then the channel watched with
// POST /channels/{type}/{id}/query; new messages arrive as message.new).
// It connects exactly as GetStream's JS client (`stream-chat`) does for
// `connectAnonymousUser()` and `channel.watch()`: a random user id,
// `stream-auth-type=anonymous` and an empty `authorization` (tested against
// the real client's requests). Written here rather than bundling the
// provider's SDK, whose licence does not allow redistributing it. Emote
// names in messages become images.

import { query } from './trpc.js';
import { h } from './ui.js';

const KEEP = 200;
/** Who the chat says it is (stream-chat says `stream-chat-js-v<version>-browser`). */
const CLIENT = 'keel-channel-web';
const PING_MS = 25_000;
const RETRY_MIN_MS = 2000;
const RETRY_MAX_MS = 30_000;

class Chat {
  constructor(el, baseUrl) {
    this.el = el;
    this.list = el.querySelector('.messages');
    this.status = el.querySelector('.chat-status');
    this.baseUrl = (baseUrl || '').replace(/\/$/, '');
    this.emotes = new Map();
    this.retryMs = RETRY_MIN_MS;
    this.ids = new Set();
  }

  say(text, kind = 'info') {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
    this.status.hidden = !text;
  }

  async start() {
    query('emotes.list')
      .then((r) => {
        for (const e of r.emotes || []) this.emotes.set(e.name, e.url);
      })
      .catch(() => {});
    try {
      this.watch = await query('stream.viewerToken');
    } catch (e) {
      this.say(
        e.code === 'PRECONDITION_FAILED' ? 'Chat is not set up yet.' : 'Chat unavailable right now.',
        'error',
      );
      return;
    }
    this.connect();
  }

  connect() {
    const w = this.watch;
    // A fresh anonymous viewer for each connection, as stream-chat makes.
    this.userId = crypto.randomUUID();
    this.clientId = `${this.userId}--${crypto.randomUUID()}`;
    const json = JSON.stringify({
      user_id: this.userId,
      user_details: { id: this.userId, anon: true },
      client_request_id: crypto.randomUUID(),
    });
    const params = new URLSearchParams();
    params.set('json', json);
    params.set('api_key', w.apiKey);
    params.set('authorization', '');
    params.set('stream-auth-type', 'anonymous');
    params.set('X-Stream-Client', CLIENT);
    const wsBase = this.baseUrl.replace(/^http/, 'ws');
    let ws;
    try {
      ws = new WebSocket(`${wsBase}/connect?${params}`);
    } catch {
      this.unavailable();
      return;
    }
    this.ws = ws;
    ws.onmessage = (m) => this.event(m.data);
    ws.onclose = () => this.unavailable();
    ws.onerror = () => ws.close();
  }

  unavailable() {
    clearInterval(this.ping);
    this.connectionId = null;
    this.say('Chat unavailable — reconnecting…', 'error');
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.connect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  event(raw) {
    let e;
    try {
      e = JSON.parse(raw);
    } catch {
      return;
    }
    if (e.error) {
      this.ws.close();
      return;
    }
    if (e.type === 'health.check' && !this.connectionId && e.connection_id) {
      this.connectionId = e.connection_id;
      this.retryMs = RETRY_MIN_MS;
      this.ping = setInterval(() => {
        this.ws.send(JSON.stringify([{ type: 'health.check', client_id: this.clientId }]));
      }, PING_MS);
      this.load();
      return;
    }
    if (e.cid !== this.watch.chatChannelCid) return;
    if (e.type === 'message.new' && e.message) this.add(e.message);
    if (e.type === 'message.deleted' && e.message) this.remove(e.message.id);
  }

  async load() {
    const [type, id] = this.watch.chatChannelCid.split(':');
    const params = new URLSearchParams({
      user_id: this.userId,
      connection_id: this.connectionId,
      api_key: this.watch.apiKey,
    });
    const url = `${this.baseUrl}/channels/${encodeURIComponent(type)}/${encodeURIComponent(id)}/query?${params}`;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'stream-auth-type': 'anonymous',
          'X-Stream-Client': CLIENT,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ data: {}, state: true, watch: true, presence: false, messages: { limit: 50 } }),
      });
      if (!res.ok) throw new Error(String(res.status));
      const body = await res.json();
      this.list.replaceChildren();
      this.ids.clear();
      for (const m of body.messages || []) this.add(m);
      this.say(this.list.children.length ? '' : 'No messages yet. Chat is read-only for viewers.');
    } catch {
      this.ws.close();
    }
  }

  text(text) {
    const out = [];
    for (const part of String(text || '').split(/(\s+)/)) {
      const url = this.emotes.get(part);
      if (url) out.push(h('img', { class: 'emote', src: url, alt: part, title: part, loading: 'lazy' }));
      else if (part) out.push(part);
    }
    return out;
  }

  add(m) {
    if (!m.id || this.ids.has(m.id) || m.type === 'deleted') return;
    this.ids.add(m.id);
    const who = m.user?.name || m.user?.id || 'someone';
    this.list.append(
      h('li', { 'data-id': m.id }, h('span', { class: 'author' }, who), ' ', h('span', { class: 'text' }, this.text(m.text))),
    );
    while (this.list.children.length > KEEP) {
      this.ids.delete(this.list.firstElementChild.dataset.id);
      this.list.firstElementChild.remove();
    }
    this.say('');
    this.list.scrollTop = this.list.scrollHeight;
  }

  remove(id) {
    this.list.querySelector(`li[data-id="${CSS.escape(id)}"]`)?.remove();
  }
}

export function start(el, baseUrl) {
  if (!el) return;
  new Chat(el, baseUrl).start();
}
