// HLS playback: the browser's own where it has it (Safari, iOS), hls.js
// (Media Source Extensions) elsewhere, loaded only then. This module itself
// is loaded only when the channel is live.

const RETRY_MS = 5000;

export class Player {
  constructor(video, note) {
    this.video = video;
    this.note = note;
    this.hls = null;
    this.retry = null;
  }

  async play(url) {
    this.url = url;
    const v = this.video;
    v.muted = true;
    if (v.canPlayType('application/vnd.apple.mpegurl')) {
      v.src = url;
      v.addEventListener('playing', () => this.playing(), { once: true });
      v.play().catch(() => {});
      return;
    }
    const { default: Hls } = await import('hls.js/light');
    if (!Hls.isSupported()) {
      this.note.textContent = 'This browser cannot play the stream.';
      return;
    }
    this.Hls = Hls;
    this.attach();
  }

  attach() {
    const Hls = this.Hls;
    this.hls?.destroy();
    const hls = new Hls({ lowLatencyMode: true, liveDurationInfinity: true });
    this.hls = hls;
    hls.on(Hls.Events.MANIFEST_PARSED, () => {
      this.video.play().catch(() => {});
    });
    hls.on(Hls.Events.FRAG_BUFFERED, () => this.playing());
    hls.on(Hls.Events.ERROR, (_event, data) => {
      if (!data.fatal) return;
      this.note.hidden = false;
      this.note.textContent = 'Waiting for the video…';
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.attach(), RETRY_MS);
    });
    hls.loadSource(this.url);
    hls.attachMedia(this.video);
  }

  playing() {
    this.note.hidden = true;
  }

  stop() {
    clearTimeout(this.retry);
    this.hls?.destroy();
    this.hls = null;
    this.video.removeAttribute('src');
    this.video.load();
    this.note.hidden = false;
  }
}
