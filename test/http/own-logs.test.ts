/**
 * The service's own diagnostics (issue 7, part 2): one `request` line per
 * request at info, with method, path (never the query), status, duration and
 * caller kind; and never a password, token, secret key, `Authorization`
 * header or request body in any line. Real requests carrying secrets go
 * through a service whose logger is the production one (lib/logging.ts, at
 * its most verbose level), and every captured line is searched.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createServiceLogging } from '../../lib/logging.js';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { ADMIN_PASSWORD, api, startService, type ApiRequest, type ApiResponse, type RunningService } from '../support/service.js';

interface CapturedLine {
  msg: string;
  [key: string]: unknown;
}

function capturingLogging() {
  const text: string[] = [];
  const sink = { write: (chunk: string) => text.push(chunk) };
  const logging = createServiceLogging({ level: 'trace', format: 'json', file: null, maxFileBytes: 1 << 20, maxFiles: 1, stdout: sink, stderr: sink });
  return {
    logging,
    text: () => text.join(''),
    lines: (): CapturedLine[] =>
      text
        .join('')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as CapturedLine),
  };
}

describeEachBackend('own diagnostics', (backend: BackendName) => {
  let running: RunningService;
  let captured: ReturnType<typeof capturingLogging>;
  const requests: { method: string; path: string; status: number }[] = [];
  /** Every secret value sent or received in this suite. */
  const secrets = new Set<string>();

  async function call(method: string, path: string, request: ApiRequest = {}): Promise<ApiResponse> {
    const res = await api(running.url, method, path, request);
    requests.push({ method, path: path.split('?')[0]!, status: res.status });
    return res;
  }

  before(async () => {
    captured = capturingLogging();
    running = await startService(backend, { logger: captured.logging.logger });
  });
  after(async () => {
    await running.stop({ dropDatabase: true });
    await captured.logging.close();
  });

  it('logs one line per request and never a secret, whatever the request carried', async () => {
    const newAdminPassword = 'Adm1n-Rotated-Secret-7731';
    const userPassword = 'Us3r-Temporary-Secret-4412';
    const wrongPassword = 'Wr0ng-Guess-Secret-9127';
    const bodyMarker = 'BodyMarkerSecret5518';
    const queryMarker = 'querymarkersecret6620';
    const malformedMarker = 'MalformedSecret3390';
    const basicCredentials = Buffer.from('client-id:Client-Secret-8841').toString('base64');
    for (const s of [
      ADMIN_PASSWORD,
      newAdminPassword,
      userPassword,
      wrongPassword,
      bodyMarker,
      queryMarker,
      malformedMarker,
      basicCredentials,
      'Client-Secret-8841',
    ]) {
      secrets.add(s);
    }

    const first = await call('POST', '/v1/auth/token', {
      form: { grant_type: 'password', username: 'admin', password: ADMIN_PASSWORD },
      headers: { authorization: `Basic ${basicCredentials}` },
    });
    assert.equal(first.status, 200, first.text);
    secrets.add(first.body.access_token);
    secrets.add(first.body.access_token.split('.')[2]);
    secrets.add(first.body.refresh_token);

    const changed = await call('POST', '/v1/auth/change-password', {
      token: first.body.access_token,
      json: { current_password: ADMIN_PASSWORD, new_password: newAdminPassword },
    });
    assert.equal(changed.status, 200, changed.text);

    const failed = await call('POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: wrongPassword } });
    assert.equal(failed.status, 400);

    const login = await call('POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: newAdminPassword } });
    assert.equal(login.status, 200, login.text);
    const token: string = login.body.access_token;
    secrets.add(token);
    secrets.add(token.split('.')[2]!);
    secrets.add(login.body.refresh_token);

    const refreshed = await call('POST', '/v1/auth/token', { form: { grant_type: 'refresh_token', refresh_token: login.body.refresh_token } });
    assert.equal(refreshed.status, 200, refreshed.text);
    secrets.add(refreshed.body.access_token);
    secrets.add(refreshed.body.refresh_token);
    const loggedOut = await call('DELETE', '/v1/auth/token', { form: { refresh_token: refreshed.body.refresh_token } });
    assert.equal(loggedOut.status, 200, loggedOut.text);

    const user = await call('POST', '/v1/users', { token, json: { username: 'logged-user', password: userPassword } });
    assert.equal(user.status, 201, user.text);
    const malformed = await call('POST', '/v1/users', { token, raw: `{"username": "x", "password": "${malformedMarker}` });
    assert.equal(malformed.status, 400);

    const group = await call('POST', '/v1/groups', { token, json: { name: 'own-logs' } });
    assert.equal(group.status, 201, group.text);
    const project = await call('POST', `/v1/groups/${group.body.id}/projects`, { token, json: { name: 'own-logs', retention_days: 7 } });
    assert.equal(project.status, 201, project.text);
    const key = await call('POST', `/v1/projects/${project.body.id}/secret-keys`, { token, json: { label: 'own-logs' } });
    assert.equal(key.status, 201, key.text);
    const secretKey: string = key.body.secret;
    secrets.add(secretKey);
    secrets.add(secretKey.slice('slk_'.length));

    const ingested = await call('POST', '/v1/logs', {
      token: secretKey,
      json: [
        { level: 'info', event: `login ok ${bodyMarker}`, timestamp: '2026-01-01T00:00:00Z', password: bodyMarker },
        { level: 'nonsense', event: bodyMarker, timestamp: 'never' },
      ],
    });
    assert.equal(ingested.status, 202, ingested.text);
    const badKey = await call('POST', '/v1/logs', { token: `slk_${bodyMarker}`, json: [] });
    assert.equal(badKey.status, 401);
    const badJwt = await call('GET', '/v1/groups', { token: `eyJ.${bodyMarker}.sig` });
    assert.equal(badJwt.status, 401);
    const queried = await call('GET', `/v1/logs?project_id=${project.body.id}&q=${queryMarker}`, { token });
    assert.equal(queried.status, 200, queried.text);

    // Every response has been read; the close handlers that log have run.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = captured.text();
    for (const secret of secrets) assert.ok(!text.includes(secret), `a log line contains the secret ${secret.slice(0, 12)}…`);
    assert.ok(!text.includes('Bearer ') && !text.includes('Basic '), 'no Authorization header value');

    const requestLines = captured.lines().filter((line) => line.msg === 'request');
    assert.equal(requestLines.length, requests.length, 'one line per request');
    for (const line of requestLines) {
      assert.equal(line.level, 'info');
      assert.deepEqual(
        Object.keys(line)
          .filter((k) => !['level', 'time', 'pid', 'hostname', 'msg'].includes(k))
          .sort(),
        ['caller_kind', 'duration_ms', 'method', 'path', 'status'],
      );
      assert.equal(typeof line.duration_ms, 'number');
    }
    // Lines are written as responses close: compare them as a multiset, not in order.
    const seen = requestLines.map((l) => `${String(l.method)} ${String(l.path)} ${String(l.status)}`).sort();
    const sent = requests.map((r) => `${r.method} ${r.path} ${r.status}`).sort();
    assert.deepEqual(seen, sent);
    const callers = new Set(requestLines.map((l) => l.caller_kind));
    assert.deepEqual([...callers].sort(), ['anonymous', 'project-key', 'user']);
    assert.ok(
      requestLines.every((l) => !String(l.path).includes('?')),
      'never the query string',
    );
  });
});
