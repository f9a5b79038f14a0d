// The real @trpc/client against channel-api: every HTTP link, with the
// transformer the server was started with. Exits non-zero naming the first
// expectation that failed.
//
//   node client.mjs <channel-api base URL> <json|superjson> <set-up code>
import assert from 'node:assert/strict';
import {
  createTRPCClient,
  httpBatchLink,
  httpBatchStreamLink,
  httpLink,
  TRPCClientError,
} from '@trpc/client';
import superjson from 'superjson';

const [base, mode, setupCode] = process.argv.slice(2);
const url = `${base}/api/trpc`;
const transformer = mode === 'superjson' ? superjson : undefined;
const links = { httpLink, httpBatchLink, httpBatchStreamLink };

let cookie = '';
/** fetch that keeps the session cookie the API sets (Node keeps none). */
async function fetchKeepingCookie(input, init) {
  const res = await fetch(input, init);
  const set = res.headers.get('set-cookie');
  if (set) cookie = set.split(';')[0];
  return res;
}

function client(link, headers = {}) {
  return createTRPCClient({
    links: [
      links[link]({
        url,
        transformer,
        fetch: fetchKeepingCookie,
        headers: () => (cookie ? { ...headers, cookie } : headers),
      }),
    ],
  });
}

/** The TRPCClientError `promise` rejects with; its code and status. */
async function failure(promise, what) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof TRPCClientError, `${what}: not a TRPCClientError: ${e}`);
    assert.ok(e.data, `${what}: no data in ${JSON.stringify(e.shape ?? e.message)}`);
    return { code: e.data.code, httpStatus: e.data.httpStatus, message: e.message };
  }
  assert.fail(`${what}: succeeded`);
}

async function expectError(promise, code, httpStatus, what) {
  const got = await failure(promise, what);
  assert.deepEqual([got.code, got.httpStatus], [code, httpStatus], `${what}: ${got.message}`);
}

const account = (code) => ({
  code,
  email: 'owner@example.com',
  password: 'correct horse battery',
  title: 'Client test',
});

const checked = [];
for (const link of Object.keys(links)) {
  const c = client(link);
  const what = (s) => `${link}/${mode}: ${s}`;
  const live = await c.stream.isLive.query();
  assert.deepEqual(live, { isLive: false, liveStartedAt: null, viewerCount: 0 }, what('isLive'));

  // A batch with mixed outcomes (one request for the batching links).
  const [isLive, status, missing, ownerOnly] = await Promise.allSettled([
    c.stream.isLive.query(),
    c.setup.status.query(),
    c.no.such.procedure.query(),
    c.stream.credentials.query(),
  ]);
  assert.equal(isLive.status, 'fulfilled', what('batch isLive'));
  assert.equal(status.value?.needsSetup, true, what('batch setup.status'));
  for (const [r, code, st] of [
    [missing, 'NOT_FOUND', 404],
    [ownerOnly, 'UNAUTHORIZED', 401],
  ]) {
    assert.equal(r.status, 'rejected', what(`batch ${code}`));
    assert.ok(r.reason instanceof TRPCClientError, what(`batch ${code} type`));
    assert.deepEqual([r.reason.data?.code, r.reason.data?.httpStatus], [code, st], what(`batch ${code}`));
  }

  await expectError(c.stream.isLive.mutate(), 'METHOD_NOT_SUPPORTED', 405, what('a query as a mutation'));
  await expectError(
    c.setup.complete.mutate({ ...account(setupCode), email: 'not an email' }),
    'BAD_REQUEST', 400, what('a bad field'),
  );
  await expectError(c.setup.complete.mutate(account('WRONG-CODE')), 'UNAUTHORIZED', 401, what('a wrong set-up code'));
  await expectError(
    client(link, { origin: 'https://evil.example' }).setup.complete.mutate(account(setupCode)),
    'FORBIDDEN', 403, what('a cross-site mutation'),
  );
  await expectError(c.stream.viewerToken.query(), 'PRECONDITION_FAILED', 412, what('not provisioned'));
  await expectError(
    c.setup.complete.mutate({ ...account(setupCode), description: 'x'.repeat(2 * 1024 * 1024) }),
    'PAYLOAD_TOO_LARGE', 413, what('a body over the limit'),
  );
  checked.push(link);
}

// Set-up through the streaming link: the session cookie comes back with the
// stream's head, and owner procedures then see the owner.
const stream = client('httpBatchStreamLink');
const done = await stream.setup.complete.mutate(account(setupCode));
assert.deepEqual(done, { signedIn: true }, 'set-up through httpBatchStreamLink');
assert.ok(cookie.startsWith('channel_session='), `the session cookie: ${cookie}`);
await expectError(stream.stream.credentials.query(), 'PRECONDITION_FAILED', 412, 'signed in, not provisioned');
await expectError(stream.setup.complete.mutate(account(setupCode)), 'CONFLICT', 409, 'set-up twice');

// Asking again and again: 429 (the server allows few viewer tokens).
let limited;
for (let i = 0; i < 20 && !limited; i++) {
  const got = await failure(client('httpBatchLink').stream.viewerToken.query(), 'viewerToken');
  if (got.code === 'TOO_MANY_REQUESTS') limited = got;
}
assert.deepEqual([limited?.code, limited?.httpStatus], ['TOO_MANY_REQUESTS', 429], 'rate limited');

console.log(JSON.stringify({ mode, links: checked, ok: true }));
