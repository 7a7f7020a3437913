/**
 * examples/ship-logs.ts, run for real against a logkeep on a SQLite file:
 * every simulated request's two entries arrive, queryable by their
 * correlation fields and level.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../examples/ship-logs.js';
import { startService, type RunningService } from '../support/service.js';
import { queryAllPages } from '../support/logs.js';
import { newProject } from '../client/client-support.js';

describe('example: ship logs', () => {
  let svc: RunningService;
  before(async () => {
    svc = await startService('file');
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('delivers every entry on close', async () => {
    const project = await newProject(svc.url, 'shipped');
    const stats = await main({ url: svc.url, secretKey: project.secret, requests: 20 });
    assert.deepEqual([stats.accepted, stats.rejected, stats.failed, stats.dropped, stats.buffered], [40, 0, 0, 0, 0]);

    const scope: [string, string][] = [['project_id', String(project.projectId)]];
    const all = (await queryAllPages(svc.url, project.admin.token, scope, 200)).items;
    assert.equal(all.length, 40);
    const requestId = all[0].request_id;
    const oneRequest = (await queryAllPages(svc.url, project.admin.token, [...scope, ['request_id', requestId]], 200)).items;
    assert.deepEqual(oneRequest.map((e) => e.event).sort(), ['request finished', 'request started']);
    const errors = (await queryAllPages(svc.url, project.admin.token, [...scope, ['level', 'error']], 200)).items;
    assert.deepEqual(
      errors.map((e) => e.status),
      [500, 500],
    );
  });
});
