// Bundles src/ (Swagger UI from npm's swagger-ui-dist, started on the
// service's own document) into ../assets/docs, as every front end is
// built (scripts/bundle.mjs says how); every service embeds it and serves
// it under /docs. Run `npm ci && npm run build` (scripts/web-assets does
// both); commit the result: `cargo build` needs neither npm nor the
// network.

import { build } from 'esbuild';
import { bundle } from '../../../scripts/bundle.mjs';

await bundle(build, {
  out: new URL('../assets/docs/', import.meta.url).pathname,
  entries: ['docs.js', 'docs.css'],
});
