/**
 * The log verbs of the storage contract on both backends, below HTTP: the
 * ingest verb's outcomes, id order and counters, each query plan (words,
 * prefixes and exact-match filters through the block index, level-only
 * queries through the index's level terms, narrow and wide time ranges,
 * groups) checked against a brute-force filter deciding from each stored
 * entry itself, `logsAfter`, `lastLogId` and `lastLogIdOf`; and the group-commit queue
 * over a real database.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { silentLogger } from '../../lib/core/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { ExactFilter } from '../../lib/search/log-filter.js';
import type { LogRow, LogSelection, PreparedEntry } from '../../lib/storage/types-logs.js';
import type { Storage } from '../../lib/storage/storage.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { IngestQueue } from '../../lib/ingest/ingest-queue.js';
import { wordsOf } from '../../lib/search/search-terms.js';
import { describeEachBackend, newTestDatabase, type TestDatabase } from '../support/backends.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';

const T0 = Date.UTC(2025, 0, 1);
const MINUTE = 60_000;
/** More than the SQLite plan's narrow-range cap (4000), so the wide-range walk runs too. */
const MANY = 6000;
/** Transactions project A's and B's entries are spread over (so their ids interleave). */
const ROUNDS = 10;
/** Project C: this many quiet entries and one critical among them. */
const QUIET = 5000;
const CRITICAL_AT = 3210;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function entries(count: number, start: number, step: number): PreparedEntry[] {
  const values = Array.from({ length: count }, (_, i) => ({
    level: ['debug', 'info', 'warning', 'error', 'critical'][(i * 7) % 5 === 4 && i % 11 !== 0 ? 2 : (i * 7) % 5]!,
    event: `e${i % 13} row${i}`,
    timestamp: new Date(start + i * step).toISOString(),
    shard: `s${i % 3}`,
    n: i % 5,
    ok: i % 4 === 0,
    ctx: { user: `u${i % 7}`, tags: [`t${i % 2}`] },
  }));
  const batch = entriesFromValues(values);
  assert.equal(batch.rejected.length, 0);
  return batch.entries;
}

// ---- the oracle: the filter rules decided from the stored entry, written from the rules ----

/** Walk object keys (never into arrays); a string equals, a number or boolean by its JSON text. */
function exactHolds(entry: Json, filter: ExactFilter): boolean {
  let node: Json | undefined = entry;
  for (const key of filter.path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
    node = Object.entries(node).find(([k]) => k === key)?.[1];
    if (node === undefined) return false;
  }
  if (typeof node === 'string') return node === filter.value;
  if (typeof node === 'number' || typeof node === 'boolean') return JSON.stringify(node) === filter.value;
  return false;
}

/** Runs of letters and digits of each string value and number JSON text (keys excluded), lower-cased, cut at 64 code points. */
function wordsIn(entry: Json, into = new Set<string>()): Set<string> {
  if (typeof entry === 'string' || typeof entry === 'number') {
    const text = typeof entry === 'string' ? entry : JSON.stringify(entry);
    for (const run of text.match(/[\p{L}\p{N}]+/gu) ?? []) into.add([...run.toLowerCase()].slice(0, 64).join(''));
  } else if (Array.isArray(entry)) for (const x of entry) wordsIn(x, into);
  else if (entry !== null && typeof entry === 'object') for (const [, x] of Object.entries(entry)) wordsIn(x, into);
  return into;
}

interface Stored {
  id: number;
  projectId: number;
  level: number;
  ts: number;
  body: string;
  entry: Json;
  words: Set<string>;
}

describeEachBackend('log storage verbs', (backend) => {
  let db: TestDatabase;
  let storage: Storage;
  let projectA: number;
  let projectB: number;
  let projectC: number;
  /** Everything stored, with the entry as stored. */
  const stored: Stored[] = [];
  const byId = new Map<number, Stored>();
  /** Per round of A and B: the ids each got. */
  const rounds: { a: number[]; b: number[] }[] = [];

  function record(projectId: number, prepared: PreparedEntry[], outcomes: readonly unknown[]): number[] {
    assert.equal(outcomes.length, prepared.length);
    return outcomes.map((o, i) => {
      assert.ok(o !== null && typeof o === 'object' && 'id' in o, 'no quota is set, so every entry is stored');
      const id = (o as { id: number }).id;
      const entry = JSON.parse(prepared[i]!.body) as Json;
      const row: Stored = { id, projectId, level: prepared[i]!.level, ts: prepared[i]!.timestamp, body: prepared[i]!.body, entry, words: wordsIn(entry) };
      stored.push(row);
      byId.set(id, row);
      return id;
    });
  }

  before(async () => {
    db = await newTestDatabase(backend);
    storage = await openStorage(db.config, { logger: silentLogger });
    const group = await storage.write((tx) => tx.insertGroup('logs', T0));
    const project = async (name: string) =>
      (await storage.write((tx) => tx.insertProject({ groupId: group.id, name, retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: T0 }))).id;
    projectA = await project('a');
    projectB = await project('b');
    projectC = await project('c');
    assert.ok(projectA < projectB, 'projects A, B, C in creation order');
    const a = entries(MANY, T0, MINUTE);
    const b = entries(500, T0 + 30 * MINUTE, 7 * MINUTE);
    // B's request first in each transaction: ids still go project by project.
    for (let r = 0; r < ROUNDS; r++) {
      const sliceA = a.slice((r * a.length) / ROUNDS, ((r + 1) * a.length) / ROUNDS);
      const sliceB = b.slice((r * b.length) / ROUNDS, ((r + 1) * b.length) / ROUNDS);
      const [outB, outA] = await storage.write((tx) => tx.ingestLogs([encodeRequest(projectB, T0, sliceB), encodeRequest(projectA, T0, sliceA)]));
      rounds.push({ b: record(projectB, sliceB, outB!), a: record(projectA, sliceA, outA!) });
    }
    // C: one transaction, thousands of quiet entries and a single critical one.
    const quiet = entriesFromValues(
      Array.from({ length: QUIET }, (_, i) => ({
        level: i === CRITICAL_AT ? 'critical' : i % 2 === 0 ? 'info' : 'debug',
        event: i === CRITICAL_AT ? 'disk on fire' : `quiet tick ${i}`,
        timestamp: new Date(T0 + i * 1000).toISOString(),
        shard: `s${i % 3}`,
      })),
    ).entries;
    const [outC] = await storage.write((tx) => tx.ingestLogs([encodeRequest(projectC, T0, quiet)]));
    record(projectC, quiet, outC!);
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
          selection.exact.every((e) => exactHolds(r.entry, e)) &&
          selection.words.every((w) => r.words.has(w)) &&
          selection.prefixes.every((p) => [...r.words].some((w) => w.startsWith(p))),
      )
      .map((r) => r.id)
      .sort((x, y) => y - x);
  }

  /** Rows are the stored entries themselves. */
  function assertRowsStored(rows: readonly LogRow[]): void {
    for (const row of rows) {
      const s = byId.get(row.id);
      assert.ok(s, `row ${row.id} was stored`);
      assert.equal(row.projectId, s.projectId);
      assert.equal(row.body, s.body);
      assert.equal(row.receivedAt, T0);
    }
  }

  it('gives ids in submitted order per project, project by project within a transaction, and counts usage', async () => {
    for (const projectId of [projectA, projectB, projectC]) {
      const ids = stored.filter((r) => r.projectId === projectId).map((r) => r.id);
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
      );
    }
    assert.equal(new Set(stored.map((r) => r.id)).size, stored.length);
    // Within one transaction: A (lower id) before B, though B's request came first.
    for (const { a, b } of rounds) assert.ok(Math.max(...a) < Math.min(...b), "project A's entries first");
    // Across transactions the projects interleave.
    assert.ok(rounds[1]!.a[0]! > rounds[0]!.b[0]!, 'the next transaction continues after B');
    assert.equal((await storage.getProject(projectA))!.entryCount, MANY);
    assert.equal((await storage.getProject(projectC))!.entryCount, QUIET);
    assert.equal(await storage.lastLogId(), Math.max(...stored.map((r) => r.id)));
    const lastOf = (ids: number[]) => Math.max(0, ...stored.filter((r) => ids.includes(r.projectId)).map((r) => r.id));
    for (const ids of [[projectA], [projectB], [projectC], [projectA, projectC], [projectA, projectB, projectC]]) {
      assert.equal(await storage.lastLogIdOf(ids), lastOf(ids), `last id of projects ${ids.join(',')}`);
    }
    assert.equal(await storage.lastLogIdOf([projectC + 1000]), 0, 'a project without entries');
  });

  it('answers every plan exactly like a brute-force filter, page by page', async () => {
    const base = { minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };
    const shard = (v: string): ExactFilter => ({ path: ['shard'], value: v });
    const empty = new Set<LogSelection>();
    const none = (selection: LogSelection): LogSelection => {
      empty.add(selection);
      return selection;
    };
    const selections: LogSelection[] = [
      { ...base, projectIds: [projectA] },
      { ...base, projectIds: [projectA], minLevel: 3 },
      { ...base, projectIds: [projectA], minLevel: 4 },
      { ...base, projectIds: [projectA], from: T0 + 100 * MINUTE, to: T0 + 160 * MINUTE },
      { ...base, projectIds: [projectA], from: T0 + 100 * MINUTE, to: T0 + 5000 * MINUTE },
      { ...base, projectIds: [projectA], from: T0 + 10 * MINUTE, to: T0 + 5900 * MINUTE, minLevel: 2 },
      { ...base, projectIds: [projectA], from: T0 + 1000 * MINUTE },
      { ...base, projectIds: [projectA], to: T0 + 20 * MINUTE },
      none({ ...base, projectIds: [projectA], from: T0 + 10 * MINUTE, to: T0 + 9 * MINUTE }),
      { ...base, projectIds: [projectA], words: wordsOf('e7') },
      { ...base, projectIds: [projectA], exact: [shard('s1')], minLevel: 3, from: T0 + 50 * MINUTE, to: T0 + 4500 * MINUTE },
      { ...base, projectIds: [projectA], prefixes: ['row12'] },
      none({ ...base, projectIds: [projectA], words: ['nothingmatches'] }),
      { ...base, projectIds: [projectA, projectB] },
      { ...base, projectIds: [projectA, projectB], minLevel: 3, from: T0 + 40 * MINUTE, to: T0 + 400 * MINUTE },
      { ...base, projectIds: [projectA, projectB], words: wordsOf('e3') },
      { ...base, projectIds: [projectB], from: T0 + 31 * MINUTE, to: T0 + 100 * MINUTE },
      { ...base, projectIds: [projectA, projectB], exact: [shard('s2')] },
      { ...base, projectIds: [projectA, projectB], prefixes: ['row59'] },
      { ...base, projectIds: [projectA], words: wordsOf('row5999') },
      { ...base, projectIds: [projectA], words: wordsOf('row0') },
      // A level alone, and with words, over two projects.
      { ...base, projectIds: [projectA, projectB], minLevel: 2 },
      { ...base, projectIds: [projectA, projectB], minLevel: 4 },
      { ...base, projectIds: [projectA, projectB], minLevel: 3, words: wordsOf('e3') },
      { ...base, projectIds: [projectA, projectB], minLevel: 1, words: wordsOf('e5'), prefixes: ['row4'] },
      // Exact filters with prefixes, words, numbers, booleans, nested paths.
      { ...base, projectIds: [projectA], exact: [shard('s1')], prefixes: ['row1'] },
      { ...base, projectIds: [projectA, projectB], exact: [shard('s0')], prefixes: ['row4', 'e1'] },
      {
        ...base,
        projectIds: [projectA, projectB],
        exact: [
          { path: ['n'], value: '3' },
          { path: ['ok'], value: 'true' },
        ],
      },
      { ...base, projectIds: [projectA], exact: [{ path: ['ctx', 'user'], value: 'u5' }], words: wordsOf('e2') },
      { ...base, projectIds: [projectA], exact: [{ path: ['ctx', 'user'], value: 'u5' }, shard('s1')], from: T0 + 100 * MINUTE, to: T0 + 160 * MINUTE },
      none({ ...base, projectIds: [projectA, projectB], exact: [shard('s1'), shard('s2')] }),
      // Values present in the text but not at the path (or not by the exact-match rule) match nothing.
      none({ ...base, projectIds: [projectA], exact: [{ path: ['shard'], value: 'e7' }] }),
      none({ ...base, projectIds: [projectA], exact: [{ path: ['n'], value: '3.0' }] }),
      none({ ...base, projectIds: [projectA], exact: [{ path: ['ctx', 'tags'], value: 't1' }] }),
      none({ ...base, projectIds: [projectA], exact: [{ path: ['ctx'], value: 'u5' }] }),
      none({ ...base, projectIds: [projectA], words: ['shard'] }),
      // A rare level: one critical entry among thousands, alone and in company.
      { ...base, projectIds: [projectC], minLevel: 4 },
      { ...base, projectIds: [projectC], minLevel: 3 },
      { ...base, projectIds: [projectC], minLevel: 4, words: wordsOf('fire') },
      none({ ...base, projectIds: [projectC], minLevel: 4, words: wordsOf('quiet') }),
      { ...base, projectIds: [projectC], minLevel: 1, prefixes: ['tic'], exact: [shard('s2')] },
      { ...base, projectIds: [projectC], minLevel: 4, from: T0, to: T0 + QUIET * 1000 },
      { ...base, projectIds: [projectC], minLevel: 4, from: T0 + CRITICAL_AT * 1000 - 5000, to: T0 + CRITICAL_AT * 1000 + 5000 },
      { ...base, projectIds: [projectB, projectC], minLevel: 4 },
      { ...base, projectIds: [projectA, projectB, projectC], minLevel: 4, exact: [shard('s0')] },
      // Wide ranges over several projects: those whose range reaches their newest entry walk together.
      { ...base, projectIds: [projectA, projectC], from: T0 + 10 * MINUTE },
      { ...base, projectIds: [projectA, projectC], from: T0, to: T0 + 6000 * MINUTE },
      { ...base, projectIds: [projectA, projectB, projectC], from: T0 + 10 * MINUTE, to: T0 + 5000 * MINUTE, minLevel: 2 },
      { ...base, projectIds: [projectA, projectB, projectC], from: T0 + 10 * MINUTE, to: T0 + 5000 * MINUTE, exact: [shard('s1')] },
      { ...base, projectIds: [projectA, projectC], from: T0 + 10 * MINUTE, exact: [shard('s2')], words: wordsOf('tick') },
      { ...base, projectIds: [projectA, projectC], from: T0 + 10 * MINUTE, prefixes: ['row3'] },
      { ...base, projectIds: [projectA, projectC], from: T0 + 10 * MINUTE, to: T0 + 6000 * MINUTE, prefixes: ['tic'] },
    ];
    const expectations = selections.map(brute);
    // The oracle is not trivially empty: only the cases meant to match nothing do.
    selections.forEach((selection, i) => void assert.equal(expectations[i]!.length === 0, empty.has(selection), `case ${i} finds ${expectations[i]!.length}`));
    assert.deepEqual(
      expectations[
        selections.findIndex((s) => s.projectIds.length === 1 && s.projectIds[0] === projectC && s.minLevel === 4 && s.words.length === 0 && s.from === null)
      ],
      [stored.find((r) => r.projectId === projectC && r.level === 4)!.id],
    );
    // Large pages walk everything; small ones take the early exits of each plan.
    for (const limit of [700, 37]) {
      for (const [i, selection] of selections.entries()) {
        const expected = expectations[i]!;
        const got: number[] = [];
        let beforeId: number | undefined;
        for (let guard = 0; guard < (limit === 700 ? 100 : 3); guard++) {
          const page = await storage.queryLogs(selection, { limit, ...(beforeId === undefined ? {} : { beforeId }) });
          assertRowsStored(page);
          got.push(...page.map((r) => r.id));
          if (page.length < limit) break;
          beforeId = page[page.length - 1]!.id;
        }
        const what = JSON.stringify({ case: i, limit, ...selection });
        assert.deepEqual(got, expected.slice(0, got.length), what);
        assert.ok(got.length === expected.length || got.length >= limit, `a short page only at the end: ${what}`);
      }
    }
  });

  it('reads oldest first above an id (logsAfter)', async () => {
    const selection: LogSelection = { projectIds: [projectA, projectB], minLevel: 3, from: null, to: null, words: [], prefixes: [], exact: [] };
    const all = brute(selection).reverse();
    const after = all[100]!;
    const got = await storage.logsAfter(selection, after, 50);
    assert.deepEqual(
      got.map((r) => r.id),
      all.slice(101, 151),
    );
    assertRowsStored(got);
    for (const extra of [
      { words: wordsOf('e5') },
      { exact: [{ path: ['shard'], value: 's1' }], prefixes: ['row2'] },
      { minLevel: null, exact: [{ path: ['ctx', 'user'], value: 'u3' }] },
    ]) {
      const filtered = { ...selection, ...extra };
      const expected = brute(filtered).reverse();
      assert.ok(expected.length > 30, `${expected.length} entries`);
      assert.deepEqual(
        (await storage.logsAfter(filtered, 0, 10)).map((r) => r.id),
        expected.slice(0, 10),
        JSON.stringify(extra),
      );
      assert.deepEqual(
        (await storage.logsAfter(filtered, expected[20]!, 10)).map((r) => r.id),
        expected.slice(21, 31),
        JSON.stringify(extra),
      );
    }
    // The one critical entry of C, found oldest first too, and nothing after it.
    const critical = stored.find((r) => r.projectId === projectC && r.level === 4)!.id;
    const rare: LogSelection = { ...selection, projectIds: [projectC], minLevel: 4 };
    assert.deepEqual(
      (await storage.logsAfter(rare, 0, 10)).map((r) => r.id),
      [critical],
    );
    assert.deepEqual(await storage.logsAfter(rare, critical, 10), []);
    assert.equal(got[0]!.body.startsWith('{'), true);
  });

  it('reads oldest first above an id within a time range some projects hold nothing of (logsAfter)', async () => {
    const base: LogSelection = { projectIds: [projectA, projectB, projectC], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };
    // Only A holds entries from minute 4000 on; none holds any from minute 7000.
    for (const selection of [
      { ...base, from: T0 + 4000 * MINUTE },
      { ...base, from: T0 + 4000 * MINUTE, to: T0 + 4100 * MINUTE, words: wordsOf('e5') },
      { ...base, from: T0 + 20 * MINUTE, to: T0 + 40 * MINUTE, minLevel: 2 },
    ]) {
      const expected = brute(selection).reverse();
      assert.ok(expected.length > 5, `${expected.length} entries`);
      assert.deepEqual(
        (await storage.logsAfter(selection, 0, 200)).map((r) => r.id),
        expected.slice(0, 200),
      );
      assert.deepEqual(
        (await storage.logsAfter(selection, expected[2]!, 3)).map((r) => r.id),
        expected.slice(3, 6),
      );
    }
    assert.deepEqual(await storage.logsAfter({ ...base, from: T0 + 7000 * MINUTE }, 0, 10), []);
    assert.deepEqual(await storage.logsAfter({ ...base, projectIds: [projectB, projectC], from: T0 + 4000 * MINUTE }, 0, 10), []);
  });

  it('finds ASCII words and prefixes held through U+212A KELVIN SIGN and U+0130 (their lower case is ASCII)', async () => {
    const group = (await storage.getProject(projectA))!.groupId;
    const projectD = (
      await storage.write((tx) => tx.insertProject({ groupId: group, name: 'd', retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: T0 }))
    ).id;
    const events = [
      'alpha zz\u0130x 300\u212a ba\u212ae',
      'alpha zzix 300k bake',
      'beta zz\u0130 gamma',
      'beta ZZIX GAMMA BAKE',
      'alpha beta gamma delta zz\u0130q',
      'kelvin only \u212a',
      'nothing of the sort',
    ];
    const prepared = entriesFromValues(events.map((event, i) => ({ level: 'info', event, timestamp: new Date(T0 + i).toISOString() }))).entries;
    const [outcomes] = await storage.write((tx) => tx.ingestLogs([encodeRequest(projectD, T0, prepared)]));
    const ids = record(projectD, prepared, outcomes!);
    const base = { projectIds: [projectD], minLevel: null, from: null, to: null, exact: [] };
    const cases: [Pick<LogSelection, 'words' | 'prefixes'>, number[]][] = [
      [{ words: [], prefixes: ['zzi'] }, [0, 1, 2, 3, 4]],
      [{ words: ['zzi'], prefixes: [] }, []],
      [{ words: ['zzix'], prefixes: [] }, [1, 3]],
      [{ words: [], prefixes: ['zzix'] }, [1, 3]],
      [{ words: ['300k', 'bake'], prefixes: [] }, [0, 1]],
      [{ words: ['k'], prefixes: [] }, [5]],
      [{ words: [], prefixes: ['k'] }, [5]],
      [{ words: [], prefixes: ['bak', '300'] }, [0, 1]],
      [{ words: ['alpha', 'beta', 'gamma', 'delta'], prefixes: ['zzi'] }, [4]],
      [{ words: ['alpha', 'beta', 'gamma', 'delta'], prefixes: ['zzix'] }, []],
    ];
    for (const [text, expectedAt] of cases) {
      const selection: LogSelection = { ...base, ...text };
      const expected = expectedAt.map((i) => ids[i]!).reverse();
      assert.deepEqual(brute(selection), expected, `the oracle agrees: ${JSON.stringify(text)}`);
      assert.deepEqual(
        (await storage.queryLogs(selection, { limit: 50 })).map((r) => r.id),
        expected,
        JSON.stringify(text),
      );
      assert.deepEqual(
        (await storage.logsAfter(selection, 0, 50)).map((r) => r.id),
        [...expected].reverse(),
        `oldest first: ${JSON.stringify(text)}`,
      );
    }
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
    const prepared = entries(1, T0, MINUTE);
    const before = (await storage.getProject(projectB))!.entryCount;
    const results = Promise.all(Array.from({ length: 40 }, () => queue.submit(encodeRequest(projectB, T0, prepared))));
    await queue.close();
    const outcomes = await results;
    assert.ok(
      outcomes.every((o) => o.length === 1 && 'id' in o[0]!),
      'every entry stored',
    );
    assert.ok(transactions < 40, `${transactions} transactions for 40 requests`);
    assert.equal((await storage.getProject(projectB))!.entryCount, before + 40);
    await assert.rejects(queue.submit(encodeRequest(projectB, T0, prepared)));
  });

  it('isolates a failing request: the others of its transaction still commit', async () => {
    const queue = new IngestQueue(storage, { concurrency: 1, maxEntriesPerCommit: 10_000, maxBytesPerCommit: 1 << 24, logger: silentLogger });
    const prepared = entries(2, T0, MINUTE);
    const blocker = queue.submit(encodeRequest(projectB, T0, prepared));
    const good = queue.submit(encodeRequest(projectB, T0, prepared));
    const bad = queue.submit(encodeRequest(987654, T0, prepared));
    const alsoGood = queue.submit(encodeRequest(projectA, T0, prepared));
    await blocker;
    assert.equal((await good).length, 2);
    await assert.rejects(bad);
    assert.equal((await alsoGood).length, 2);
    await queue.close();
  });
});
