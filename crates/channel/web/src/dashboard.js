// The owner's dashboard: each section wires its controls to the API; every
// action reports success or the API's message in the status region.

import { post } from './trpc.js';
import { busy } from './ui.js';
import { streamCard } from './dashboard/stream.js';
import { settingsForms } from './dashboard/settings.js';
import { panelsEditor } from './dashboard/panels.js';
import { logoUpload } from './dashboard/logo.js';

document.getElementById('sign-out')?.addEventListener('click', (e) =>
  busy(e.currentTarget, async () => {
    await post('/api/auth/sign-out');
    window.location.assign('/login');
  }),
);

streamCard();
settingsForms();
panelsEditor();
logoUpload();

// The chart library loads once the rest is on screen.
requestAnimationFrame(() =>
  setTimeout(() => import('./dashboard/analytics.js').then((m) => m.analytics()), 0),
);
