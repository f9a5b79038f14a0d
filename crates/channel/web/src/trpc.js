// The channel's own API over tRPC's HTTP protocol (same origin, through the
// web application's /api proxy): queries by GET with ?input=, mutations by
// POST with a JSON body; errors come back in tRPC's envelope.

const meta = document.querySelector('meta[name="trpc-transformer"]');
const superjson = meta?.content === 'superjson';

/** An error the API answered (or the network's), with tRPC's code. */
export class ApiError extends Error {
  constructor(message, code, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

const wrap = (input) => (superjson ? { json: input } : input);
const unwrap = (data) => (superjson && data && typeof data === 'object' ? data.json : data);

async function answer(res, plain) {
  let body;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`The server answered ${res.status}`, 'INTERNAL_SERVER_ERROR', res.status);
  }
  if (body && body.error) {
    // tRPC runs the error shape through the transformer too.
    const error = (plain ? body.error : unwrap(body.error)) || {};
    const data = error.data || {};
    throw new ApiError(error.message || 'Something went wrong', data.code, res.status);
  }
  return plain ? body : unwrap(body?.result?.data);
}

async function send(url, init, plain = false) {
  let res;
  try {
    res = await fetch(url, { credentials: 'same-origin', ...init });
  } catch {
    throw new ApiError('The server could not be reached. Check your connection.', 'NETWORK', 0);
  }
  return answer(res, plain);
}

/** Runs a query; `input` is optional. */
export function query(name, input) {
  let url = `/api/trpc/${name}`;
  if (input !== undefined) {
    url += `?input=${encodeURIComponent(JSON.stringify(wrap(input)))}`;
  }
  return send(url, { headers: { accept: 'application/json' } });
}

/** Runs a mutation; `input` is optional. */
export function mutate(name, input) {
  const init = { method: 'POST', headers: { accept: 'application/json' } };
  if (input !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(wrap(input));
  }
  return send(`/api/trpc/${name}`, init);
}

/** Posts JSON to one of the API's plain routes (sign-in, sign-out). */
export function post(path, body) {
  const init = { method: 'POST', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  return send(path, init, true);
}

/** Sends a multipart form to one of the API's plain routes (the logo). */
export function upload(path, form) {
  return send(path, { method: 'POST', headers: { accept: 'application/json' }, body: form }, true);
}
