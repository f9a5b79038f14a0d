// Sign-in: the API sets the session cookie; then on to the dashboard.

import { post } from './trpc.js';
import { busy, fields } from './ui.js';

const form = document.getElementById('login-form');
form?.addEventListener('submit', (e) => {
  e.preventDefault();
  const f = fields(form);
  busy(e.submitter, async () => {
    await post('/api/auth/sign-in', { email: f.email, password: f.password });
    window.location.assign('/dashboard');
  });
});
