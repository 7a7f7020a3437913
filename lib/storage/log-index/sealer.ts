/**
 * When and what to seal (docs/storage-format.md, "Sealing"), the same on
 * both backends: a project's tail is sealed when it holds a full run
 * (SEAL_MAX_ENTRIES entries, or SEAL_MAX_BYTES) or when its oldest entry is
 * older than SEAL_MAX_TAIL_AGE_MS (then all of it, in part-filled runs),
 * oldest run first. A pass runs after an ingest commit that took a
 * project's tail past a full run (`notify`) and on a timer (which also
 * finds entries other processes ingested); SEAL_LANES projects at a time
 * per process, their CPU on the sealing threads, their transactions the
 * backend's. Ingestion waits for room in a full tail (tail-room.ts).
 */
import type { ServiceLogger } from '../../core/logger.js';
import type { SealedRun } from './seal-run.js';
import { cutSealRuns, SEAL_MAX_ENTRIES, type SealDictionary, type SealInput } from './sealed-block.js';
import type { SealWorker } from './seal-worker.js';
import { TailRoom } from './tail-room.js';
import { IngestDictionaries } from './ingest-dictionaries.js';
import { TailMemory, type TailPiece } from './tail-memory.js';

/** A quiet project's tail is sealed once its oldest entry is this old: the tail stays short without making blocks of a few entries. */
export const SEAL_MAX_TAIL_AGE_MS = 10 * 60 * 1000;
/** How often the timer looks for tails to seal. */
export const SEAL_INTERVAL_MS = 1000;
/** A project gets a new dictionary after this many blocks (~1M entries), so it follows the project's entries as they change. */
export const DICTIONARY_EVERY_BLOCKS = 1024;
/** Projects sealed at once: the worker seals one project's run while another's transaction runs. */
export const SEAL_LANES = 2;
/** The tail's space is reclaimed (`SealBackend.reclaimTail`) after this many entries are sealed by the process. */
export const RECLAIM_TAIL_EVERY = 32 * SEAL_MAX_ENTRIES;
/**
 * An emptying of a project's tail for large requests (`presealMissed`)
 * seals part-filled runs for this long at most: small requests that keep
 * arriving would otherwise keep it sealing blocks of a few entries.
 */
export const DRAIN_MAX_MS = 2000;
/**
 * A project's tail is emptied for large requests at most this often: with
 * small requests between large ones, each emptying seals a part-filled
 * run, and blocks should stay large.
 */
export const DRAIN_EVERY_MS = 10_000;
/** While more than this many entries wait in tails, progress is logged every SEAL_PROGRESS_MS (the upgrade's conversion). */
export const SEAL_PROGRESS_MIN_ENTRIES = 100_000;
export const SEAL_PROGRESS_MS = 10_000;

/** The run a backend read for sealing: the project's oldest tail rows and its newest dictionary. */
export interface TailRun {
  entries: SealInput[];
  /** The project's newest dictionary, or null when it has none. */
  dictionary: SealDictionary | null;
  /** Blocks sealed with that dictionary so far. */
  blocksWithDictionary: number;
}

/** A committed seal: what the project's tail held after it (null: not known). */
export interface SealCommitted {
  tailEntries: number | null;
}

/** What a backend supplies to be sealed. Each call is one statement or one transaction. */
export interface SealBackend {
  /** Projects whose tail holds at least `fullRun` entries or an entry received before `oldBefore`. */
  projectsToSeal(fullRun: number, oldBefore: number): Promise<number[]>;
  /** The project's oldest tail rows by id, at most `limit`, with its newest dictionary. */
  readRun(projectId: number, limit: number): Promise<TailRun>;
  /** The project's newest dictionary and how many blocks were sealed with it (what `readRun` answers besides the rows). */
  runDictionary(projectId: number): Promise<Omit<TailRun, 'entries'>>;
  /**
   * One transaction: delete every tail row of the project up to the run's
   * last id and check that exactly `ids` (the run's, ascending) went (else
   * roll back and answer null: a retention pass or another process got
   * there first, or the run was not the tail's oldest), insert `dictionary`
   * if given, the block's row and its shards, and lower the project's tail
   * count.
   */
  commitSeal(projectId: number, run: SealedRun, dictionary: SealDictionary | null, ids: readonly number[]): Promise<SealCommitted | null>;
  /** Entries waiting in every project's tail (for progress messages). */
  tailEntries(): Promise<number>;
  /** The project's newest dictionary, or null (what large requests are sealed with at ingestion). */
  newestDictionary(projectId: number): Promise<SealDictionary | null>;
  /**
   * Makes the space of sealed tail rows reusable (PostgreSQL: `VACUUM` of
   * `log_entries`, whose dead rows and index entries otherwise wait for
   * autovacuum, which may be off or minutes away); absent where freed
   * pages are reused at once (SQLite).
   */
  reclaimTail?(): Promise<void>;
}

export interface SealerOptions {
  logger?: ServiceLogger;
  now?: () => number;
}

export class Sealer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private lastProgress = 0;
  private progressFrom: number | null = null;
  private readonly room: TailRoom;
  /** Each project's newest dictionary, for sealing large requests at ingestion (presealed.ts). */
  readonly dictionaries: IngestDictionaries;
  private sealedSinceReclaim = 0;
  /** Projects whose tail is being emptied for large requests, part-filled runs included, and until when. */
  private readonly draining = new Map<number, number>();
  /** When each project's last emptying was asked for (DRAIN_EVERY_MS apart). */
  private readonly drainedAt = new Map<number, number>();
  private reclaiming = false;
  /** The tail rows this process committed, by project: full runs are sealed from here instead of read back (tail-memory.ts). */
  private readonly memory = new TailMemory();
  /** Runs sealed from memory and from the tail, and seals from memory the tail refused (tests read these). */
  readonly runs = { remembered: 0, read: 0, refused: 0 };

  constructor(
    private readonly backend: SealBackend,
    /** The threads runs are sealed on: lane i uses thread i modulo their number. */
    private readonly workers: readonly SealWorker[],
    private readonly options: SealerOptions = {},
  ) {
    this.dictionaries = new IngestDictionaries((projectId) => backend.newestDictionary(projectId));
    this.room = new TailRoom({
      // No entry is received before the epoch: only the count selects.
      tailsOver: (limit) => backend.projectsToSeal(limit, 0),
      kick: () => this.kick(),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  /**
   * Resolves once the project's tail has room for more entries
   * (tail-room.ts): at once unless sealing runs in the background.
   */
  waitForRoom(projectId: number): Promise<void> {
    if (this.timer === null || this.closed) return Promise.resolve();
    return this.room.wait(projectId);
  }

  /**
   * The dictionary a large request of the project is sealed with as it is
   * prepared (presealed.ts), or null to send it to the tail: the project has
   * no dictionary yet, or its tail was not empty at the last read (within
   * TAIL_CHECK_MS). Never waits for sealing. Without background sealing,
   * the transaction alone decides.
   */
  async presealDictionary(projectId: number): Promise<SealDictionary | null> {
    const dictionary = await this.dictionaries.get(projectId);
    if (dictionary === null || this.timer === null || this.closed) return dictionary;
    return (await this.room.fill(projectId)) === 'empty' ? dictionary : null;
  }

  /**
   * A request large enough to be sealed as it was prepared went to the
   * tail (its project had no dictionary, or a tail): the tail is sealed
   * whole, part-filled runs included, so the project's next large request
   * finds it empty. At most once per DRAIN_EVERY_MS per project, for
   * DRAIN_MAX_MS at most; not for a full tail (sealing empties it anyway).
   * The request does not wait for it.
   */
  async presealMissed(projectId: number): Promise<void> {
    if (this.timer === null || this.closed) return;
    const now = performance.now();
    if (now - (this.drainedAt.get(projectId) ?? Number.NEGATIVE_INFINITY) < DRAIN_EVERY_MS) return;
    if ((await this.room.fill(projectId)) !== 'some') return;
    this.drainedAt.set(projectId, now);
    this.draining.set(projectId, now + DRAIN_MAX_MS);
    this.kick();
  }

  /** Whether the project's tail is being emptied for large requests (until its time runs out). */
  private isDraining(projectId: number): boolean {
    const until = this.draining.get(projectId);
    if (until === undefined) return false;
    if (performance.now() < until) return true;
    this.draining.delete(projectId);
    return false;
  }

  /** Starts the timer. */
  start(): void {
    if (this.timer !== null || this.closed) return;
    this.timer = setInterval(() => this.kick(), SEAL_INTERVAL_MS);
    this.timer.unref();
    this.kick();
  }

  /** After an ingest commit: a project's tail reached a full run. Only while sealing runs in the background (`start`): a storage opened without it seals at `sealNow` alone. */
  notify(): void {
    if (this.timer !== null) this.kick();
  }

  /**
   * An ingestion of this process committed `pieces` (ids ascending) to the
   * project's tail, which then held `tailEntries` entries. Kept while
   * sealing runs in the background, so the run is sealed without reading
   * it back (tail-memory.ts).
   */
  committed(projectId: number, pieces: readonly Omit<TailPiece, 'skip'>[], tailEntries: number): void {
    if (this.timer === null || this.closed) return;
    this.memory.committed(projectId, pieces, tailEntries);
  }

  /**
   * Seals every tail entry now, part-filled runs included, and resolves
   * once none is left (entries ingested meanwhile included). For tests and
   * tools: the service seals on its own.
   */
  async sealNow(): Promise<void> {
    while (this.running) await this.running;
    const pass = this.pass(true);
    this.running = pass.then(
      () => {},
      () => {},
    );
    try {
      await pass;
    } finally {
      this.running = null;
    }
  }

  /** Stops the timer and waits for the seal in progress. */
  async close(): Promise<void> {
    this.closed = true;
    this.room.close();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    while (this.running) await this.running;
  }

  private kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass(false)
      .catch((err: unknown) => this.options.logger?.error(`sealing failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pass(all: boolean): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    const oldBefore = all ? Number.MAX_SAFE_INTEGER : now - SEAL_MAX_TAIL_AGE_MS;
    for (let projects = await this.dueProjects(oldBefore); projects.length > 0; ) {
      // Projects in SEAL_LANES lanes: one project's run is sealed on the worker while another's commits.
      const queue = [...projects];
      const lane = async (_: unknown, index: number): Promise<void> => {
        for (let projectId = queue.shift(); projectId !== undefined; projectId = queue.shift()) {
          if (this.closed && !all) return;
          await this.sealProject(projectId, all, oldBefore, this.workers[index % this.workers.length]!);
        }
      };
      await Promise.all(Array.from({ length: SEAL_LANES }, lane));
      if (!all) return;
      projects = await this.dueProjects(oldBefore);
    }
  }

  /** Projects with a full run or an old tail, and those being emptied for large requests. */
  private async dueProjects(oldBefore: number): Promise<number[]> {
    const due = await this.backend.projectsToSeal(SEAL_MAX_ENTRIES, oldBefore);
    const draining = [...this.draining.keys()].filter((projectId) => this.isDraining(projectId));
    return [...new Set([...due, ...draining])];
  }

  private async sealProject(projectId: number, all: boolean, oldBefore: number, worker: SealWorker): Promise<void> {
    for (;;) {
      const sealed = (await this.sealRemembered(projectId, worker)) ?? (await this.sealFromTail(projectId, all, oldBefore, worker));
      if (sealed === 'done') return;
      await this.progress();
      if (this.closed && !all) return;
    }
  }

  /** Seals the project's oldest full run from memory when memory holds one; null when it does not (or the tail differed from it). */
  private async sealRemembered(projectId: number, worker: SealWorker): Promise<'again' | null> {
    const remembered = this.memory.fullRun(projectId);
    if (remembered === null) return null;
    const current = await this.backend.runDictionary(projectId);
    const renew = current.dictionary === null || current.blocksWithDictionary >= DICTIONARY_EVERY_BLOCKS;
    const sealed = await worker.sealRemembered(remembered, renew ? null : current.dictionary, renew ? (current.dictionary?.id ?? 0) + 1 : null);
    if (await this.committedSeal(projectId, sealed.run, sealed.dictionary, remembered.ids.slice(0, sealed.run.count))) {
      this.runs.remembered++;
      return 'again';
    }
    this.runs.refused++;
    this.memory.distrust(projectId);
    return null;
  }

  /** Seals the oldest run read from the project's tail (refused: read again); 'done' when it has none to seal now. */
  private async sealFromTail(projectId: number, all: boolean, oldBefore: number, worker: SealWorker): Promise<'again' | 'done'> {
    const tail = await this.backend.readRun(projectId, SEAL_MAX_ENTRIES);
    if (tail.entries.length === 0) {
      this.draining.delete(projectId);
      return 'done';
    }
    const old = all || this.isDraining(projectId) || tail.entries[0]!.receivedAt < oldBefore;
    const run = cutSealRuns(tail.entries, old)[0];
    if (run === undefined) return 'done';
    const renew = tail.dictionary === null || tail.blocksWithDictionary >= DICTIONARY_EVERY_BLOCKS;
    const sealed = await worker.seal(run, renew ? null : tail.dictionary, renew ? (tail.dictionary?.id ?? 0) + 1 : null);
    if (
      await this.committedSeal(
        projectId,
        sealed.run,
        sealed.dictionary,
        run.map((e) => e.id),
      )
    )
      this.runs.read++;
    return 'again';
  }

  /** Commits a sealed run; whether it was (else the tail changed under it). */
  private async committedSeal(projectId: number, run: SealedRun, dictionary: SealDictionary | null, ids: readonly number[]): Promise<boolean> {
    const committed = await this.backend.commitSeal(projectId, run, dictionary, ids);
    if (committed === null) return false;
    this.memory.sealed(projectId, run.lastId, committed.tailEntries);
    this.room.sealed();
    this.sealedSinceReclaim += run.count;
    await this.reclaimTail();
    return true;
  }

  /** Every RECLAIM_TAIL_EVERY entries sealed: the tail's freed space made reusable, so its table stays the size of the bounded tail. */
  private async reclaimTail(): Promise<void> {
    if (this.backend.reclaimTail === undefined || this.reclaiming || this.sealedSinceReclaim < RECLAIM_TAIL_EVERY) return;
    this.reclaiming = true;
    this.sealedSinceReclaim = 0;
    try {
      await this.backend.reclaimTail();
    } catch (err) {
      this.options.logger?.warn(`sealing: reclaiming the tail's space failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.reclaiming = false;
    }
  }

  private async progress(): Promise<void> {
    const logger = this.options.logger;
    if (logger === undefined) return;
    const now = Date.now();
    if (now - this.lastProgress < SEAL_PROGRESS_MS) return;
    this.lastProgress = now;
    const waiting = await this.backend.tailEntries();
    if (waiting > SEAL_PROGRESS_MIN_ENTRIES) {
      this.progressFrom ??= waiting;
      logger.info(`sealing stored entries: ${this.progressFrom - waiting} sealed, ${waiting} waiting`);
    } else if (this.progressFrom !== null) {
      this.progressFrom = null;
      logger.info('sealing stored entries: done');
    }
  }
}
