/**
 * examples/pino-app.ts, run for real against a logkeep on a SQLite file:
 * closing the transport delivers every entry, with pino's fields mapped.
 * pino loads `logkeep/pino` by its package name, so this needs `npm run build`.
 * The example runs in a process of its own, as an application would: ending
 * a pino transport blocks its thread until the worker has delivered, which
 * would stall a service running in the same thread.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { PinoAppOptions } from '../../examples/pino-app.js';
import { startService, type RunningService } from '../support/service.js';
import { queryAllPages } from '../support/logs.js';
import { newProject } from '../client/client-support.js';

describe('example: a pino application', () => {
  let svc: RunningService;
  before(async () => {
    svc = await startService('file');
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('delivers every entry when the transport closes', async () => {
    const project = await newProject(svc.url, 'pino-app');
    const options: PinoAppOptions = { url: svc.url, secretKey: project.secret };
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/pino-app.ts'], {
      env: { ...process.env, LOGKEEP_URL: options.url, LOGKEEP_KEY: options.secretKey },
    });

    const scope: [string, string][] = [['project_id', String(project.projectId)]];
    const all = (await queryAllPages(svc.url, project.admin.token, scope, 200)).items;
    assert.equal(all.length, 20);
    assert.ok(all.every((e) => e.logger === 'http' && typeof e.request_id === 'string'));
    const requestId = all[0].request_id;
    const oneRequest = (await queryAllPages(svc.url, project.admin.token, [...scope, ['request_id', requestId]], 200)).items;
    assert.equal(oneRequest.length, 2);
    const errors = (await queryAllPages(svc.url, project.admin.token, [...scope, ['level', 'error']], 200)).items;
    assert.deepEqual(
      errors.map((e) => [e.event, e.status]),
      [
        ['request failed', 500],
        ['request failed', 500],
      ],
    );
  });
});
