/**
 * `GET /v1/openapi.json` on both backends: public, and exactly the document
 * in docs/openapi.yaml, as JSON.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { openApiDocument } from '../support/openapi.js';

describeEachBackend('GET /v1/openapi.json', (backend) => {
  let svc: RunningService;
  before(async () => {
    svc = await startService(backend);
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('answers the OpenAPI document as JSON, without credentials', async () => {
    const res = await api(svc.url, 'GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(res.body, openApiDocument());
  });

  it('ignores a credential, as public routes do', async () => {
    const res = await api(svc.url, 'GET', '/v1/openapi.json', { token: 'not-a-token' });
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
  });
});
