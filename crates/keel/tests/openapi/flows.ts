// One real flow per service, through clients generated from the services'
// own /openapi.json (openapi-typescript types, openapi-fetch calls). The
// flows are type-checked against the generated types first (`tsc`), so a
// document change that breaks a generated client fails here.
import createClient from 'openapi-fetch';
import type { paths as Accounts } from './generated/accounts.js';
import type { paths as UsageAlerts } from './generated/usage-alerts.js';
import type { paths as Svc } from './generated/svc.js';
import type { paths as ChannelApi } from './generated/channel-api.js';

declare const process: { env: Record<string, string | undefined> };

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Error(`failed: ${what}`);
}

async function accounts(): Promise<string> {
  const api = createClient<Accounts>({ baseUrl: env('ACCOUNTS_URL') });
  const name = `gen${Date.now() % 1000000}`;
  const reg = await api.POST('/auth/register', {
    body: { username: name, email: `${name}@example.com`, password: 'correct horse battery' },
  });
  check(reg.data?.accessToken, `register: ${JSON.stringify(reg.error)}`);
  const login = await api.POST('/auth/login', {
    body: { login: name, password: 'correct horse battery' },
  });
  const token = login.data?.accessToken;
  check(token, `login: ${JSON.stringify(login.error)}`);
  const auth = { headers: { Authorization: `Bearer ${token}` } };
  const me = await api.GET('/account', auth);
  check(me.data?.user.username === name, `account: ${JSON.stringify(me.data ?? me.error)}`);
  const renamed = await api.PUT('/account/change-username', {
    ...auth,
    body: { username: `${name}x` },
  });
  check(renamed.response.ok, `change username: ${JSON.stringify(renamed.error)}`);
  const goal = await api.POST('/goals/weekly', { ...auth, body: { title: 'Ship it' } });
  const id = goal.data?.goal._id;
  check(id, `create goal: ${JSON.stringify(goal.error)}`);
  const done = await api.PUT('/goals/weekly/{goal_id}/complete', {
    ...auth,
    params: { path: { goal_id: id } },
  });
  check(done.data?.isCompleted === true, `complete: ${JSON.stringify(done.data ?? done.error)}`);
  const list = await api.GET('/goals/weekly', auth);
  check(list.data?.goals.length === 1, `list: ${JSON.stringify(list.data ?? list.error)}`);
  const bad = await api.GET('/account', { headers: { Authorization: 'Bearer nope' } });
  check(bad.response.status === 401 && bad.error?.code === 'UNAUTHORIZED', 'a bad token is 401');
  return 'accounts: register, login, account, username, weekly goal created, completed, listed';
}

async function usageAlerts(): Promise<string> {
  const api = createClient<UsageAlerts>({ baseUrl: env('USAGE_ALERTS_URL') });
  const auth = { headers: { Authorization: 'Bearer generated-client-user' } };
  const ev = await api.POST('/event', {
    ...auth,
    body: {
      sessionId: 's1', timestamp: '2026-11-25T10:00:00Z', model: 'm', inputTokens: 10,
      outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, costUSD: 0.25,
    },
  });
  check(ev.data?.success === true, `event: ${JSON.stringify(ev.error)}`);
  const history = await api.GET('/history', { ...auth, params: { query: { limit: 10, offset: 0 } } });
  check(history.data?.events.length === 1 && history.data.limit === 10, `history: ${JSON.stringify(history.data ?? history.error)}`);
  const prefs = await api.POST('/preferences', {
    ...auth,
    body: { thresholds: [{ id: 't1', type: 'daily_cost', value: 3, isEnabled: true }] },
  });
  check(prefs.data?.preferences.thresholds.length === 1, `preferences: ${JSON.stringify(prefs.error)}`);
  const dev = await api.POST('/register', {
    ...auth,
    body: { device_token: 'a'.repeat(64), platform: 'ios', sandbox: true },
  });
  check(dev.data?.success === true, `register: ${JSON.stringify(dev.error)}`);
  const devices = await api.GET('/device', auth);
  check(devices.data?.devices.length === 1, `devices: ${JSON.stringify(devices.data ?? devices.error)}`);
  const missing = await api.POST('/event', { ...auth, body: {} as never });
  check(missing.response.status === 400 && typeof missing.error?.error === 'string', 'a missing field is 400');
  return 'usage-alerts: event, history page, preferences, device registered and listed';
}

async function svc(): Promise<string> {
  const api = createClient<Svc>({ baseUrl: env('SVC_ORIGIN') });
  const appCheck = { headers: { 'X-Vendor-AppCheck': env('APPCHECK_TOKEN') } };
  const form = env('FORM_ID');
  const fields = await api.GET('/svc/v1/forms/{form_id}/fields', {
    ...appCheck,
    params: { path: { form_id: form } },
  });
  check(fields.data?.fields.length, `fields: ${JSON.stringify(fields.error)}`);
  const sent = await api.POST('/svc/v1/submit/{form_id}', {
    ...appCheck,
    params: { path: { form_id: form } },
    body: { fields: { name: 'Ada' } },
  });
  check(sent.data?.success === true, `submit: ${JSON.stringify(sent.error)}`);
  const token = 'ExponentPushToken[generated-client]';
  const reg = await api.POST('/svc/v1/register', {
    ...appCheck,
    body: { push_token: token, device_type: 'ios' },
  });
  check(reg.data?.success === true, `register: ${JSON.stringify(reg.error)}`);
  const status = await api.GET('/svc/v1/register/status', { params: { query: { push_token: token } } });
  check(status.data?.registered === true, `status: ${JSON.stringify(status.data ?? status.error)}`);
  const basic = btoa(`${env('ADMIN_USER')}:${env('ADMIN_APP_PASSWORD')}`);
  const admin = { headers: { Authorization: `Basic ${basic}` } };
  const list = await api.GET('/svc/v1/admin/forms/{form_id}/submissions', {
    ...admin,
    params: { path: { form_id: form }, query: { page: 1, per_page: 10 } },
  });
  check(list.data?.submissions.length === 1, `submissions: ${JSON.stringify(list.data ?? list.error)}`);
  const refused = await api.GET('/svc/v1/admin/forms', {});
  check(refused.response.status === 401 && refused.error?.code === 'rest_not_logged_in', 'no credentials is 401');
  return 'svc: fields, submit, register, status, the admin submissions list';
}

async function channelApi(): Promise<string> {
  const api = createClient<ChannelApi>({ baseUrl: env('CHANNEL_API_URL') });
  const live = await api.GET('/api/trpc/stream.isLive');
  check(live.data?.result.data.isLive === false, `isLive: ${JSON.stringify(live.data ?? live.error)}`);
  const status = await api.GET('/api/trpc/setup.status');
  check(status.data?.result.data.needsSetup === true, `setup.status: ${JSON.stringify(status.error)}`);
  const setup = await api.POST('/api/trpc/setup.complete', {
    body: { code: env('SETUP_CODE'), email: 'o@example.com', password: 'correct horse battery', title: 'Generated' },
  });
  check(setup.data?.result.data.signedIn === true, `setup.complete: ${JSON.stringify(setup.error)}`);
  const info = await api.GET('/api/trpc/channel.getInfo');
  check(info.data?.result.data.title === 'Generated', `getInfo: ${JSON.stringify(info.data ?? info.error)}`);
  const denied = await api.GET('/api/trpc/stream.credentials');
  check(denied.response.status === 401 && denied.error?.error.data.code === 'UNAUTHORIZED', 'owner-only is 401');
  return 'channel-api: isLive, setup.status, setup.complete, getInfo, an owner-only procedure refused';
}

for (const flow of [accounts, usageAlerts, svc, channelApi]) {
  console.log(await flow());
}
