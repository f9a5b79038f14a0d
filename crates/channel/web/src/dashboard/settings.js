// The channel's title, description and social links, and the profile.

import { mutate } from '../trpc.js';
import { busy, fields } from '../ui.js';

/** "Label https://url" per line → [{label, url}]. */
function socialLinks(text) {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.lastIndexOf(' ');
      return at < 0 ? { label: line, url: line } : { label: line.slice(0, at).trim(), url: line.slice(at + 1) };
    });
}

const orNull = (v) => (v === '' ? null : v);

export function settingsForms() {
  const channel = document.getElementById('channel-form');
  channel?.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = fields(channel);
    busy(e.submitter, () =>
      mutate('channel.update', {
        title: f.title,
        description: f.description,
        socialLinks: socialLinks(f.socialLinks || ''),
      }),
      'Channel saved',
    );
  });
  const profile = document.getElementById('profile-form');
  profile?.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = fields(profile);
    busy(e.submitter, () =>
      mutate('profile.update', {
        displayName: f.displayName,
        bio: f.bio,
        avatarUrl: orNull(f.avatarUrl),
        location: orNull(f.location),
      }),
      'Profile saved',
    );
  });
}
