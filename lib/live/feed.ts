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
 */
import type { LogFilter } from '../search/log-filter.js';
import type { LogRow, LogSelection } from '../storage/types-logs.js';
import type { ReadOps } from '../storage/storage.js';
import { filterIsEmpty } from '../logs/log-query.js';
import { selectionOf } from '../logs/log-reader.js';
import { logEntryJson } from '../logs/present-log.js';
import { logFrame } from './sse.js';
import type { LiveScope } from './live-scope.js';
import type { Horizons } from './horizons.js';
import type { Subscription } from './subscription.js';

/** Bookkeeping a feed keeps per stream. */
interface Member {
  /** The feed generation this stream was last found caught up at (-1: never). */
  caughtUpAt: number;
}

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

  constructor(
    readonly key: string,
    readonly scope: LiveScope,
    readonly filter: LogFilter,
    private readonly db: ReadOps,
    /** Present when ids of different projects may commit out of order (PostgreSQL). */
    private readonly horizons: Horizons | null,
    /** Entries per storage read; bytes of frames per write (a page stops after the entry that reaches it). */
    private readonly page: { entries: number; bytes: number },
    private readonly onReadError: (err: unknown) => void,
    /** Log frames written, counted once per stream (metrics). */
    private readonly onFramesSent: (frames: number) => void = () => {},
  ) {
    this.empty = filterIsEmpty(filter);
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
    // smaller of the two has committed and the read sees it.
    const stored = this.probing ? await this.db.lastLogIdOf(selection.projectIds) : null;
    const read = await this.db.logsAfter(selection, cursor, this.page.entries);
    const rows = read.filter((row) => row.id <= horizon);
    this.probing = rows.length === 0;
    // A stream may have ended, paused or moved while the read ran.
    const takers = subs.filter((s) => s.ready && s.cursor === cursor);
    if (rows.length > 0) {
      const { text, lastId, count } = framePage(rows, this.page.bytes);
      for (const sub of takers) sub.deliver(text, lastId);
      if (takers.length > 0) this.onFramesSent(count * takers.length);
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
   * `upTo`, unless the group now has a project the read left out (created
   * or unblocked since the selection was resolved): entries of that project
   * may lie below `upTo` and are not checked yet, so the position stays,
   * and the next read resolves the group again and reads them.
   */
  private async checkedUpTo(selection: LogSelection, upTo: number): Promise<number | null> {
    if (this.scope.kind !== 'group') return upTo;
    const current = await selectionOf(this.db, this.scope, this.filter);
    if (current && current.projectIds.every((id) => selection.projectIds.includes(id))) return upTo;
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

/**
 * The log frames of `rows` in order, up to `maxBytes` of text: the page
 * stops after the frame that reaches the bound, so it always holds at least
 * one entry (an entry is never split) and at most one entry's worth more.
 */
export function framePage(rows: readonly LogRow[], maxBytes: number): { text: string; lastId: number; count: number } {
  const frames: string[] = [];
  let bytes = 0;
  for (const row of rows) {
    const frame = logFrame(row.id, logEntryJson(row));
    frames.push(frame);
    bytes += Buffer.byteLength(frame, 'utf8');
    if (bytes >= maxBytes) break;
  }
  return { text: frames.join(''), lastId: rows[frames.length - 1]!.id, count: frames.length };
}
