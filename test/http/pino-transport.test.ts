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
import { NO_MESSAGE } from '../../lib/client/pino.js';

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
    assert.deepEqual(
      logs.find((l) => l.event === 'order placed'),
      stored.find((i) => i.event === 'order placed'),
    );
  });

  it("maps name to logger and time to timestamp, and keeps pino's own fields", async () => {
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
    assert.deepEqual(
      (await find([['context.order.id', 'o-42']])).map((item) => item.event),
      ['order placed'],
    );
    assert.deepEqual(
      (await find([['context.retry', '2']])).map((item) => item.event),
      ['payment slow'],
    );
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

// Set up as the docs show (no 'error' listener on the transport), then hostile
// records: times logkeep cannot take, lines that are not JSON or not objects,
// a record nested too deep to serialise again, and odd types for pino's own
// keys, each followed by a good record; then, after a pause, one more good
// record, and a normal end. A dead worker would fail the later writes with an
// unhandled 'error' (exit code 1) and lose every record after it.
const HOSTILE_CHILD = `
import pino from 'pino';
const { url, key } = JSON.parse(process.env.LOGKEEP_TARGET);
const transport = pino.transport({ target: 'logkeep/pino', options: { url, key, flushIntervalMs: 100 } });
const logger = pino({ name: 'hostile' }, transport);
let good = 0;
const next = () => logger.info({ good: ++good }, 'good ' + good);
next();
for (const [label, time] of [
  ['1e20', 1e20], ['-1e20', -1e20], ['nanoseconds', 1.7e18], ['past year 9999', 253402300800000],
  ['not a date', 'not a date'], ['impossible date', '2025-02-30T00:00:00Z'], ['object', { at: 1 }], ['true', true],
]) {
  logger.info({ time, label }, 'bad time ' + label);
  next();
}
logger.info({ huge: 1e308, tiny: -1e308, many: Array.from({ length: 1000 }, (_, i) => i) }, 'huge numbers');
next();
for (const line of [
  'not json',
  'null',
  '42',
  '[1,2]',
  '{"level":{"x":1},"msg":{"y":2},"time":"soon","name":5}',
  '{"a":'.repeat(200000) + '1' + '}'.repeat(200000),
]) {
  transport.write(line + '\\n');
  next();
}
await new Promise((resolve) => setTimeout(resolve, 500));
next();
process.stdout.write('still running after ' + good + ' good records');
`;

describeEachBackend('the logkeep/pino transport, given hostile records', (backend) => {
  let svc: RunningService;
  let admin: TestActor;
  let project: number;
  let startedAt: number;
  let child: { code: number | null; stdout: string; stderr: string };

  before(async () => {
    svc = await startService(backend);
    admin = await signInAdmin(svc.url);
    const group = await createGroup(svc.url, admin.token, 'pino hostile');
    project = await createProject(svc.url, admin.token, group, 'pino-hostile');
    const { secret } = await createKey(svc.url, admin.token, project);
    startedAt = Date.now();
    child = await new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--input-type=module', '--eval', HOSTILE_CHILD],
        { cwd: process.cwd(), env: { ...process.env, LOGKEEP_TARGET: JSON.stringify({ url: svc.url, key: secret }) }, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  });
  after(() => svc.stop({ dropDatabase: true }));

  async function all(): Promise<any[]> {
    return (await queryAllPages(svc.url, admin.token, [['project_id', String(project)]], 200)).items;
  }

  it('keeps the application running: it ends normally and every good record arrives', async () => {
    assert.equal(child.code, 0, child.stderr);
    assert.equal(child.stdout, 'still running after 17 good records');
    const goods = (await all()).filter((item) => typeof item.good === 'number').map((item) => item.good);
    assert.deepEqual(
      goods.sort((a, b) => a - b),
      Array.from({ length: 17 }, (_, i) => i + 1),
    );
  });

  it('keeps a record with a time logkeep cannot take: the time received as timestamp, the original under pino_time', async () => {
    const items = await all();
    const bad = new Map(items.filter((item) => typeof item.label === 'string').map((item) => [item.label, item]));
    assert.deepEqual([...bad.keys()].sort(), ['-1e20', '1e20', 'impossible date', 'nanoseconds', 'not a date', 'object', 'past year 9999', 'true']);
    const expected: Record<string, unknown> = {
      '1e20': 1e20,
      '-1e20': -1e20,
      nanoseconds: 1.7e18,
      'past year 9999': 253402300800000,
      'not a date': 'not a date',
      'impossible date': '2025-02-30T00:00:00Z',
      object: { at: 1 },
      true: true,
    };
    for (const [label, item] of bad) {
      assert.deepEqual(item.pino_time, expected[label], label);
      assert.equal(item.event, `bad time ${label}`);
      const at = Date.parse(item.timestamp);
      assert.ok(at >= startedAt - 1000 && at <= Date.now(), `${label}: ${item.timestamp} is the time received`);
    }
  });

  it("keeps records that are odd but mappable: huge numbers, a bare value, an array, odd types for pino's keys", async () => {
    const items = await all();
    const huge = items.find((item) => item.event === 'huge numbers');
    assert.deepEqual([huge.huge, huge.tiny, huge.many.length], [1e308, -1e308, 1000]);
    assert.ok(items.some((item) => item.data === 42 && item.event === NO_MESSAGE));
    assert.ok(items.some((item) => Array.isArray(item.data) && item.data.join() === '1,2'));
    const odd = items.find((item) => item.pino_time === 'soon');
    assert.deepEqual([odd.level, odd.event, odd.pino_msg, odd.pino_name], ['info', NO_MESSAGE, { y: 2 }, 5]);
  });

  it('drops what it cannot map, counts it and says so on stderr, never thrown', async () => {
    const drops = child.stderr.split('\n').filter((line) => line.startsWith('logkeep/pino: dropped a record'));
    assert.equal(drops.length, 3, child.stderr);
    assert.match(drops[0]!, /not a JSON object \(8 characters\) \(1 dropped so far\)$/);
    assert.match(drops[1]!, /not a JSON object \(4 characters\) \(2 dropped so far\)$/);
    assert.match(drops[2]!, /Maximum call stack size exceeded \(3 dropped so far\)$/);
    assert.equal((await all()).length, 17 + 8 + 1 + 3);
  });
});
