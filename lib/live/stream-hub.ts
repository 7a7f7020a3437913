/**
 * The live-stream hub of one service: every open `GET /v1/logs/stream`,
 * grouped into feeds (same scope and filter), told when entries may be new
 * (after each committed ingestion transaction, in this process or, through
 * storage signals, in another), and kept honest by one shared heartbeat.
 *
 * Costs, by design:
 * - an idle stream costs its socket and two small objects: no timer of its
 *   own (one interval per service) and no query of its own (re-validation
 *   is per distinct user and project, catch-up per feed);
 * - a commit of this process costs no read for the streams that already
 *   have everything before it: its entries are matched and sent from
 *   memory (feed.ts `takeCommitted`);
 * - any other notification costs one read per feed touching the projects,
 *   not one per stream and never one per entry (on PostgreSQL, feeds over
 *   several projects also share one settle per group, see horizons.ts);
 * - memory per stream is bounded by one page (at most `pageBytes`, or one
 *   entry when a single entry is larger), whatever the consumer's speed, and
 *   a consumer that takes nothing for two heartbeats is closed (see
 *   subscription.ts);
 * - streams are capped in total and per user; past a cap, opening answers 429.
 */
import { LogServiceError } from '../core/errors.js';
import type { ServiceLogger } from '../core/logger.js';
import type { LogFilter } from '../search/log-filter.js';
import type { ReadOps } from '../storage/storage.js';
import type { StorageSignals } from '../storage/storage-signals.js';
import { endFrame, openEventStream } from './sse.js';
import { Feed, type FeedTally } from './feed.js';
import { feedKey } from './live-scope.js';
import { linkProcesses, type LiveSignalLink } from './live-signals.js';
import { Horizons } from './horizons.js';
import { ReadGate } from './read-gate.js';
import { findInvalidStreams } from './revalidate.js';
import { Subscription } from './subscription.js';
import { addTo, removeFrom } from './feed-index.js';
import type { OpenStreamRequest, StreamHub, StreamHubOptions } from './stream-hub-types.js';
import type { CommittedEntries } from '../ingest/committed-entries.js';

/** What a notification says, as feeds take it. */
interface News {
  maxId: number;
  /** The horizon clock when it arrived (0 without horizons). */
  clock: number;
}

const DEFAULT_PAGE_SIZE = 200;
/**
 * A stalled reader keeps the last page written to it until it is closed:
 * 64 KiB bounds that at a few hundred typical entries per page.
 */
export const DEFAULT_PAGE_BYTES = 64 * 1024;
/** `Retry-After` when a stream cap is reached: streams free their slot when they end. */
export const STREAM_CAP_RETRY_AFTER_SECONDS = 10;
const DEFAULT_CONCURRENT_SETTLES = 2;

export async function createStreamHub(options: StreamHubOptions): Promise<StreamHub> {
  const hub = new LiveStreamHub(options);
  if (options.signals) await hub.linkTo(options.signals);
  return hub;
}

class LiveStreamHub implements StreamHub {
  private readonly subs = new Set<Subscription>();
  /** Open streams per user id, for the per-user cap. */
  private readonly streamsOfUser = new Map<number, number>();
  private readonly feeds = new Map<string, Feed>();
  private readonly feedsByProject = new Map<number, Set<Feed>>();
  private readonly feedsByGroup = new Map<number, Set<Feed>>();
  /** Project → group; a project never changes group, so entries never go stale. */
  private readonly groupOfProject = new Map<number, number>();
  /** The largest entry id this process has heard of. */
  private knownMaxId = 0;
  private heartbeat: NodeJS.Timeout | null = null;
  private revalidating = false;
  private revalidateAgain = false;
  private checkingForMissed = false;
  private shuttingDown = false;
  private link: LiveSignalLink | null = null;
  /** Reads still running for feeds already dropped; `close` waits for them before storage closes. */
  private readonly draining = new Set<Promise<void>>();
  private readonly db: ReadOps;
  private readonly logger: ServiceLogger;
  private readonly pageSize: number;
  private readonly pageBytes: number;
  private readonly horizons: Horizons | null;

  constructor(private readonly options: StreamHubOptions) {
    this.db = options.db;
    this.logger = options.logger;
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.pageBytes = options.pageBytes ?? DEFAULT_PAGE_BYTES;
    this.horizons = options.commitsOutOfOrder ? new Horizons(options.db, new ReadGate(options.maxConcurrentSettles ?? DEFAULT_CONCURRENT_SETTLES)) : null;
  }

  get openStreams(): number {
    return this.subs.size;
  }

  /** Log frames written to streams since the hub started. */
  framesSent = 0;
  /** Reads of new entries feeds made since the hub started. */
  reads = 0;
  private readonly tally: FeedTally = {
    framesSent: (frames) => (this.framesSent += frames),
    read: () => (this.reads += 1),
  };

  async linkTo(signals: StorageSignals): Promise<void> {
    this.link = await linkProcesses(
      signals,
      {
        entriesCommitted: (projectIds, maxId) => this.onEntries(projectIds, maxId),
        projectBlocked: (projectId) => this.onProjectBlocked(projectId),
        credentialsRevoked: () => void this.revalidate(),
        newsMayBeMissing: () => void Promise.all([this.checkForMissedEntries(), this.revalidate()]),
      },
      this.logger,
    );
  }

  async open(request: OpenStreamRequest): Promise<void> {
    const { res, scope } = request;
    if (this.shuttingDown) {
      openEventStream(res, request.headers);
      res.end(endFrame('server_shutdown'));
      return;
    }
    this.checkCaps(request.caller.userId);
    const sub = new Subscription(res, scope, request.caller);
    if (scope.kind === 'project') this.groupOfProject.set(scope.projectId, scope.groupId);
    // Registered before the start position is read, so an entry committed
    // meanwhile is not missed: its notification marks the feed, and the
    // first read below starts from that position anyway.
    const feed = this.attach(sub, request.filter);
    let start: number;
    try {
      start = request.sinceId ?? (await feed.startPosition());
    } catch (err) {
      this.forget(sub, feed);
      throw err;
    }
    if (sub.ended) {
      // Ended while we looked: by shutdown or re-validation (say so), or by the client leaving.
      if (sub.unsentEnd && !res.destroyed) {
        openEventStream(res, request.headers);
        res.end(endFrame(sub.unsentEnd));
      }
      return;
    }
    openEventStream(res, request.headers);
    if (request.sinceId === null) this.knownMaxId = Math.max(this.knownMaxId, start);
    sub.cursor = start;
    this.startHeartbeat();
    void feed.kick();
  }

  entriesCommitted(committed: CommittedEntries): void {
    if (this.feeds.size > 0) this.sendFromMemory(committed);
    this.onEntries(committed.projectIds, committed.maxId);
    this.link?.publishEntries(committed.projectIds, committed.maxId);
  }

  /**
   * Before any feed reads for them: the streams that have everything before
   * this transaction get its entries from memory (feed.ts `takeCommitted`).
   * Where ids commit in order, every feed hears of every transaction, so
   * its streams' cursors keep up even with transactions it has nothing in.
   */
  private sendFromMemory(committed: CommittedEntries): void {
    if (this.options.commitsOutOfOrder) {
      for (const projectId of committed.projectIds) {
        for (const feed of this.feedsByProject.get(projectId) ?? []) feed.takeCommitted(committed, [projectId], false);
      }
      return;
    }
    // A project of unknown group may be in any group feed: those read instead (the wake-up looks it up).
    const groupsKnown = committed.projectIds.every((id) => this.groupOfProject.has(id));
    for (const feed of this.feeds.values()) {
      const { scope } = feed;
      if (scope.kind === 'project') {
        feed.takeCommitted(committed, committed.projectIds.includes(scope.projectId) ? [scope.projectId] : [], true);
      } else if (groupsKnown) {
        feed.takeCommitted(
          committed,
          committed.projectIds.filter((id) => this.groupOfProject.get(id) === scope.groupId),
          true,
        );
      }
    }
  }

  projectBlocked(projectId: number): void {
    this.onProjectBlocked(projectId);
    this.link?.publishBlocked(projectId);
  }

  credentialsRevoked(): void {
    void this.revalidate();
    this.link?.publishRevoked();
  }

  beginShutdown(): void {
    this.shuttingDown = true;
    this.stopHeartbeat();
    for (const sub of [...this.subs]) sub.end('server_shutdown');
  }

  async close(): Promise<void> {
    this.beginShutdown();
    await Promise.allSettled([...this.draining]);
    const link = this.link;
    this.link = null;
    await link?.close();
  }

  /** 429 before anything is written when the service or the user has as many streams as allowed. */
  private checkCaps(userId: number): void {
    const total = this.options.maxStreams ?? Number.POSITIVE_INFINITY;
    const perUser = this.options.maxStreamsPerUser ?? Number.POSITIVE_INFINITY;
    const what = this.subs.size >= total ? 'The service has' : (this.streamsOfUser.get(userId) ?? 0) >= perUser ? 'You have' : null;
    if (what === null) return;
    const wait = STREAM_CAP_RETRY_AFTER_SECONDS;
    throw new LogServiceError('too_many_requests', `${what} as many live streams open as allowed; retry in ${wait} seconds.`, {
      headers: { 'Retry-After': String(wait) },
    });
  }

  private attach(sub: Subscription, filter: LogFilter): Feed {
    const key = feedKey(sub.scope, filter);
    let feed = this.feeds.get(key);
    if (!feed) {
      const page = { entries: this.pageSize, bytes: this.pageBytes };
      const onReadError = (err: unknown) => {
        this.logger.warn('live streams: reading new entries failed; retrying at the next heartbeat', { error: String(err) });
      };
      feed = new Feed(key, sub.scope, filter, {
        db: this.db,
        horizons: this.horizons,
        page,
        onReadError,
        tally: this.tally,
        // Every commit of an in-order store is announced here, in order (a SQLite file belongs to one process).
        ...(this.horizons ? {} : { committedThrough: () => this.knownMaxId }),
      });
      this.feeds.set(key, feed);
      const index = sub.scope.kind === 'project' ? this.feedsByProject : this.feedsByGroup;
      const id = sub.scope.kind === 'project' ? sub.scope.projectId : sub.scope.groupId;
      addTo(index, id, feed);
    }
    feed.add(sub);
    this.subs.add(sub);
    const userId = sub.caller.userId;
    this.streamsOfUser.set(userId, (this.streamsOfUser.get(userId) ?? 0) + 1);
    const joined = feed;
    sub.onEnded = () => this.forget(sub, joined);
    return feed;
  }

  private forget(sub: Subscription, feed: Feed): void {
    if (!this.subs.delete(sub)) return;
    const userId = sub.caller.userId;
    const left = (this.streamsOfUser.get(userId) ?? 1) - 1;
    if (left > 0) this.streamsOfUser.set(userId, left);
    else this.streamsOfUser.delete(userId);
    feed.remove(sub);
    if (feed.size === 0 && this.feeds.get(feed.key) === feed) {
      this.feeds.delete(feed.key);
      const reading = feed.idle();
      this.draining.add(reading);
      void reading.finally(() => this.draining.delete(reading));
      const index = feed.scope.kind === 'project' ? this.feedsByProject : this.feedsByGroup;
      removeFrom(index, feed.scope.kind === 'project' ? feed.scope.projectId : feed.scope.groupId, feed);
    }
    if (this.subs.size === 0) this.stopHeartbeat();
  }

  /** Entries up to `maxId` were committed for these projects (null: any). */
  private onEntries(projectIds: readonly number[] | null, maxId: number): void {
    this.knownMaxId = Math.max(this.knownMaxId, maxId);
    if (this.feeds.size === 0) return;
    // Reads this news wakes need settles started from now on (PostgreSQL).
    const news = { maxId, clock: this.horizons?.tick() ?? 0 };
    if (projectIds === null) {
      for (const feed of this.feeds.values()) {
        feed.refreshProjects();
        feed.entriesMayExist(news.maxId, news.clock);
      }
      return;
    }
    const unknownGroup: number[] = [];
    for (const projectId of projectIds) {
      for (const feed of this.feedsByProject.get(projectId) ?? []) feed.entriesMayExist(news.maxId, news.clock);
      if (this.feedsByGroup.size === 0) continue;
      const groupId = this.groupOfProject.get(projectId);
      if (groupId === undefined) unknownGroup.push(projectId);
      else this.wakeGroupFeeds(groupId, projectId, news);
    }
    if (unknownGroup.length > 0) void this.wakeGroupFeedsOfNewProjects(unknownGroup, news);
  }

  private wakeGroupFeeds(groupId: number, projectId: number, news: News): void {
    for (const feed of this.feedsByGroup.get(groupId) ?? []) {
      // A project the feed does not read yet: created (or unblocked) since.
      if (!feed.reads(projectId)) feed.refreshProjects();
      feed.entriesMayExist(news.maxId, news.clock);
    }
  }

  /** Projects never seen before: one lookup each (cached), then their group's feeds. */
  private async wakeGroupFeedsOfNewProjects(projectIds: number[], news: News): Promise<void> {
    try {
      const projects = await Promise.all(projectIds.map((id) => this.db.getProject(id)));
      for (const project of projects) {
        if (!project) continue;
        this.groupOfProject.set(project.id, project.groupId);
        this.wakeGroupFeeds(project.groupId, project.id, news);
      }
    } catch (err) {
      this.logger.warn('live streams: cannot look up projects; waking every group stream', { error: String(err) });
      for (const feeds of this.feedsByGroup.values()) for (const feed of feeds) feed.entriesMayExist(news.maxId, news.clock);
    }
  }

  private onProjectBlocked(projectId: number): void {
    for (const sub of [...this.subs]) {
      if (sub.scope.kind === 'project' && sub.scope.projectId === projectId) sub.end('project_blocked');
    }
    // Group streams leave the project out from their next read on.
    const groupId = this.groupOfProject.get(projectId);
    const groupFeeds = groupId === undefined ? [...this.feedsByGroup.values()] : [this.feedsByGroup.get(groupId) ?? new Set<Feed>()];
    for (const feeds of groupFeeds) for (const feed of feeds) feed.refreshProjects();
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    // Open streams keep their sockets (and so the process) alive; the timer need not.
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** One tick for every stream: ping, re-validate, and repair anything missed. */
  private beat(): void {
    let stalled = 0;
    for (const sub of [...this.subs]) if (sub.beat()) stalled += 1;
    if (stalled > 0) this.logger.info(`live streams: closed ${stalled} whose reader took nothing for two heartbeats`);
    void this.revalidate();
    for (const feed of this.feeds.values()) {
      // Another process may have blocked or unblocked a project unseen.
      feed.refreshProjects();
      if (feed.failed) void feed.kick();
    }
    void this.checkForMissedEntries();
  }

  /** Ends the streams whose caller or project no longer qualifies. */
  private async revalidate(): Promise<void> {
    // A request during a check (a revocation just signalled) runs one more check after it.
    if (this.revalidating) return void (this.revalidateAgain = true);
    if (this.subs.size === 0) return;
    this.revalidating = true;
    try {
      const verdicts = await findInvalidStreams(this.db, this.subs, (this.options.now ?? Date.now)());
      for (const [sub, reason] of verdicts) sub.end(reason);
    } catch (err) {
      // Unknown is not revoked: the streams stay until a check succeeds.
      this.logger.warn('live streams: re-validation failed; retrying at the next heartbeat', { error: String(err) });
    } finally {
      this.revalidating = false;
      if (this.revalidateAgain) {
        this.revalidateAgain = false;
        void this.revalidate();
      }
    }
  }

  /** One query per heartbeat, not per stream: entries newer than any notification (one lost while its link was down) make every feed read. */
  private async checkForMissedEntries(): Promise<void> {
    if (this.checkingForMissed || this.feeds.size === 0) return;
    this.checkingForMissed = true;
    try {
      const last = await this.db.lastLogId();
      if (last > this.knownMaxId) this.onEntries(null, last);
    } catch (err) {
      this.logger.debug('live streams: cannot read the last entry id', { error: String(err) });
    } finally {
      this.checkingForMissed = false;
    }
  }
}
