/**
 * Answers that carry what a credential may read are never kept by a cache
 * on the way (a shared proxy, the browser's disk): every route that takes
 * credentials answers `Cache-Control: no-store`, refusals included; the
 * token endpoint adds `Pragma: no-cache`; the live stream keeps its own
 * `no-cache`; public answers are left as they are.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus, createGroup, createProject } from '../support/actors.js';

describeEachBackend('Cache-Control on authenticated answers', (backend) => {
  let project: number;
  const app = serviceWithAdmin(backend);
  before(async () => {
    project = await createProject(app.url, app.admin.token, await createGroup(app.url, app.admin.token, `g-${backend}`), `p-${backend}`);
  });

  it('is no-store on entries, histograms, users, a new key with its secret, ingestion and refusals', async () => {
    const key = await api(app.url, 'POST', `/v1/projects/${project}/secret-keys`, { token: app.admin.token, json: { label: 'k' } });
    assertStatus(key, 201);
    const answers = [
      ['new key', key],
      ['entries', await api(app.url, 'GET', `/v1/logs?project_id=${project}`, { token: app.admin.token })],
      ['histogram', await api(app.url, 'GET', `/v1/logs/histogram?project_id=${project}`, { token: app.admin.token })],
      ['users', await api(app.url, 'GET', '/v1/users', { token: app.admin.token })],
      ['project', await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token })],
      ['audit log', await api(app.url, 'GET', '/v1/audit-log', { token: app.admin.token })],
      [
        'ingestion',
        await api(app.url, 'POST', '/v1/logs', { token: key.body.secret, json: [{ level: 'info', event: 'e', timestamp: '2025-01-01T00:00:00Z' }] }),
      ],
      ['a refusal', await api(app.url, 'GET', `/v1/logs?project_id=${project}&level=nope`, { token: app.admin.token })],
      ['no credential', await api(app.url, 'GET', '/v1/users')],
    ] as const;
    assert.deepEqual(
      answers.map(([name, res]) => [name, res.headers.get('cache-control')]),
      answers.map(([name]) => [name, 'no-store']),
    );
    assert.equal(answers[0][1].body.secret.startsWith('slk_'), true);
  });

  it('leaves the token endpoint with its no-store and Pragma, and public answers without no-store', async () => {
    const token = await api(app.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'nobody', password: 'x' } });
    assert.equal(token.headers.get('cache-control'), 'no-store');
    assert.equal(token.headers.get('pragma'), 'no-cache');
    assert.equal((await api(app.url, 'GET', '/healthz')).headers.get('cache-control'), null);
    assert.equal((await api(app.url, 'GET', '/v1/openapi.json')).headers.get('cache-control'), null);
  });
});
