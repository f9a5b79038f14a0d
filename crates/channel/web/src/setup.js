// The set-up wizard: the set-up code and the owner's account, the channel,
// then the provider check (which GetStream variables are missing, or
// provision the call). One step shows at a time; the account is created
// when the second is submitted (setup.complete takes both), which signs the
// owner in. A wrong set-up code takes the wizard back to the first step.

import { mutate } from './trpc.js';
import { busy, fields, notify, pageData } from './ui.js';

const $ = (id) => document.getElementById(id);
const steps = ['step-account', 'step-channel', 'step-provider'];
let account = null;

function go(step) {
  steps.forEach((id, i) => {
    $(id).hidden = i !== step;
    const marker = document.querySelectorAll('.steps li')[i];
    if (i === step) marker.setAttribute('aria-current', 'step');
    else marker.removeAttribute('aria-current');
  });
  $(steps[step]).querySelector('input, button, a')?.focus();
}

$('step-account')?.addEventListener('submit', (e) => {
  e.preventDefault();
  const f = fields(e.currentTarget);
  if (f.password.length < 10) {
    notify('The password needs at least 10 characters', 'error');
    return;
  }
  if (f.password !== f.confirm) {
    notify('The passwords do not match', 'error');
    return;
  }
  account = { code: f.code, email: f.email, password: f.password };
  $('status').hidden = true;
  go(1);
});

$('back')?.addEventListener('click', () => go(0));

$('step-channel')?.addEventListener('submit', (e) => {
  e.preventDefault();
  const f = fields(e.currentTarget);
  busy(e.submitter, async () => {
    try {
      await mutate('setup.complete', { ...account, title: f.title, description: f.description });
    } catch (err) {
      if (err.code === 'UNAUTHORIZED') go(0);
      throw err;
    }
    account = null;
    go(2);
  }, 'Your channel is created and you are signed in.');
});

$('provision')?.addEventListener('click', (e) =>
  busy(e.currentTarget, async () => {
    const p = await mutate('stream.provision');
    $('rtmps-url').textContent = p.rtmpsUrl;
    $('provisioned').hidden = false;
    e.currentTarget?.setAttribute('hidden', '');
  }, 'Streaming is set up.'),
);

// The link keel prints carries the code (`/setup?code=...`): fill it in,
// and keep it out of the address bar and the history.
const given = new URLSearchParams(window.location.search).get('code');
if (given && $('code')) {
  $('code').value = given;
  window.history.replaceState(null, '', window.location.pathname);
}

const state = pageData('setup-state');
if (state.step === 'provider') go(2);
