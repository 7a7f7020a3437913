/**
 * The log verbs of the storage contract on both backends, below HTTP: the
 * ingest verb's outcomes and counters, each query plan (terms through the
 * search index, per-level walks, narrow and wide time ranges, groups)
 * checked against a brute-force filter over the same rows, `logsAfter` and
 * `lastLogId`; and the group-commit queue over a real database.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { silentLogger } from '../../lib/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { LogSelection, PreparedEntry, Storage } from '../../lib/storage/storage.js';
import { prepareBatch } from '../../lib/logs/prepare-entries.js';
import { IngestQueue } from '../../lib/logs/ingest-queue.js';
import { exactTerm, wordsOf } from '../../lib/logs/search-terms.js';
import { describeEachBackend, newTestDatabase, type TestDatabase } from '../support/backends.js';

const T0 = Date.UTC(2025, 0, 1);
const MINUTE = 60_000;
/** More than the SQLite plan's narrow-range cap (4000), so the wide-range walk runs too. */
const MANY = 6000;

function entries(count: number, start: number, step: number): { values: Record<string, unknown>[]; prepared: PreparedEntry[] } {
  const values = Array.from({ length: count }, (_, i) => ({
    level: ['debug', 'info', 'warning', 'error', 'critical'][(i * 7) % 5 === 4 && i % 11 !== 0 ? 2 : (i * 7) % 5]!,
    event: `e${i % 13} row${i}`,
    timestamp: new Date(start + i * step).toISOString(),
    shard: `s${i % 3}`,
  }));
  const batch = prepareBatch(values);
  assert.equal(batch.rejected.length, 0);
  return { values, prepared: batch.entries };
}

describeEachBackend('log storage verbs', (backend) => {
  let db: TestDatabase;
  let storage: Storage;
  let projectA: number;
  let projectB: number;
  /** Everything stored, as [id, projectId, level, ts, terms]. */
  const stored: { id: number; projectId: number; level: number; ts: number; terms: Set<string> }[] = [];

  before(async () => {
    db = await newTestDatabase(backend);
    storage = await openStorage(db.config, { logger: silentLogger });
    const group = await storage.write((tx) => tx.insertGroup('logs', T0));
    projectA = (await storage.write((tx) => tx.insertProject({ groupId: group.id, name: 'a', retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: T0 }))).id;
    projectB = (await storage.write((tx) => tx.insertProject({ groupId: group.id, name: 'b', retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: T0 }))).id;
    const a = entries(MANY, T0, MINUTE);
    const b = entries(500, T0 + 30 * MINUTE, 7 * MINUTE);
    const [outA, outB] = await storage.write((tx) =>
      tx.ingestLogs([
        { projectId: projectA, receivedAt: T0, entries: a.prepared },
        { projectId: projectB, receivedAt: T0, entries: b.prepared },
      ]),
    );
    outA!.forEach((o, i) => stored.push({ id: (o as { id: number }).id, projectId: projectA, level: a.prepared[i]!.level, ts: a.prepared[i]!.timestamp, terms: new Set(a.prepared[i]!.terms.split(' ')) }));
    outB!.forEach((o, i) => stored.push({ id: (o as { id: number }).id, projectId: projectB, level: b.prepared[i]!.level, ts: b.prepared[i]!.timestamp, terms: new Set(b.prepared[i]!.terms.split(' ')) }));
  });
  after(async () => {
    await storage.close();
    await db.cleanup();
  });

  function brute(selection: LogSelection): number[] {
    return stored
      .filter(
        (r) =>
          selection.projectIds.includes(r.projectId) &&
          r.level >= (selection.minLevel ?? 0) &&
          r.ts >= (selection.from ?? -Infinity) &&
          r.ts <= (selection.to ?? Infinity) &&
          selection.terms.every((t) => r.terms.has(t)) &&
          selection.prefixes.every((p) => [...r.terms].some((t) => t.startsWith(p))),
      )
      .map((r) => r.id)
      .sort((x, y) => y - x);
  }

  it('gives ids in submitted order, one outcome per entry, and counts usage', async () => {
    const ids = stored.filter((r) => r.projectId === projectA).map((r) => r.id);
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
    assert.equal(new Set(stored.map((r) => r.id)).size, stored.length);
    const project = await storage.getProject(projectA);
    assert.equal(project!.entryCount, MANY);
    assert.equal(await storage.lastLogId(), Math.max(...stored.map((r) => r.id)));
  });

  it('answers every plan exactly like a brute-force filter, page by page', async () => {
    const base = { minLevel: null, from: null, to: null, terms: [], prefixes: [] };
    const selections: LogSelection[] = [
      { ...base, projectIds: [projectA] },
      { ...base, projectIds: [projectA], minLevel: 3 },
      { ...base, projectIds: [projectA], minLevel: 4 },
      { ...base, projectIds: [projectA], from: T0 + 100 * MINUTE, to: T0 + 160 * MINUTE },
      { ...base, projectIds: [projectA], from: T0 + 100 * MINUTE, to: T0 + 5000 * MINUTE },
      { ...base, projectIds: [projectA], from: T0 + 10 * MINUTE, to: T0 + 5900 * MINUTE, minLevel: 2 },
      { ...base, projectIds: [projectA], from: T0 + 1000 * MINUTE },
      { ...base, projectIds: [projectA], to: T0 + 20 * MINUTE },
      { ...base, projectIds: [projectA], from: T0 + 10 * MINUTE, to: T0 + 9 * MINUTE },
      { ...base, projectIds: [projectA], terms: wordsOf('e7') },
      { ...base, projectIds: [projectA], terms: [exactTerm(['shard'], 's1')], minLevel: 3, from: T0 + 50 * MINUTE, to: T0 + 4500 * MINUTE },
      { ...base, projectIds: [projectA], prefixes: ['row12'] },
      { ...base, projectIds: [projectA], terms: ['nothingmatches'] },
      { ...base, projectIds: [projectA, projectB] },
      { ...base, projectIds: [projectA, projectB], minLevel: 3, from: T0 + 40 * MINUTE, to: T0 + 400 * MINUTE },
      { ...base, projectIds: [projectA, projectB], terms: wordsOf('e3') },
      { ...base, projectIds: [projectB], from: T0 + 31 * MINUTE, to: T0 + 100 * MINUTE },
      { ...base, projectIds: [projectA, projectB], terms: [exactTerm(['shard'], 's2')] },
      { ...base, projectIds: [projectA, projectB], prefixes: ['row59'] },
      { ...base, projectIds: [projectA], terms: wordsOf('row5999') },
    ];
    // Large pages walk everything; small ones take the early exits of each plan.
    for (const limit of [700, 37]) {
      for (const selection of selections) {
        const expected = brute(selection);
        const got: number[] = [];
        let beforeId: number | undefined;
        for (let guard = 0; guard < (limit === 700 ? 100 : 3); guard++) {
          const page = await storage.queryLogs(selection, { limit, ...(beforeId === undefined ? {} : { beforeId }) });
          got.push(...page.map((r) => r.id));
          if (page.length < limit) break;
          beforeId = page[page.length - 1]!.id;
        }
        assert.deepEqual(got, expected.slice(0, got.length), JSON.stringify({ limit, ...selection, terms: selection.terms.length }));
        assert.ok(got.length === expected.length || got.length >= limit, 'a short page only at the end');
      }
    }
  });

  it('reads oldest first above an id (logsAfter)', async () => {
    const selection: LogSelection = { projectIds: [projectA, projectB], minLevel: 3, from: null, to: null, terms: [], prefixes: [] };
    const all = brute(selection).reverse();
    const after = all[100]!;
    const got = await storage.logsAfter(selection, after, 50);
    assert.deepEqual(
      got.map((r) => r.id),
      all.slice(101, 151),
    );
    const withTerms = await storage.logsAfter({ ...selection, terms: wordsOf('e5') }, 0, 10);
    assert.deepEqual(
      withTerms.map((r) => r.id),
      brute({ ...selection, terms: wordsOf('e5') }).reverse().slice(0, 10),
    );
    assert.equal(got[0]!.body.startsWith('{'), true);
  });

  it('group-commits concurrent requests: fewer transactions, every outcome right, close() waits', async () => {
    let transactions = 0;
    const counting: Pick<Storage, 'write'> = {
      write: (fn) => {
        transactions += 1;
        return storage.write(fn);
      },
    };
    const queue = new IngestQueue(counting, { concurrency: 1, maxEntriesPerCommit: 10_000, maxBytesPerCommit: 1 << 24, logger: silentLogger });
    const { prepared } = entries(1, T0, MINUTE);
    const before = (await storage.getProject(projectB))!.entryCount;
    const results = Promise.all(Array.from({ length: 40 }, () => queue.submit({ projectId: projectB, receivedAt: T0, entries: prepared })));
    await queue.close();
    const outcomes = await results;
    assert.ok(outcomes.every((o) => o.length === 1 && 'id' in o[0]!));
    assert.ok(transactions < 40, `${transactions} transactions for 40 requests`);
    assert.equal((await storage.getProject(projectB))!.entryCount, before + 40);
    await assert.rejects(queue.submit({ projectId: projectB, receivedAt: T0, entries: prepared }));
  });

  it('isolates a failing request: the others of its transaction still commit', async () => {
    const queue = new IngestQueue(storage, { concurrency: 1, maxEntriesPerCommit: 10_000, maxBytesPerCommit: 1 << 24, logger: silentLogger });
    const { prepared } = entries(2, T0, MINUTE);
    const blocker = queue.submit({ projectId: projectB, receivedAt: T0, entries: prepared });
    const good = queue.submit({ projectId: projectB, receivedAt: T0, entries: prepared });
    const bad = queue.submit({ projectId: 987654, receivedAt: T0, entries: prepared });
    const alsoGood = queue.submit({ projectId: projectA, receivedAt: T0, entries: prepared });
    await blocker;
    assert.equal((await good).length, 2);
    await assert.rejects(bad);
    assert.equal((await alsoGood).length, 2);
    await queue.close();
  });
});
