/**
 * examples/otel-sdk-app.ts, run for real against a logkeep on a SQLite
 * file: every record the SDK exports arrives, with the documented mapping.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../examples/otel-sdk-app.js';
import { startService, type RunningService } from '../support/service.js';
import { queryAllPages } from '../support/logs.js';
import { newProject } from '../client/client-support.js';

describe('example: an OpenTelemetry SDK application', () => {
  let svc: RunningService;
  before(async () => {
    svc = await startService('file');
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('delivers every record on shutdown, found by resource and correlation fields', async () => {
    const project = await newProject(svc.url, 'otel-app');
    await main({ url: svc.url, secretKey: project.secret, requests: 10 });

    const scope: [string, string][] = [['project_id', String(project.projectId)]];
    const all = (await queryAllPages(svc.url, project.admin.token, [...scope, ['context.resource.service.name', 'shop']], 200)).items;
    assert.equal(all.length, 10);
    assert.ok(all.every((e) => e.logger === 'http' && e.event === 'request finished' && typeof e.request_id === 'string'));
    const errors = (await queryAllPages(svc.url, project.admin.token, [...scope, ['level', 'error']], 200)).items;
    assert.deepEqual(
      errors.map((e) => e.attributes.http.status_code),
      [500, 500],
    );
  });
});
