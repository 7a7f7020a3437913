/**
 * `examples/ship-ndjson-gzip.sh` run as a user would (sh, gzip and curl)
 * against a real logkeep on both backends: the good lines are stored, the
 * bad one is reported by its line index.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { queryAllPages } from '../support/logs.js';

const run = promisify(execFile);
const EXAMPLE = 'examples/ship-ndjson-gzip.sh';

describeEachBackend('example: ship-ndjson-gzip.sh', (backend) => {
  let svc: RunningService;
  let dir: string;
  before(async () => {
    svc = await startService(backend);
    dir = mkdtempSync(join(tmpdir(), 'logkeep-ndjson-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await svc.stop({ dropDatabase: true });
  });

  it('ships a gzip-compressed NDJSON file with curl; good lines are stored, a bad one is rejected by its index', async () => {
    const admin = await signInAdmin(svc.url);
    const projectId = await createProject(svc.url, admin.token, await createGroup(svc.url, admin.token, 'ndjson'), 'ndjson');
    const { secret } = await createKey(svc.url, admin.token, projectId);
    const file = join(dir, 'app.ndjson');
    writeFileSync(
      file,
      `${[
        JSON.stringify({ level: 'info', event: 'first line', timestamp: '2025-06-01T12:00:00Z', request_id: 'req-1' }),
        '{"level": "info", "event": "not closed"',
        '',
        JSON.stringify({ level: 'error', event: 'third line', timestamp: '2025-06-01T12:00:01Z', request_id: 'req-1' }),
      ].join('\n')}\n`,
    );
    const { stdout } = await run('sh', [EXAMPLE, file], { env: { ...process.env, LOGKEEP_URL: svc.url, LOGKEEP_KEY: secret } });
    const answer = JSON.parse(stdout);
    assert.equal(answer.accepted, 2);
    assert.deepEqual(
      answer.rejected.map((r: { index: number; error: string }) => [r.index, r.error]),
      [[1, 'validation_error']],
    );
    const { items } = await queryAllPages(
      svc.url,
      admin.token,
      [
        ['project_id', String(projectId)],
        ['request_id', 'req-1'],
      ],
      50,
    );
    assert.deepEqual(items.map((e: { event: string }) => e.event).sort(), ['first line', 'third line']);
  });
});
