// The Node peer of keel's channel-api for bench/run: tRPC v11's standalone
// HTTP server answering stream.isLive from memory, as keel answers it
// (from a snapshot), with the same shape.
//   node server.mjs PORT
import { initTRPC } from '@trpc/server';
import { createHTTPServer } from '@trpc/server/adapters/standalone';

const t = initTRPC.create();
const live = { isLive: false, liveStartedAt: null, viewerCount: 0 };
const router = t.router({
  stream: t.router({
    isLive: t.procedure.query(() => live),
  }),
});
const port = Number(process.argv[2] || 3999);
createHTTPServer({ router }).listen(port, '127.0.0.1', () => {
  console.log(`node-peer http://127.0.0.1:${port}`);
});
