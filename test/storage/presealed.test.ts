/**
 * Large requests sealed when prepared (lib/storage/log-index/presealed.ts),
 * on both backends: the ingest transaction stores them straight as blocks
 * while their project's tail is empty, and in the tail otherwise (tail not
 * empty, a dictionary that is no longer the newest, a quota that cut the
 * request short), so a project's blocks always hold its oldest entries.
 * Every entry is found by every kind of filter, byte for byte, with the
 * ids its outcome gave, and quotas count it as submitted.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { silentLogger } from '../../lib/core/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { Storage } from '../../lib/storage/storage.js';
import type { LogEntryOutcome, LogIngestRequest, LogSelection, PreparedEntry } from '../../lib/storage/types-logs.js';
import { encodeRequest, RequestEncoder } from '../../lib/storage/log-index/encoded-entries.js';
import { PRESEAL_MIN_ENTRIES } from '../../lib/storage/log-index/presealed.js';
import { TAIL_CHECK_MS } from '../../lib/storage/log-index/tail-room.js';
import type { SealDictionary } from '../../lib/storage/log-index/sealed-block.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { rawRows } from '../support/raw-sql.js';
import { describeEachBackend, newTestDatabase, type TestDatabase } from '../support/backends.js';

const T0 = Date.UTC(2025, 3, 1);
/** Arrival: now, so the background sealer leaves part-filled tails alone (it seals them only once old). */
const NOW = Date.now();
const LEVELS = ['debug', 'info', 'warning', 'error', 'critical'];

function values(count: number, tag: string): PreparedEntry[] {
  const batch = entriesFromValues(
    Array.from({ length: count }, (_, i) => ({
      level: LEVELS[(i * 3) % 5],
      timestamp: new Date(T0 + i * 1000).toISOString(),
      event: `${tag} step${i % 17} ünï`,
      request_id: `${tag}-req-${i}`,
      context: { user: { id: i % 60 }, ok: i % 2 === 0 },
    })),
  );
  assert.equal(batch.rejected.length, 0);
  return batch.entries;
}

/** A request as the preparation thread makes it with the project's dictionary. */
/** Resolves once `ok` answers true, polling for up to 5 s. */
async function until(ok: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + 5000;
  while (!(await ok())) {
    assert.ok(performance.now() < deadline, what);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function presealedRequest(projectId: number, entries: readonly PreparedEntry[], dictionary: SealDictionary): LogIngestRequest {
  const encoder = new RequestEncoder(projectId, NOW, dictionary);
  for (const e of entries) encoder.add(e);
  const request = encoder.finish();
  assert.ok(request.blocks && request.blocks.length > 0, 'the request was sealed when prepared');
  return request;
}

describeEachBackend('presealed blocks: large requests stored as blocks', (backend) => {
  let db: TestDatabase;
  let storage: Storage;
  let group: number;
  /** Every entry stored, by id. */
  const stored = new Map<number, { projectId: number; body: string; level: number; ts: number }>();

  const project = async (name: string, maxEntries: number | null = null) =>
    (await storage.write((tx) => tx.insertProject({ groupId: group, name, retentionDays: 30, maxEntries, maxBytes: null, createdAt: T0 }))).id;

  async function ingest(requests: LogIngestRequest[], entries: PreparedEntry[][]): Promise<LogEntryOutcome[][]> {
    const outcomes = await storage.write((tx) => tx.ingestLogs(requests));
    outcomes.forEach((request, r) => {
      request.forEach((o, i) => {
        const e = entries[r]![i]!;
        if ('id' in o) stored.set(o.id, { projectId: requests[r]!.projectId, body: e.body, level: e.level, ts: e.timestamp });
      });
    });
    return outcomes;
  }

  const tailOf = async (projectId: number) =>
    (await rawRows(db, 'SELECT COALESCE(SUM(entries), 0) AS n FROM log_tails WHERE project_id = $1', [projectId]))[0]!.n!;
  const blocksOf = async (projectId: number) =>
    rawRows(db, 'SELECT first_id AS first, last_id AS last, entries FROM log_sealed WHERE project_id = $1 ORDER BY last_id', [projectId]);

  /** A project with a dictionary (its first entries sealed) and an empty tail. */
  async function sealedProject(name: string, maxEntries: number | null = null): Promise<{ projectId: number; dictionary: SealDictionary }> {
    const projectId = await project(name, maxEntries);
    const first = values(50, `${name}first`);
    await ingest([encodeRequest(projectId, NOW, first)], [first]);
    await storage.sealNow!();
    const dictionary = await storage.ingestDictionary!(projectId);
    assert.ok(dictionary, 'the first seal made a dictionary');
    assert.equal(await tailOf(projectId), 0);
    return { projectId, dictionary };
  }

  /** What a query answers, checked against the stored entries filtered by hand. */
  async function assertFound(projectId: number, filter: Partial<LogSelection>, holds: (body: string, level: number) => boolean): Promise<number> {
    const selection: LogSelection = { projectIds: [projectId], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [], ...filter };
    const expected = [...stored]
      .filter(([, e]) => e.projectId === projectId && holds(e.body, e.level) && e.level >= (selection.minLevel ?? 0))
      .map(([id]) => id)
      .sort((a, b) => b - a);
    const got: number[] = [];
    for (let beforeId: number | undefined; ; ) {
      const rows = await storage.queryLogs(selection, { limit: 97, ...(beforeId === undefined ? {} : { beforeId }) });
      for (const row of rows) {
        assert.equal(row.body, stored.get(row.id)?.body, `entry ${row.id} byte for byte`);
        got.push(row.id);
      }
      if (rows.length < 97) break;
      beforeId = rows[rows.length - 1]!.id;
    }
    assert.deepEqual(got, expected, JSON.stringify(filter));
    return got.length;
  }

  before(async () => {
    db = await newTestDatabase(backend);
    storage = await openStorage(db.config, { logger: silentLogger });
    group = (await storage.write((tx) => tx.insertGroup('preseal', T0))).id;
  });
  after(async () => {
    await storage.close();
    await db.cleanup();
  });

  it('stores large requests straight as blocks while the tail is empty, with the ids their outcomes give', async () => {
    const { projectId, dictionary } = await sealedProject('straight');
    const other = await project('other');
    const big = values(1500, 'big');
    const second = values(PRESEAL_MIN_ENTRIES + 44, 'second');
    assert.equal(PRESEAL_MIN_ENTRIES, 1024, 'the blocks below are cut at 1,024 entries');
    const small = values(20, 'small');
    const blocksBefore = (await blocksOf(projectId)).length;
    const [outBig, outSmall, outSecond] = await ingest(
      [presealedRequest(projectId, big, dictionary), encodeRequest(other, NOW, small), presealedRequest(projectId, second, dictionary)],
      [big, small, second],
    );
    const idsOf = (out: LogEntryOutcome[]) => out.map((o) => ('id' in o ? o.id : Number.NaN));
    const ids = [...idsOf(outBig!), ...idsOf(outSecond!)];
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'ids ascend in submitted order',
    );
    assert.equal(new Set([...ids, ...idsOf(outSmall!)]).size, ids.length + small.length, 'no id twice');
    assert.equal(await tailOf(projectId), 0, 'nothing went to the tail');
    assert.equal(await tailOf(other), small.length, 'a small request still goes to the tail');
    const blocks = (await blocksOf(projectId)).slice(blocksBefore);
    assert.deepEqual(
      blocks.map((b) => [b.first, b.last, b.entries]),
      [
        [ids[0], ids[1023], 1024],
        [ids[1024], ids[1499], 476],
        [ids[1500], ids[2523], 1024],
        [ids[2524], ids[ids.length - 1], 44],
      ],
    );
    const usage = (await storage.getProject(projectId))!;
    assert.equal(usage.entryCount, 50 + big.length + second.length);
    // Later ids still come after the blocks' ids.
    const after = values(5, 'after');
    const [outAfter] = await ingest([encodeRequest(projectId, NOW, after)], [after]);
    assert.ok(idsOf(outAfter!)[0]! > ids[ids.length - 1]!);
    assert.equal(await storage.lastLogIdOf([projectId]), idsOf(outAfter!)[4]);

    assert.equal(await assertFound(projectId, {}, () => true), 50 + big.length + second.length + after.length);
    assert.ok((await assertFound(projectId, { words: ['step3'] }, (b) => b.includes('step3 '))) > 80);
    await assertFound(projectId, { prefixes: ['sec'] }, (b) => b.includes('"second'));
    await assertFound(projectId, { exact: [{ path: ['request_id'], value: 'big-req-1234' }] }, (b) => b.includes('"big-req-1234"'));
    await assertFound(projectId, { exact: [{ path: ['context', 'user', 'id'], value: '57' }] }, (b) => b.includes('"id":57}'));
    await assertFound(projectId, { words: ['ünï'], minLevel: 3 }, () => true);
    const oldest = await storage.logsAfter(
      { projectIds: [projectId], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] },
      ids[1020]!,
      10,
    );
    assert.deepEqual(
      oldest.map((r) => r.id),
      ids.slice(1021, 1031),
      'read forward across two presealed blocks',
    );
  });

  it('puts a large request in the tail while the tail holds entries: blocks stay the oldest entries', async () => {
    const { projectId, dictionary } = await sealedProject('behind');
    const small = values(10, 'first');
    const big = values(PRESEAL_MIN_ENTRIES, 'queued');
    // The tail now holds a full run, which background sealing may take at any time: the test is that
    // no block is ever one of the large requests on its own (first id and size).
    const firstIdOf = (out: LogEntryOutcome[]) => ('id' in out[0]! ? out[0]!.id : Number.NaN);
    const presealedAt = async (firstId: number) => (await blocksOf(projectId)).some((b) => b.first === firstId && b.entries === PRESEAL_MIN_ENTRIES);
    await ingest([encodeRequest(projectId, NOW, small)], [small]);
    const [outBig] = await ingest([presealedRequest(projectId, big, dictionary)], [big]);
    assert.equal(await presealedAt(firstIdOf(outBig!)), false, 'it went to the tail');
    // In one transaction too: a small request ahead of a large one of its project.
    const small2 = values(5, 'again');
    const big2 = values(PRESEAL_MIN_ENTRIES, 'later');
    const [, outBig2] = await ingest([encodeRequest(projectId, NOW, small2), presealedRequest(projectId, big2, dictionary)], [small2, big2]);
    assert.equal(await presealedAt(firstIdOf(outBig2!)), false, 'it went to the tail');
    await storage.sealNow!();
    assert.equal(await tailOf(projectId), 0);
    const blocks = await blocksOf(projectId);
    assert.equal(
      blocks.reduce((n, b) => n + b.entries!, 0),
      50 + small.length + big.length + small2.length + big2.length,
    );
    for (let i = 1; i < blocks.length; i++) assert.ok(blocks[i]!.first > blocks[i - 1]!.last, 'blocks of a project never overlap');
    await assertFound(projectId, { words: ['queued'] }, (b) => b.includes('queued'));
  });

  it('empties a part-filled tail after a large request missed it, at most once in a while', async () => {
    const { projectId, dictionary } = await sealedProject('drained');
    const small = values(30, 'waiting');
    await ingest([encodeRequest(projectId, NOW, small)], [small]);
    assert.equal(await tailOf(projectId), small.length);
    // What the sealer knows of tails may be TAIL_CHECK_MS old (the transaction decides anyway).
    await new Promise((resolve) => setTimeout(resolve, TAIL_CHECK_MS + 20));
    const started = performance.now();
    assert.equal(await storage.ingestDictionary!(projectId), null, 'a tail holding entries: to the tail');
    assert.ok(performance.now() - started < 500, 'without waiting for sealing');
    storage.presealMissed!(projectId);
    await until(async () => (await tailOf(projectId)) === 0, 'its part-filled run was sealed');
    assert.deepEqual(await storage.ingestDictionary!(projectId), dictionary, 'the next large request finds the tail empty');
    const big = values(PRESEAL_MIN_ENTRIES, 'afterdrain');
    await ingest([presealedRequest(projectId, big, dictionary)], [big]);
    assert.equal(await tailOf(projectId), 0, 'the large request went straight to a block');
    // Another miss soon after: the tail is not emptied again so soon.
    const more = values(3, 'more');
    await ingest([encodeRequest(projectId, NOW, more)], [more]);
    await new Promise((resolve) => setTimeout(resolve, TAIL_CHECK_MS + 20));
    assert.equal(await storage.ingestDictionary!(projectId), null);
    storage.presealMissed!(projectId);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(await tailOf(projectId), more.length, 'a few entries stay in the tail');
    await assertFound(projectId, { words: ['waiting'] }, (b) => b.includes('"waiting '));
  });

  it('puts a request in the tail when its dictionary is no longer the newest, or a quota cut it short', async () => {
    const { projectId, dictionary } = await sealedProject('stale');
    const big = values(PRESEAL_MIN_ENTRIES, 'stale');
    await ingest([presealedRequest(projectId, big, { id: dictionary.id + 1, bytes: dictionary.bytes })], [big]);
    // A full run in the tail, which background sealing may already have taken: in the tail, or sealed from it (one snapshot).
    const [where] = await rawRows(
      db,
      `SELECT (SELECT COALESCE(SUM(entries), 0) FROM log_tails WHERE project_id = $1) AS tail,
        (SELECT COALESCE(SUM(entries), 0) FROM log_sealed WHERE project_id = $1) AS sealed`,
      [projectId],
    );
    assert.equal(where!.tail! + where!.sealed!, 50 + big.length);
    const named = await rawRows(db, 'SELECT DISTINCT dictionary_id AS id FROM log_sealed WHERE project_id = $1', [projectId]);
    assert.deepEqual(
      named.map((r) => r.id),
      [dictionary.id],
      'no block names the dictionary it was not sealed with',
    );
    await assertFound(projectId, { words: ['stale'] }, (b) => /"stale[ -]/.test(b));

    const limited = await sealedProject('limited', 50 + 1000);
    const cut = values(PRESEAL_MIN_ENTRIES, 'cut');
    const [outcomes] = await ingest([presealedRequest(limited.projectId, cut, limited.dictionary)], [cut]);
    assert.equal(outcomes!.filter((o) => 'id' in o).length, 1000);
    assert.equal(await tailOf(limited.projectId), 1000, 'the admitted part went to the tail');
    assert.equal((await storage.getProject(limited.projectId))!.entryCount, 1050);
    await assertFound(limited.projectId, { words: ['cut'] }, (b) => b.includes('"cut step'));
  });
});
