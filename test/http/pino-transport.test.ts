/**
 * The pino transport end to end, on both backends: a child process logs
 * through real pino with `pino.transport({ target: 'logkeep/pino' })` and
 * ends normally; every entry is then found through GET /v1/logs under the
 * documented mapping, and was shown to a live stream opened before. pino loads the target by its package name in a worker
 * thread, so this runs against the built package (`npm run build`).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { createGroup, createKey, createProject, signInAdmin, type TestActor } from '../support/actors.js';
import { queryAllPages } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';

const run = promisify(execFile);

// Logs five entries at five levels and one the server rejects, then lets the process end on its own.
const CHILD = `
import pino from 'pino';
const { url, key } = JSON.parse(process.env.LOGKEEP_TARGET);
const logger = pino(
  { name: 'checkout', level: 'debug' },
  pino.transport({ target: 'logkeep/pino', options: { url, key, flushIntervalMs: 60000 } }),
);
logger.debug({ request_id: 'req-1' }, 'cart loaded');
logger.info({ request_id: 'req-1', order: { id: 'o-42', items: 3 } }, 'order placed');
logger.warn({ request_id: 'req-2', retry: 2 }, 'payment slow');
logger.error(new Error('card declined'));
logger.fatal({ request_id: 'req-3', id: 'not-the-server-id' }, 'database unreachable');
logger.info({ request_id: { not: 'a string' } }, 'refused by the server');
`;

describeEachBackend('the logkeep/pino transport', (backend) => {
  let svc: RunningService;
  let admin: TestActor;
  let project: number;
  let startedAt: number;
  let childStderr: string;
  let stream: RawStream;

  before(async () => {
    svc = await startService(backend);
    admin = await signInAdmin(svc.url);
    const group = await createGroup(svc.url, admin.token, 'pino');
    project = await createProject(svc.url, admin.token, group, 'pino-app');
    const { secret } = await createKey(svc.url, admin.token, project);
    stream = assertOpen(await openRawStream(svc.url, `/v1/logs/stream?project_id=${project}`, { token: admin.token }));
    startedAt = Date.now();
    // A flush interval of a minute: the entries arrive only because closing the transport delivers them.
    ({ stderr: childStderr } = await run(process.execPath, ['--input-type=module', '--eval', CHILD], {
      cwd: process.cwd(),
      env: { ...process.env, LOGKEEP_TARGET: JSON.stringify({ url: svc.url, key: secret }) },
    }));
  });
  after(async () => {
    stream.close();
    await svc.stop({ dropDatabase: true });
  });

  async function find(params: [string, string][]): Promise<any[]> {
    const { items } = await queryAllPages(svc.url, admin.token, [['project_id', String(project)], ...params], 100);
    return items;
  }

  it('delivers every entry before the process ends, with levels mapped', async () => {
    const items = await find([]);
    const byEvent = new Map(items.map((item) => [item.event, item.level]));
    assert.deepEqual(Object.fromEntries(byEvent), {
      'cart loaded': 'debug',
      'order placed': 'info',
      'payment slow': 'warning',
      'card declined': 'error',
      'database unreachable': 'critical',
    });
  });

  it('shows every stored entry to a live stream opened before the process logged', async () => {
    const logs = await stream.waitForLogs(5);
    const stored = await find([]);
    assert.deepEqual(logs.map((l) => l.id).sort(), stored.map((i) => i.id).sort());
    assert.deepEqual(logs.find((l) => l.event === 'order placed'), stored.find((i) => i.event === 'order placed'));
  });

  it('maps name to logger and time to timestamp, and keeps pino\'s own fields', async () => {
    for (const item of await find([['logger', 'checkout']])) {
      const at = Date.parse(item.timestamp);
      assert.ok(at >= startedAt - 1000 && at <= Date.now(), `${item.timestamp} is the time of logging`);
      assert.equal(typeof item.pid, 'number');
      assert.equal(typeof item.hostname, 'string');
      assert.equal('msg' in item || 'time' in item || 'name' in item, false);
    }
    assert.equal((await find([['logger', 'checkout']])).length, 5);
  });

  it('keeps extra fields: correlation ids, nested objects and the error', async () => {
    const requestOne = await find([['request_id', 'req-1']]);
    assert.deepEqual(requestOne.map((item) => item.event).sort(), ['cart loaded', 'order placed']);
    assert.deepEqual(requestOne.find((item) => item.event === 'order placed').order, { id: 'o-42', items: 3 });
    assert.deepEqual((await find([['context.order.id', 'o-42']])).map((item) => item.event), ['order placed']);
    assert.deepEqual((await find([['context.retry', '2']])).map((item) => item.event), ['payment slow']);
    const declined = (await find([])).find((item) => item.event === 'card declined');
    assert.equal(declined.err.message, 'card declined');
    assert.equal(declined.err.type, 'Error');
  });

  it('reports an entry the server rejected on stderr', async () => {
    assert.match(childStderr, /logkeep\/pino: the server rejected an entry \(validation_error: 'request_id' must be a string/);
    assert.deepEqual(await find([['q', 'refused']]), []);
  });

  it('keeps a field named like a server-assigned key under a pino_ name', async () => {
    const [fatal] = await find([['level', 'critical']]);
    assert.equal(fatal.pino_id, 'not-the-server-id');
    assert.equal(typeof fatal.id, 'number');
  });
});
