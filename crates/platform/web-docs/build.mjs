// Copies Swagger UI's distribution (the bundle and its stylesheet, with its
// licence) and keel's own page script into ../assets/docs, with brotli
// variants; every service embeds them and serves them under /docs. Run
// `npm ci && npm run build` (scripts/web-assets does both); commit the
// result: `cargo build` needs neither npm nor the network.

import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';

const out = new URL('../assets/docs/', import.meta.url).pathname;
const dist = 'node_modules/swagger-ui-dist';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) copyFileSync(join(dist, file), join(out, file));
copyFileSync('init.js', join(out, 'init.js'));
const pkg = JSON.parse(readFileSync(join(dist, 'package.json'), 'utf8'));
writeFileSync(
  join(out, 'LICENSES.txt'),
  `swagger-ui-dist ${pkg.version} (${pkg.license})\n\n${readFileSync(join(dist, 'LICENSE'), 'utf8')}\n${readFileSync(join(dist, 'NOTICE'), 'utf8')}`,
);
for (const file of readdirSync(out)) {
  const body = readFileSync(join(out, file));
  writeFileSync(
    join(out, `${file}.br`),
    brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
  );
}
console.log(`Swagger UI ${pkg.version} copied to ${out}`);
