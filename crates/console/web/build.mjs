// Bundles src/ into ../assets/dist (scripts/bundle.mjs says how). Run
// `npm ci && npm run build` (scripts/web-assets does both); commit the
// result: `cargo build` needs neither npm nor the network.

import { build } from 'esbuild';
import { bundle } from '../../../scripts/bundle.mjs';

await bundle(build, {
  out: new URL('../assets/dist/', import.meta.url).pathname,
  entries: ['console.js', 'console.css'],
});
