// The database-bound peer: what a team would write instead of keel's
// usage-alerts POST /event and GET /history, in Node with Fastify and
// node-postgres or better-sqlite3, running the statements keel runs on a
// database keel migrated (the same tables and indexes). Development-mode
// identity as keel's (the user is "dev-" + the first 32 hex digits of the
// bearer token's SHA-256). One process, as such a service usually runs.
//   node server.mjs PORT postgres://...   or   node server.mjs PORT /path/keel.db
import crypto from 'node:crypto';
import Fastify from 'fastify';

const [port, target] = process.argv.slice(2);
const REQUIRED = ['sessionId', 'timestamp', 'model', 'inputTokens', 'outputTokens',
  'cacheReadTokens', 'cacheWriteTokens', 'costUSD'];
const TOKENS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'];

function userOf(req) {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization || '');
  if (!m) return null;
  return 'dev-' + crypto.createHash('sha256').update(m[1]).digest('hex').slice(0, 32);
}

function invalid(b) {
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return 'Request body must be a JSON object';
  for (const f of REQUIRED) {
    const v = b[f];
    if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) {
      return `Missing required field: ${f}`;
    }
  }
  for (const f of TOKENS) {
    if (!Number.isInteger(b[f]) || b[f] < 0 || b[f] > 1e9) return `Invalid field: ${f} must be a whole number from 0 to 1000000000`;
  }
  if (typeof b.costUSD !== 'number' || b.costUSD < 0 || b.costUSD > 1e6) return 'Invalid field: costUSD must be a number from 0 to 1000000';
  if (Number.isNaN(Date.parse(b.timestamp))) return 'Invalid field: timestamp is not ISO 8601';
  for (const f of ['sessionId', 'model']) {
    if (typeof b[f] !== 'string' || b[f].length > 255) return `Invalid field: ${f} must be a string of at most 255 characters`;
  }
  return null;
}

const event = (r) => ({
  id: r.id, userId: r.user_id, sessionId: r.session_id, timestamp: r.timestamp, model: r.model,
  inputTokens: Number(r.input_tokens), outputTokens: Number(r.output_tokens),
  cacheReadTokens: Number(r.cache_read_tokens), cacheWriteTokens: Number(r.cache_write_tokens),
  costUSD: r.cost_usd, createdAt: new Date(r.created_at).toISOString(),
});

const HISTORY = `SELECT id, user_id, session_id, timestamp, model, input_tokens, output_tokens,
  cache_read_tokens, cache_write_tokens, cost_usd, created_at FROM ua_events
  WHERE user_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`;

async function postgresStore(url) {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 16 });
  return {
    async record(user, b, day) {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        await c.query(`INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens,
          output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())`,
        [crypto.randomUUID(), user, b.sessionId, b.timestamp, b.model, b.inputTokens, b.outputTokens,
          b.cacheReadTokens, b.cacheWriteTokens, b.costUSD]);
        const fresh = await c.query(`INSERT INTO ua_day_sessions (user_id, day, session_id) VALUES ($1, $2, $3)
          ON CONFLICT DO NOTHING`, [user, day, b.sessionId]);
        const tokens = b.inputTokens + b.outputTokens + b.cacheReadTokens + b.cacheWriteTokens;
        const total = await c.query(`INSERT INTO ua_daily_totals (user_id, day, cost_usd, tokens, sessions, events)
          VALUES ($1, $2, $3, $4, $5, 1)
          ON CONFLICT (user_id, day) DO UPDATE SET cost_usd = ua_daily_totals.cost_usd + excluded.cost_usd,
            tokens = ua_daily_totals.tokens + excluded.tokens,
            sessions = ua_daily_totals.sessions + excluded.sessions, events = ua_daily_totals.events + 1
          RETURNING cost_usd`, [user, day, b.costUSD, tokens, fresh.rowCount]);
        await c.query('SELECT thresholds FROM ua_preferences WHERE user_id = $1', [user]);
        await c.query('COMMIT');
        return total.rows[0].cost_usd;
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        c.release();
      }
    },
    async history(user, limit, offset) {
      return (await pool.query(HISTORY, [user, limit, offset])).rows.map(event);
    },
  };
}

async function sqliteStore(path) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const insert = db.prepare(`INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens,
    output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const session = db.prepare('INSERT INTO ua_day_sessions (user_id, day, session_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
  const upsert = db.prepare(`INSERT INTO ua_daily_totals (user_id, day, cost_usd, tokens, sessions, events)
    VALUES (?, ?, ?, ?, ?, 1)
    ON CONFLICT (user_id, day) DO UPDATE SET cost_usd = ua_daily_totals.cost_usd + excluded.cost_usd,
      tokens = ua_daily_totals.tokens + excluded.tokens,
      sessions = ua_daily_totals.sessions + excluded.sessions, events = ua_daily_totals.events + 1
    RETURNING cost_usd`);
  const prefs = db.prepare('SELECT thresholds FROM ua_preferences WHERE user_id = ?');
  const page = db.prepare(HISTORY.replace('$1', '?').replace('$2', '?').replace('$3', '?'));
  const record = db.transaction((user, b, day) => {
    insert.run(crypto.randomUUID(), user, b.sessionId, b.timestamp, b.model, b.inputTokens, b.outputTokens,
      b.cacheReadTokens, b.cacheWriteTokens, b.costUSD, new Date().toISOString());
    const fresh = session.run(user, day, b.sessionId).changes;
    const tokens = b.inputTokens + b.outputTokens + b.cacheReadTokens + b.cacheWriteTokens;
    const total = upsert.get(user, day, b.costUSD, tokens, fresh);
    prefs.get(user);
    return total.cost_usd;
  });
  return {
    async record(user, b, day) { return record.immediate(user, b, day); },
    async history(user, limit, offset) { return page.all(user, limit, offset).map(event); },
  };
}

const store = target.startsWith('postgres') ? await postgresStore(target) : await sqliteStore(target);
const app = Fastify({ logger: false });

app.post('/event', async (req, reply) => {
  const user = userOf(req);
  if (!user) return reply.code(401).send({ error: 'Unauthorized' });
  const problem = invalid(req.body);
  if (problem) return reply.code(400).send({ error: problem });
  const totalCost = await store.record(user, req.body, new Date().toISOString().slice(0, 10));
  return { success: true, summary: { totalCost } };
});

app.get('/history', async (req, reply) => {
  const user = userOf(req);
  if (!user) return reply.code(401).send({ error: 'Unauthorized' });
  const limit = Math.min(Number.parseInt(req.query.limit ?? '50', 10), 500);
  const offset = Number.parseInt(req.query.offset ?? '0', 10);
  if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0 || offset > 1e9) {
    return reply.code(400).send({ error: 'Invalid field: limit or offset' });
  }
  return { events: await store.history(user, limit, offset), limit, offset };
});

app.get('/healthz', async () => 'ok');

await app.listen({ port: Number(port), host: '127.0.0.1' });
