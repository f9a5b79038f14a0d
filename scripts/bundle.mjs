// The web build both front ends share (crates/channel/web and
// crates/console/web call it from their build.mjs with their own esbuild):
// src/ entries bundled into `out` with content-hashed names, a manifest
// the server reads (entry → file), gzip and brotli variants of every file,
// and the licences of the bundled packages. Commit the result: `cargo
// build` needs neither npm nor the network.

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, rmSync, mkdirSync, readdirSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

export async function bundle(build, { out, entries }) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  const result = await build({
    entryPoints: entries.map((e) => `src/${e}`),
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    target: 'es2020',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });

  const manifest = {};
  const packages = new Set();
  for (const [file, meta] of Object.entries(result.metafile.outputs)) {
    if (meta.entryPoint) manifest[basename(meta.entryPoint)] = basename(file);
    for (const input of Object.keys(meta.inputs)) {
      const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
      if (m) packages.add(m[1]);
    }
  }
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  let licences = 'Third-party code bundled into these files, with its licence.\n';
  for (const name of [...packages].sort()) {
    const dir = `node_modules/${name}`;
    const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
    const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
    licences += `\n==== ${name} ${pkg.version} (${pkg.license}) ====\n\n`;
    licences += file ? readFileSync(join(dir, file), 'utf8') : `${pkg.license}\n`;
    // An Apache-2.0 package's NOTICE goes with its licence.
    const notice = readdirSync(dir).find((f) => /^notice/i.test(f));
    if (notice) licences += `\n${readFileSync(join(dir, notice), 'utf8')}`;
  }
  writeFileSync(join(out, 'LICENSES.txt'), licences);

  for (const file of readdirSync(out)) {
    if (!/\.(js|css|txt)$/.test(file)) continue;
    const body = readFileSync(join(out, file));
    writeFileSync(join(out, `${file}.gz`), gzipSync(body, { level: 9 }));
    writeFileSync(
      join(out, `${file}.br`),
      brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
  }

  const sizes = readdirSync(out)
    .filter((f) => existsSync(join(out, `${f}.br`)))
    .map((f) => `${f} ${readFileSync(join(out, f)).length} B (br ${readFileSync(join(out, `${f}.br`)).length} B, gz ${readFileSync(join(out, `${f}.gz`)).length} B)`);
  console.log(sizes.join('\n'));
  console.log(createHash('sha256').update(JSON.stringify(manifest)).digest('hex').slice(0, 12), 'manifest');
}
