// The service as `logkeep serve` starts it, from source, with the console
// read again from disk after every rebuild. Started by scripts/dev.mjs.
import { readFileSync } from 'node:fs';
import { resolveInvocation } from '../lib/config-resolve.js';
import { serve } from '../bin/serve.js';

const invocation = resolveInvocation(process.argv.slice(2), process.env, (path) => readFileSync(path, 'utf8'));
if (invocation.action !== 'serve') {
  process.stderr.write(
    `npm run dev starts the service only; ${invocation.action === 'invalid' ? invocation.problems.join('; ') : `not ${invocation.action}`}\n`,
  );
  process.exit(78);
}
await serve(invocation, { console: { reload: true } });
