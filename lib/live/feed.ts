/**
 * A feed serves every open stream with the same scope and filter. When new
 * entries may exist, it reads them from storage by id (`id > cursor`,
 * ascending, the same filter as `GET /v1/logs`) and writes each page to the
 * streams waiting at that cursor. Storage is the only buffer, so:
 * - gapless resume is the same code as live delivery (`since_id` is just a
 *   starting cursor);
 * - a slow stream falls behind on its own cursor and catches up later, never
 *   holding more than one page, never losing an entry;
 * - streams at the same cursor (the usual case: every caught-up stream of a
 *   feed) share one query and one page of frame text per notification.
 *
 * Fairness: each round serves one page per cursor, so a long catch-up
 * replay never delays live delivery to the other streams of the feed.
 *
 * From memory: a stream that has everything before a committed
 * transaction's entries (its cursor at or past the last id that could
 * precede them) is sent that transaction's matching entries straight from
 * the ingestion that stored them, and its cursor moves past the
 * transaction; nothing is read. Any stream that does not qualify (behind,
 * paused, or the transaction too large or unknown) is served by reads as
 * above, and each read that catches up moves the cursors to where the next
 * transaction qualifies again.
 */
import type { LogFilter } from '../search/log-filter.js';
import type { LogSelection } from '../storage/types-logs.js';
import type { ReadOps } from '../storage/storage.js';
import { filterIsEmpty } from '../logs/log-query-params.js';
import type { CommittedEntries, CommittedRow } from '../ingest/committed-entries.js';
import { entryMatcher, type EntryTest } from '../search/entry-match.js';
import { ChunkWords, wordProbeOf, type WordProbe } from '../search/chunk-words.js';
import { selectionOf } from '../logs/log-reader.js';
import { framePage } from './frame-page.js';
import type { LiveScope } from './live-scope.js';
import type { Horizons } from './horizons.js';
import type { Subscription } from './subscription.js';

/** Bookkeeping a feed keeps per stream. */
interface Member {
  /** The feed generation this stream was last found caught up at (-1: never). */
  caughtUpAt: number;
}

/** What a feed reads from and reports to. */
export interface FeedContext {
  db: ReadOps;
  /** Present when ids of different projects may commit out of order (PostgreSQL). */
  horizons: Horizons | null;
  /**
   * Where ids commit in order: the largest id known to have committed
   * (every id up to it has). Without it, a read asks storage.
   */
  committedThrough?: () => number;
  /** Entries per storage read; bytes of frames per write (a page stops after the entry that reaches it). */
  page: { entries: number; bytes: number };
  onReadError: (err: unknown) => void;
  /** Counts for metrics. */
  tally?: FeedTally;
}

/** What a feed counts for metrics. */
export interface FeedTally {
  /** Log frames written, counted once per stream. */
  framesSent(frames: number): void;
  /** A read of new entries from storage. */
  read(): void;
}

const NO_TALLY: FeedTally = { framesSent: () => {}, read: () => {} };

/** A transaction of up to this many reads' worth of entries is matched in memory. */
const MEMORY_PAGES = 3;

export class Feed {
  private readonly members = new Map<Subscription, Member>();
  /** Bumped on every hint that entries may be new. */
  private generation = 0;
  /** Settles must have started at or after this horizon clock to serve the next read. */
  private needClock = 0;
  private running: Promise<void> | null = null;
  /** The last read failed; the hub retries at the next heartbeat. */
  failed = false;
  private readonly empty: boolean;
  /**
   * The feed's last read sent nothing, so its filter may match nothing for
   * a while: the next read first reads the projects' last id, to move the
   * positions past what it checks. A feed whose reads send entries moves
   * with them and spares that statement.
   */
  private probing = true;
  /**
   * What is read: the filter over the one project, or over the group's
   * unblocked projects as last resolved (null: nothing to read; undefined:
   * resolve before the next read).
   */
  private selected: LogSelection | null | undefined = undefined;
  /** Bumped by `refreshProjects`, so a resolution already under way is not kept. */
  private selectionVersion = 0;
  /** The filter's text conditions (null: none). */
  private readonly textTest: EntryTest | null;
  /** The words a committed chunk must hold for an entry of it to match (null: none to look for), and their scanner. */
  private readonly probe: WordProbe | null;
  private readonly words: ChunkWords | null;

  private readonly db: ReadOps;
  private readonly horizons: Horizons | null;
  private readonly page: { entries: number; bytes: number };
  private readonly onReadError: (err: unknown) => void;
  private readonly tally: FeedTally;
  private readonly committedThrough: (() => number) | null;

  constructor(
    readonly key: string,
    readonly scope: LiveScope,
    readonly filter: LogFilter,
    context: FeedContext,
  ) {
    this.db = context.db;
    this.horizons = context.horizons;
    this.page = context.page;
    this.onReadError = context.onReadError;
    this.tally = context.tally ?? NO_TALLY;
    this.committedThrough = context.committedThrough ?? null;
    this.empty = filterIsEmpty(filter);
    this.textTest = entryMatcher(filter);
    this.probe = wordProbeOf(filter);
    this.words = this.probe && new ChunkWords([this.probe]);
  }

  /**
   * A group's set of unblocked projects may have changed (a project was
   * created, blocked or unblocked): resolve it again before the next read.
   */
  refreshProjects(): void {
    if (this.scope.kind !== 'group') return;
    this.selected = undefined;
    this.selectionVersion += 1;
  }

  /**
   * Where a stream opened now without since_id starts: the last id
   * stored, once ingestion in flight into the feed's projects has committed,
   * so an entry of theirs committing after the subscription is never left
   * below the start.
   */
  async startPosition(): Promise<number> {
    const selection = await this.selection();
    if (this.horizons && selection) return this.horizons.start(selection.projectIds);
    return this.db.lastLogId();
  }

  /** Whether entries of this project are read now (a group's project not yet known answers false). */
  reads(projectId: number): boolean {
    return this.selected?.projectIds.includes(projectId) ?? false;
  }

  get size(): number {
    return this.members.size;
  }

  add(sub: Subscription): void {
    this.members.set(sub, { caughtUpAt: -1 });
    sub.onDrain = () => this.kick();
  }

  remove(sub: Subscription): void {
    this.members.delete(sub);
  }

  /**
   * Entries up to `maxId` may be new: serve every stream not already past
   * it. `clock`: the horizon clock when the news arrived.
   */
  entriesMayExist(maxId = Number.POSITIVE_INFINITY, clock = 0): void {
    this.needClock = Math.max(this.needClock, clock);
    let behind = false;
    for (const sub of this.members.keys()) {
      if (sub.cursor === null || sub.cursor < maxId) {
        behind = true;
        break;
      }
    }
    if (!behind) return;
    this.generation += 1;
    this.kick();
  }

  /**
   * A transaction committed entries for `projectIds` (those of its projects
   * this feed covers; for a group, all of them in the group). Sends them
   * from memory to every ready stream whose cursor is at or past the
   * transaction's `after`, and moves those cursors to its `through`:
   * - ids commit in order (SQLite): `after` is the id before its first
   *   (every smaller id has committed) and `through` its largest (no other
   *   transaction holds an id in between), whatever projects it touched;
   * - otherwise (PostgreSQL) only a project's stream: `after` is the
   *   project's last id before the transaction, read under its lock, and
   *   `through` the transaction's largest id (the project's next
   *   transaction draws its ids after this one committed).
   * Returns without touching a stream whose cursor it cannot vouch for;
   * `entriesMayExist` serves those by reading.
   */
  takeCommitted(committed: CommittedEntries, projectIds: readonly number[], inOrder: boolean): void {
    if (this.empty || this.members.size === 0) return;
    const selection = this.selected;
    if (!selection) return;
    let after: number;
    if (inOrder) after = committed.firstId - 1;
    else if (this.scope.kind === 'project' && projectIds.length === 1 && projectIds[0] === this.scope.projectId) {
      const before = committed.lastIdsBefore?.get(this.scope.projectId);
      if (before === undefined) return;
      after = before;
    } else return;
    let entries = 0;
    for (const id of projectIds) {
      // A project the selection left out (created or unblocked since): the next read resolves it.
      if (!selection.projectIds.includes(id)) return;
      entries += committed.counts.get(id) ?? 0;
    }
    // Matching costs CPU on the event loop; past a few reads' worth, the index does it better.
    if (entries > this.page.entries * MEMORY_PAGES) return;
    const byCursor = new Map<number, Subscription[]>();
    for (const sub of this.members.keys()) {
      if (!sub.ready || (sub.cursor as number) < after) continue;
      const cursor = sub.cursor as number;
      const group = byCursor.get(cursor);
      if (group) group.push(sub);
      else byCursor.set(cursor, [sub]);
    }
    if (byCursor.size === 0) return;
    const holds = this.words?.forCommit();
    const probe = this.probe;
    const mayMatch = holds && probe ? (rows: Uint8Array) => holds(rows, probe) : undefined;
    const rows = entries === 0 ? [] : committed.rows(projectIds, mayMatch).filter((row) => this.matches(row));
    const through = committed.maxId;
    for (const [cursor, subs] of byCursor) {
      // A read that ran after the commit may have sent some of them already.
      const unsent = rows.filter((row) => row.id > cursor);
      if (unsent.length > 0) {
        const { text, lastId, count } = framePage(unsent, this.page.bytes);
        for (const sub of subs) sub.deliver(text, lastId);
        this.tally.framesSent(count * subs.length);
        // The rest goes out by reading, from the new cursor.
        if (count < unsent.length) continue;
      }
      for (const sub of subs) sub.passChecked(through);
    }
  }

  /** Whether a committed entry passes the filter, as a read would decide it. */
  private matches(row: CommittedRow): boolean {
    const f = this.filter;
    if (f.minLevel !== null && row.level < f.minLevel) return false;
    if (f.from !== null && row.timestamp < f.from) return false;
    if (f.to !== null && row.timestamp > f.to) return false;
    return this.textTest === null || this.textTest(row.body);
  }

  /** Runs a serving pass unless one is running (which will see the new generation). */
  kick(): Promise<void> {
    if (this.empty) return Promise.resolve();
    this.running ??= this.serve().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Resolves when no read is in flight (for shutdown). */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async serve(): Promise<void> {
    this.failed = false;
    for (;;) {
      const waiting = this.waitingByCursor();
      if (waiting.size === 0) return;
      for (const [cursor, subs] of waiting) {
        try {
          await this.servePage(cursor, subs);
        } catch (err) {
          // Nothing was sent for this page; the cursors still point before
          // it, so a later pass (next notification or heartbeat) resends.
          this.failed = true;
          this.onReadError(err);
          return;
        }
      }
    }
  }

  /** Ready streams not yet caught up with the current generation, grouped by cursor. */
  private waitingByCursor(): Map<number, Subscription[]> {
    const groups = new Map<number, Subscription[]>();
    for (const [sub, member] of this.members) {
      if (!sub.ready || member.caughtUpAt >= this.generation) continue;
      const cursor = sub.cursor as number;
      const group = groups.get(cursor);
      if (group) group.push(sub);
      else groups.set(cursor, [sub]);
    }
    return groups;
  }

  private async servePage(cursor: number, subs: Subscription[]): Promise<void> {
    // Notifications arriving during the read bump the generation, so they
    // are served by a later round even if this page comes back short.
    const generation = this.generation;
    const selection = await this.selection();
    if (!selection) {
      this.markCaughtUp(subs, generation);
      return;
    }
    // Settle first, then read: every entry at or below the horizon is
    // committed before the read starts, so the read sees all of them.
    const horizon =
      this.horizons && selection.projectIds.length > 1 ? await this.horizons.settle(selection.projectIds, this.needClock) : Number.POSITIVE_INFINITY;
    // Also before the read: the projects' last id. Ids of one project commit
    // in order (on SQLite all ids do; over several projects on PostgreSQL
    // the horizon bounds the rest), so every entry of theirs up to the
    // smaller of the two has committed and the read sees it. Read whenever
    // passing the cursors there lets later transactions come from memory.
    const stored = await this.storedUpTo(selection);
    this.tally.read();
    const read = await this.db.logsAfter(selection, cursor, this.page.entries);
    const rows = read.filter((row) => row.id <= horizon);
    this.probing = rows.length === 0;
    // A stream may have ended, paused or moved while the read ran.
    const takers = subs.filter((s) => s.ready && s.cursor === cursor);
    if (rows.length > 0) {
      const { text, lastId, count } = framePage(rows, this.page.bytes);
      for (const sub of takers) sub.deliver(text, lastId);
      if (takers.length > 0) this.tally.framesSent(count * takers.length);
      // The rest of the read goes out in the next round, from the new cursor.
      if (count < rows.length) return;
    }
    // A short read holds every match after the cursor it could see; what it
    // saw includes every entry up to `checked`, so none up to there is left
    // to send. Reading from there spares the next reads the entries already
    // found not to match (a filter matching nothing would otherwise re-read
    // everything after its cursor at every notification).
    const upTo = stored === null ? null : Math.min(stored, horizon);
    if (upTo !== null && read.length < this.page.entries && takers.some((s) => (s.cursor as number) < upTo)) {
      const checked = await this.checkedUpTo(selection, upTo);
      if (checked !== null) for (const sub of takers) sub.passChecked(checked);
    }
    if (rows.length < read.length) {
      // Entries beyond the horizon were seen: the next round needs a settle started after this read.
      this.needClock = this.horizons!.tick();
    } else if (read.length < this.page.entries) {
      this.markCaughtUp(takers, generation);
    }
  }

  /**
   * The position a read may pass its cursors to when it comes back short,
   * read before it, or null when not worth a statement. SQLite: the last id
   * of all (every id commits in order there, so passing it keeps the next
   * transaction's streams served from memory), as the hub last heard of it
   * (no statement); a project on PostgreSQL:
   * its last id (the same, for its own transactions); a group on
   * PostgreSQL: its projects' last id, only after a read that found nothing.
   */
  private async storedUpTo(selection: LogSelection): Promise<number | null> {
    if (!this.horizons) return this.committedThrough ? this.committedThrough() : this.db.lastLogId();
    if (this.scope.kind === 'project' || this.probing) return this.db.lastLogIdOf(selection.projectIds);
    return null;
  }

  /**
   * `upTo`, unless the group now has a project the read left out (created
   * or unblocked since the selection was resolved): entries of that project
   * may lie below `upTo` and are not checked yet, so the position stays,
   * and the next read resolves the group again and reads them.
   */
  private async checkedUpTo(selection: LogSelection, upTo: number): Promise<number | null> {
    if (this.scope.kind !== 'group') return upTo;
    const current = await selectionOf(this.db, this.scope, this.filter);
    if (current?.projectIds.every((id) => selection.projectIds.includes(id))) return upTo;
    this.refreshProjects();
    return null;
  }

  private markCaughtUp(subs: readonly Subscription[], generation: number): void {
    for (const sub of subs) {
      const member = this.members.get(sub);
      if (member) member.caughtUpAt = generation;
    }
  }

  /** The same selection `GET /v1/logs` would query (a group: its projects unblocked now), resolved once per change. */
  private async selection(): Promise<LogSelection | null> {
    if (this.selected !== undefined) return this.selected;
    const version = this.selectionVersion;
    const scope = this.scope.kind === 'project' ? { kind: 'project' as const, projectId: this.scope.projectId } : this.scope;
    const resolved = await selectionOf(this.db, scope, this.filter);
    if (version === this.selectionVersion) this.selected = resolved;
    return resolved;
  }
}
