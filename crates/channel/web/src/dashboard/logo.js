// Logo upload with a preview of the chosen file before it is sent.

import { upload } from '../trpc.js';
import { busy, notify } from '../ui.js';

export function logoUpload() {
  const file = document.getElementById('logo-file');
  const preview = document.getElementById('logo-preview');
  const form = document.getElementById('logo-form');
  if (!file || !form) return;
  file.addEventListener('change', () => {
    const f = file.files?.[0];
    if (!f) return;
    if (f.size > 2 * 1024 * 1024) notify('The image is larger than 2 MiB', 'error');
    preview.src = URL.createObjectURL(f);
    preview.hidden = false;
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = file.files?.[0];
    if (!f) {
      notify('Choose an image first', 'error');
      return;
    }
    const data = new FormData();
    data.append('file', f);
    busy(e.submitter, async () => {
      const r = await upload('/api/upload/logo', data);
      preview.src = r.logoUrl;
      document.querySelectorAll('img.site-logo').forEach((img) => {
        img.src = r.logoUrl;
      });
    }, 'Logo uploaded');
  });
}
