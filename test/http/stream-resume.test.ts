/**
 * Gapless resume on both backends: `since_id` and `Last-Event-ID`
 * replay stored matches oldest first and go live with no gap and no
 * duplicate while several writers ingest into several projects at once;
 * a stream without either starts at the subscription; the `eventsource`
 * client reconnects after a dropped connection and misses nothing; and a
 * consumer that stops reading loses nothing (it catches up from storage).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { signal } from '../support/signal.js';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { createActor, createGroup, createKey, createProject, signInAdmin, type TestActor } from '../support/actors.js';
import { ingestAll, queryAllPages } from '../support/logs.js';
import { assertOpen, authedEventSource, openRawStream, type RawStream } from '../support/sse.js';
import { waitUntil } from '../support/wait.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { silentLogger } from '../../lib/core/logger.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import type { Storage } from '../../lib/storage/storage.js';
import { INGEST_MARK_CLASS } from '../../lib/storage/postgres/log-sql.js';
import pgPromise from 'pg-promise';
import { PG } from '../support/postgres.js';

function entries(tag: string, count: number, padding = 0): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    level: i % 3 === 0 ? 'error' : 'info',
    event: `${tag} ${i}`,
    timestamp: '2025-01-01T00:00:00Z',
    ...(padding ? { padding: 'x'.repeat(padding) } : {}),
  }));
}

/** One writer per key, each sending `batches` batches one after another; all writers at once. */
async function writeConcurrently(url: string, keys: string[], batches: number, size: number, tag: string): Promise<void> {
  await Promise.all(
    keys.map(async (key, k) => {
      for (let b = 0; b < batches; b++) await ingestAll(url, key, entries(`${tag} w${k} b${b}`, size));
    }),
  );
}

function assertAscendingUnique(ids: number[], label: string): void {
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, `${label}: ids ascend without duplicates (${ids[i - 1]} then ${ids[i]})`);
}

describeEachBackend('live stream: gapless resume', (backend) => {
  let svc: RunningService;
  let url: string;
  let admin: TestActor;
  let member: TestActor;
  let groupG: number;
  let projects: number[] = [];
  let keys: string[] = [];
  const open: RawStream[] = [];

  const stream = async (query: string, headers?: Record<string, string>) => {
    const s = assertOpen(await openRawStream(url, `/v1/logs/stream?${query}`, { token: member.token, ...(headers ? { headers } : {}) }));
    open.push(s);
    return s;
  };
  const listedIds = async (query: [string, string][]) => (await queryAllPages(url, member.token, query, 200)).items.map((i) => i.id as number).reverse();
  const untilLast = (s: RawStream, lastId: number, label: string) =>
    s.waitFor((x) => x.logs().some((e) => e.id === lastId), 30_000, `${label} to reach id ${lastId}`);

  before(async () => {
    svc = await startService(backend);
    url = svc.url;
    admin = await signInAdmin(url);
    groupG = await createGroup(url, admin.token, 'G');
    projects = [];
    keys = [];
    for (const name of ['A', 'B', 'C']) {
      const id = await createProject(url, admin.token, groupG, name);
      projects.push(id);
      keys.push((await createKey(url, admin.token, id)).secret);
    }
    member = await createActor(url, admin.token, `reader-${backend}`, { grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }] });
  });
  after(async () => {
    for (const s of open) s.close();
    await svc.stop({ dropDatabase: true });
  });

  it('since_id and Last-Event-ID replay, then go live, with no gap and no duplicate under concurrent writers', async () => {
    await writeConcurrently(url, keys, 2, 50, 'seed');
    const seeded = await listedIds([['group_id', String(groupG)]]);
    const mid = seeded[Math.floor(seeded.length / 2)]!;
    const lastBefore = seeded[seeded.length - 1]!;

    const writing = writeConcurrently(url, keys, 10, 40, 'live');
    // Opened while the writers run: replay and live delivery overlap.
    const groupSince = await stream(`group_id=${groupG}&since_id=${mid}`);
    const projectSince = await stream(`project_id=${projects[0]}&since_id=${mid}`);
    const groupHeader = await stream(`group_id=${groupG}`, { 'last-event-id': String(mid) });
    const filtered = await stream(`group_id=${groupG}&level=error&since_id=${mid}`);
    const fromNow = await stream(`group_id=${groupG}`);
    await writing;
    await writeConcurrently(url, keys, 1, 5, 'tail');

    const all = await listedIds([['group_id', String(groupG)]]);
    const ofA = await listedIds([['project_id', String(projects[0]!)]]);
    const errors = await listedIds([
      ['group_id', String(groupG)],
      ['level', 'error'],
    ]);
    const checks: [RawStream, number[], string][] = [
      [groupSince, all.filter((id) => id > mid), 'group since_id'],
      [projectSince, ofA.filter((id) => id > mid), 'project since_id'],
      [groupHeader, all.filter((id) => id > mid), 'group Last-Event-ID'],
      [filtered, errors.filter((id) => id > mid), 'filtered since_id'],
    ];
    for (const [s, expected, label] of checks) {
      await untilLast(s, expected[expected.length - 1]!, label);
      assert.deepEqual(
        s.logs().map((e) => e.id),
        expected,
        label,
      );
    }

    await untilLast(fromNow, all[all.length - 1]!, 'stream without since_id');
    const received = fromNow.logs().map((e) => e.id as number);
    assertAscendingUnique(received, 'without since_id');
    assert.ok(received[0]! > lastBefore, 'without since_id, nothing stored before the subscription is sent');
    assert.deepEqual(
      received,
      all.filter((id) => id >= received[0]!),
      'without since_id: a gapless suffix',
    );
  });

  it('the eventsource client reconnects with Last-Event-ID after a dropped connection and misses nothing', async () => {
    const start = (await listedIds([['project_id', String(projects[1]!)]])).at(-1) ?? 0;
    let streamSocket: Socket | null = null;
    const remember = (req: IncomingMessage) => {
      if (req.url?.startsWith('/v1/logs/stream')) streamSocket = req.socket;
    };
    svc.server.on('request', remember);
    const seen: number[] = [];
    const reconnectIds: (string | null)[] = [];
    // No since_id in the URL: it would win over Last-Event-ID on every reconnect.
    const source = authedEventSource(`${url}/v1/logs/stream?project_id=${projects[1]}`, member.token);
    source.addEventListener('log', (e) => seen.push(Number(e.lastEventId)));
    try {
      await new Promise<void>((resolve) => {
        source.onopen = () => {
          reconnectIds.push(String(seen.at(-1) ?? 'none'));
          resolve();
        };
      });
      const writing = (async () => {
        for (let b = 0; b < 20; b++) {
          await ingestAll(url, keys[1]!, entries(`reconnect b${b}`, 10));
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      await waitUntil(() => seen.length >= 30, 'the first events');
      (streamSocket as Socket | null)?.destroy();
      await writing;
      const expected = (await listedIds([['project_id', String(projects[1]!)]])).filter((id) => id > start);
      await waitUntil(() => seen.at(-1) === expected.at(-1), 'every event after reconnecting', 20_000);
      assert.ok(reconnectIds.length >= 2, 'the client reconnected');
      assert.deepEqual(seen, expected);
    } finally {
      source.close();
      svc.server.off('request', remember);
    }
  });

  if (backend === 'server') {
    it('a group stream never passes an entry that commits later with a smaller id (transactions on two projects)', async () => {
      const [projectA, projectB] = [projects[0]!, projects[1]!];
      const group = await stream(`group_id=${groupG}&q=overtaken`);
      const project = await stream(`project_id=${projectB}&q=overtaken`);
      // An ingestion transaction on A, held open after drawing its ids, through a second storage on the same database.
      const db = await openStorage(svc.database.config, { logger: silentLogger });
      const { promise: held, resolve: release } = signal();
      const { promise: idsDrawn, resolve: drawn } = signal();
      const slow = db.write(async (tx) => {
        const batch = entriesFromValues([{ level: 'info', event: 'overtaken first', timestamp: '2025-01-01T00:00:00Z' }]);
        const outcomes = await tx.ingestLogs([encodeRequest(projectA, Date.now(), batch.entries)]);
        drawn();
        await held;
        return outcomes;
      });
      try {
        await idsDrawn;
        // B's entry draws a larger id and commits first.
        await ingestAll(url, keys[1]!, [{ level: 'info', event: 'overtaken second', timestamp: '2025-01-01T00:00:00Z' }]);
        await project.waitForLogs(1, 5_000);
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(group.logs(), [], 'the group stream waits while a smaller id may still commit');
        release();
        await slow;
        const got = await group.waitForLogs(2, 10_000);
        assert.deepEqual(
          got.map((e) => e.event),
          ['overtaken first', 'overtaken second'],
        );
        assert.ok(got[0].id < got[1].id);
      } finally {
        release();
        await slow.catch(() => undefined);
        await db.close();
      }
    });
  }

  if (backend === 'server') {
    it('a group stream does not wait for ingestion that drew its ids above the entries it can deliver (transactions of another process)', async () => {
      const [projectA, projectB, projectC] = [projects[0]!, projects[1]!, projects[2]!];
      const group = await stream(`group_id=${groupG}&q=floored`);
      // Another process's storage on the same database: its transactions are polled in pg_locks.
      const db = await openStorage(svc.database.config, { logger: silentLogger });
      const early = holdIngestion(db, projectB, 'floored early');
      let late: HeldIngestion | null = null;
      try {
        await early.drawn;
        // Marked after `early` drew its ids: every id it draws is above them.
        late = holdIngestion(db, projectA, 'floored late');
        await late.drawn;
        early.release();
        await early.done;
        // Drawn after both; its notification wakes the group stream.
        await ingestAll(url, keys[2]!, [{ level: 'info', event: 'floored last', timestamp: '2025-01-01T00:00:00Z' }]);
        const [first] = await group.waitForLogs(1, 10_000);
        assert.equal(first.event, 'floored early', 'delivered while a transaction that drew larger ids is still open');
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(
          group.logs().map((e) => e.event),
          ['floored early'],
          'nothing past the open transaction’s ids',
        );
        late.release();
        await late.done;
        const got = await group.waitForLogs(3, 10_000);
        assert.deepEqual(
          got.map((e) => [e.event, e.project_id]),
          [
            ['floored early', projectB],
            ['floored late', projectA],
            ['floored last', projectC],
          ],
        );
        assertAscendingUnique(
          got.map((e) => e.id as number),
          'floored',
        );
      } finally {
        early.release();
        late?.release();
        await Promise.allSettled([early.done, late?.done]);
        await db.close();
      }
    });

    it('a group stream waits for ingestion marked without a floor (a process of an earlier version)', async () => {
      const [projectA, projectB] = [projects[0]!, projects[1]!];
      const group = await stream(`group_id=${groupG}&q=floorless`);
      const pgp = pgPromise({ noWarnings: true });
      const raw = pgp({ host: PG.host, port: PG.port, user: PG.user, password: PG.password, database: svc.database.config.dbServerDatabase!, max: 1 });
      const { promise: held, resolve: release } = signal();
      const { promise: isMarked, resolve: marked } = signal();
      // The mark alone, as ingestion took it before floors existed; the transaction may draw ids at any time.
      const old = raw.tx(async (t) => {
        await t.any('SELECT pg_advisory_xact_lock_shared(($1::bigint << 32) | $2::bigint)', [INGEST_MARK_CLASS, projectA]);
        marked();
        await held;
      });
      try {
        await isMarked;
        await ingestAll(url, keys[1]!, [{ level: 'info', event: 'floorless after', timestamp: '2025-01-01T00:00:00Z' }]);
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(group.logs(), [], 'the group stream waits while an entry of any id may still commit');
        release();
        await old;
        const [got] = await group.waitForLogs(1, 10_000);
        assert.equal(got.event, 'floorless after');
        assert.equal(got.project_id, projectB);
      } finally {
        release();
        await old.catch(() => undefined);
        await raw.$pool.end();
      }
    });
  }

  it('a consumer that stops reading loses nothing: it catches up from storage, in order', async () => {
    const target = projects[2]!;
    const start = (await listedIds([['project_id', String(target)]])).at(-1) ?? 0;
    const { res, body } = await openPausedStream(`${url}/v1/logs/stream?project_id=${target}`, member.token);
    try {
      // ~9 MB of frames while the client reads nothing: far beyond socket buffers.
      for (let b = 0; b < 10; b++) await ingestAll(url, keys[2]!, entries(`slow b${b}`, 300, 3000));
      const expected = (await listedIds([['project_id', String(target)]])).filter((id) => id > start);
      res.resume();
      await waitUntil(() => body.text.includes(`id: ${expected.at(-1)}\n`), 'the consumer to catch up', 30_000);
      const ids = [...body.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      assert.deepEqual(ids, expected);
    } finally {
      res.destroy();
    }
  });
});

interface HeldIngestion {
  /** Resolves once the transaction has drawn its ids (it stays open). */
  drawn: Promise<void>;
  release(): void;
  /** Resolves when it has committed. */
  done: Promise<unknown>;
}

/** One entry ingested into `projectId` through `db`, its transaction held open after drawing its id until released. */
function holdIngestion(db: Storage, projectId: number, event: string): HeldIngestion {
  const { promise: held, resolve: release } = signal();
  const { promise: idsDrawn, resolve: drawn } = signal();
  const done = db.write(async (tx) => {
    const batch = entriesFromValues([{ level: 'info', event, timestamp: '2025-01-01T00:00:00Z' }]);
    const outcomes = await tx.ingestLogs([encodeRequest(projectId, Date.now(), batch.entries)]);
    drawn();
    await held;
    return outcomes;
  });
  return { drawn: idsDrawn, release, done };
}

/** A stream read through node:http, paused at once: the client stops reading its socket. */
function openPausedStream(target: string, token: string): Promise<{ res: IncomingMessage; body: { text: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(target, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream refused: ${res.statusCode}`));
        return;
      }
      const body = { text: '' };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body.text += chunk;
      });
      res.on('error', () => {});
      res.pause();
      resolve({ res, body });
    });
    req.on('error', reject);
    req.end();
  });
}
