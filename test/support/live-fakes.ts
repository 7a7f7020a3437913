/**
 * A live feed's surroundings in memory, for unit tests of feed.ts: storage
 * whose entries match the filter `q=wanted` or not, recording each read,
 * and a response that keeps what is written to it.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Feed } from '../../lib/live/feed.js';
import type { Horizons } from '../../lib/live/horizons.js';
import { Subscription } from '../../lib/live/subscription.js';
import type { LiveScope } from '../../lib/live/live-scope.js';
import type { CommittedEntries, CommittedRow } from '../../lib/ingest/committed-entries.js';
import type { LogFilter } from '../../lib/search/log-filter.js';
import type { ReadOps } from '../../lib/storage/storage.js';
import type { LogRow, LogSelection } from '../../lib/storage/types-logs.js';

export const FILTER: LogFilter = { minLevel: null, from: null, to: null, words: ['wanted'], prefixes: [], exact: [] };
export const PAGE = { entries: 200, bytes: 64 * 1024 };
export const PROJECT: LiveScope = { kind: 'project', projectId: 1, groupId: 9 };
export const GROUP: LiveScope = { kind: 'group', groupId: 9 };

interface Stored {
  id: number;
  projectId: number;
  wanted: boolean;
}

/** The stored text of an entry: only wanted ones hold the word `wanted`. */
function bodyOf(e: Stored): string {
  return `{"level":"info","event":"${e.wanted ? 'wanted' : 'other'} ${e.id}","timestamp":"2025-01-01T00:00:00Z"}`;
}

function rowOf(e: Stored): CommittedRow {
  return { id: e.id, projectId: e.projectId, receivedAt: 0, body: bodyOf(e), level: 1, timestamp: Date.parse('2025-01-01T00:00:00Z') };
}

/** Storage in memory, recording where each read started. */
export class FakeReads {
  readonly entries: Stored[] = [];
  readonly readsAfter: number[] = [];
  /** Reads of the projects' last id. */
  probes = 0;
  /** What a settle answers (null: the last id stored). */
  settledAt: number | null = null;
  /** The unblocked projects of the group. */
  groupProjects = [1, 2];

  add(projectId: number, count: number, wanted = false): number {
    for (let i = 0; i < count; i++) this.entries.push({ id: this.lastId() + 1, projectId, wanted });
    return this.lastId();
  }

  lastId(): number {
    return this.entries.at(-1)?.id ?? 0;
  }

  /**
   * What ingestion reports for the entries stored after `afterId` as one
   * transaction; `lastIdsBefore` as PostgreSQL reports it, when asked.
   */
  committed(afterId: number, withLastIdsBefore = false): CommittedEntries {
    const stored = this.entries.filter((e) => e.id > afterId);
    const counts = new Map<number, number>();
    for (const e of stored) counts.set(e.projectId, (counts.get(e.projectId) ?? 0) + 1);
    const before = new Map(
      [...counts.keys()].map((p) => [p, Math.max(0, ...this.entries.filter((e) => e.projectId === p && e.id <= afterId).map((e) => e.id))]),
    );
    return {
      projectIds: [...counts.keys()],
      firstId: stored[0]!.id,
      maxId: stored.at(-1)!.id,
      counts,
      lastIdsBefore: withLastIdsBefore ? before : null,
      rows: (projectIds) => stored.filter((e) => projectIds.includes(e.projectId)).map(rowOf),
    };
  }

  asReadOps(): ReadOps {
    const reads: Partial<ReadOps> = {
      projectIdsOfGroup: async () => this.groupProjects.map((id) => ({ id, isBlocked: false })) as Awaited<ReturnType<ReadOps['projectIdsOfGroup']>>,
      lastLogId: async (settled?: readonly number[]) => (settled && this.settledAt !== null ? this.settledAt : this.lastId()),
      lastLogIdOf: async (projectIds: readonly number[]) => {
        this.probes++;
        return Math.max(0, ...this.entries.filter((e) => projectIds.includes(e.projectId)).map((e) => e.id));
      },
      logsAfter: async (selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> => {
        this.readsAfter.push(afterId);
        return this.entries
          .filter((e) => e.id > afterId && e.wanted && selection.projectIds.includes(e.projectId))
          .slice(0, limit)
          .map((e) => ({ id: e.id, projectId: e.projectId, receivedAt: 0, body: bodyOf(e) }));
      },
    };
    return reads as ReadOps;
  }
}

/** The response side of a stream: keeps what is written. */
export class FakeResponse extends EventEmitter {
  text = '';
  /** What `write` answers: false stands for a full socket buffer. */
  accepts = true;
  write(chunk: string): boolean {
    this.text += chunk;
    return this.accepts;
  }
  end(): void {}
  destroy(): void {}
  sentIds(): number[] {
    return [...this.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  }
}

/** A subscription on a fake response, its cursor not yet set. */
export function subscribe(scope: LiveScope): { res: FakeResponse; sub: Subscription } {
  const res = new FakeResponse();
  const sub = new Subscription(res as unknown as ServerResponse, scope, { userId: 1, tokenVersion: 0 });
  return { res, sub };
}

/** A feed over the fake storage with one subscribed stream. */
export function setUp(scope: LiveScope, reads: FakeReads, horizons: Horizons | null = null, page = PAGE) {
  const feed = new Feed('k', scope, FILTER, { db: reads.asReadOps(), horizons, page, onReadError: (err) => assert.fail(String(err)) });
  const { res, sub } = subscribe(scope);
  feed.add(sub);
  return { feed, res, sub };
}
