// Checks the services' OpenAPI documents as a user's tooling would:
//   node check.mjs <dir with <service>.json files>
// 1. each document validates (swagger-parser: OpenAPI 3.1's schema);
// 2. each passes redocly's recommended rules with no error;
// 3. a TypeScript client is generated from each (openapi-typescript) into
//    ./generated, and ./flows.ts, written against those types, compiles
//    (tsc), so a document change that breaks a generated client fails;
// 4. the flows run against the live services (URLs and credentials in the
//    environment: see flows.ts).
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';

const dir = process.argv[2];
const here = new URL('.', import.meta.url).pathname;
const docs = readdirSync(dir).filter((f) => f.endsWith('.json'));
if (docs.length === 0) throw new Error(`no documents in ${dir}`);

const run = (what, args) => {
  try {
    return execFileSync(process.execPath, args, { cwd: here, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    throw new Error(`${what} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
};

for (const doc of docs) {
  const file = join(dir, doc);
  await SwaggerParser.validate(file);
  run(`redocly lint ${doc}`, [
    'node_modules/@redocly/cli/bin/cli.js', 'lint', '--extends', 'recommended', file,
  ]);
  const service = doc.replace(/\.json$/, '');
  run(`openapi-typescript ${doc}`, [
    'node_modules/openapi-typescript/bin/cli.js', file, '-o', `generated/${service}.ts`,
  ]);
  console.log(`${doc}: valid (swagger-parser), no redocly error, client generated`);
}
run('tsc', ['node_modules/typescript/bin/tsc', '-p', '.']);
console.log(run('the flows', ['build/flows.js']).trim());
