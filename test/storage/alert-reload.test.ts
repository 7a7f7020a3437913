/**
 * The alert engine against a real database on both backends, with its
 * reload of the rules held back: entries committed after a rule was
 * created, while the engine has not loaded it yet, are matched against it
 * once it has (they are held meanwhile), and none is counted twice.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { silentLogger } from '../../lib/core/logger.js';
import { AlertEngine, type RecordedNotification } from '../../lib/alerts/alert-engine.js';
import { committedEntries } from '../../lib/ingest/committed-entries.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { Storage } from '../../lib/storage/storage.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { describeEachBackend, newTestDatabase, type TestDatabase } from '../support/backends.js';

const T0 = Date.UTC(2025, 3, 1);

describeEachBackend('alert engine: entries committed while rules reload', (backend) => {
  let db: TestDatabase;
  let storage: Storage;
  let projectId: number;
  let searchId: number;
  let authorId: number;

  before(async () => {
    db = await newTestDatabase(backend);
    storage = await openStorage(db.config, { logger: silentLogger });
    const group = (await storage.write((tx) => tx.insertGroup('reload', T0))).id;
    projectId = (
      await storage.write((tx) => tx.insertProject({ groupId: group, name: 'p', retentionDays: 30, maxEntries: null, maxBytes: null, createdAt: T0 }))
    ).id;
    const author = await storage.write((tx) =>
      tx.insertUser({ username: 'author', passwordHash: 'h', displayName: null, email: null, mustChangePassword: false, isPrimaryAdmin: false, createdAt: T0 }),
    );
    authorId = author.id;
    await storage.write((tx) =>
      tx.insertRoleAssignment({ subjectType: 'user', subjectId: authorId, role: 'user', scopeType: 'group', scopeId: group, createdAt: T0 }),
    );
    searchId = (
      await storage.write((tx) => tx.insertSavedSearch({ name: 's', projectId, groupId: null, query: 'q=timeout', authorUserId: authorId, createdAt: T0 }))
    ).id;
  });

  after(async () => {
    await storage.close();
    await db.cleanup();
  });

  /** Stores entries as ingestion does and tells the engine, as the ingest queue does after the commit. */
  async function commit(engine: AlertEngine, events: string[]): Promise<void> {
    const { entries } = entriesFromValues(events.map((event) => ({ level: 'error', event, timestamp: new Date(T0).toISOString() })));
    const request = encodeRequest(projectId, Date.now(), entries);
    const outcomes = await storage.write((tx) => tx.ingestLogs([request]));
    engine.entriesCommitted(committedEntries([request], outcomes, null)!);
  }

  it('matches them against the new rule once it is loaded', async () => {
    let release: () => void = () => {};
    let held: Promise<void> = Promise.resolve();
    // The engine's storage, with its reads of the enabled rules held back while `held` is pending.
    const slow = new Proxy(storage, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (key === 'listEnabledAlertRules')
          return async () => {
            await held;
            return target.listEnabledAlertRules();
          };
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const engine = new AlertEngine({ storage: slow, logger: silentLogger, now: Date.now, passSpacingMs: 0 });
    const recorded: RecordedNotification[] = [];
    engine.onNotification((r) => recorded.push(r));
    await engine.start();
    try {
      await commit(engine, ['timeout before the rule']);
      held = new Promise((resolve) => (release = resolve));
      const rule = await storage.write((tx) =>
        tx.insertAlertRule({
          savedSearchId: searchId,
          authorUserId: authorId,
          createdAt: T0,
          name: 'timeouts',
          kind: 'any_match',
          quietSeconds: 300,
          windowSeconds: null,
          threshold: null,
          enabled: true,
          destinationType: null,
          destinationLabel: null,
          destinationSealed: null,
        }),
      );
      engine.rulesChanged(false);
      await commit(engine, ['ok', 'timeout while the rule loads', 'fine']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(engine.activeRules, 0, 'the reload is still held back');
      release();
      await engine.runDue();
      assert.equal(engine.activeRules, 1);
      assert.equal(recorded.length, 1, 'the entry committed before the rule was loaded notified');
      assert.equal(recorded[0]!.notification.kind, 'fired');
      assert.equal(recorded[0]!.notification.ruleId, rule.id);
      assert.match(recorded[0]!.notification.entries, /timeout while the rule loads/);
      assert.doesNotMatch(recorded[0]!.notification.entries, /before the rule/, 'entries committed before the rule are not');
      // Later entries are matched at once again, and counted once, in the quiet period.
      await commit(engine, ['timeout after']);
      await engine.runDue();
      assert.equal(recorded.length, 1);
      assert.equal((await storage.getAlertRule(rule.id))!.pendingCount, 1);
    } finally {
      release();
      await engine.close();
    }
  });
});
