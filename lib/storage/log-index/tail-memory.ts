/**
 * The tail rows this process committed, kept by project until they are
 * sealed (docs/storage-format.md, "Sealing"), so a full run is sealed from
 * memory instead of being read back from the tail it was just written to.
 * Rows are kept as the ingestion transaction wrote them: each piece is one
 * chunk's UTF-8 JSON rows (encoded-entries.ts) with the ids they got, and
 * the sealing thread decodes them.
 *
 * Memory is a guess, never a source of truth: another process may ingest
 * into the same project, a retention pass may delete tail rows, two
 * commits may be told here out of order. The seal transaction deletes
 * every tail row of the project up to the run's last id and checks that
 * exactly the run's ids went (else it rolls back), so a wrong guess costs
 * one seal done again from the tail, and the project is read from its tail
 * until memory is known to match it again: when an ingestion leaves the
 * tail holding exactly what memory holds, or a seal leaves it holding as
 * many entries as memory does.
 */
import { SEAL_MAX_BYTES, SEAL_MAX_ENTRIES } from './sealed-block.js';

/**
 * What memory may hold over every project (the rows' bytes, outside V8's
 * heap but in the process's RSS): past it, a project that would go over is
 * read from its tail instead. About eight busy projects' bounded tails
 * (four full runs each) of 500-byte entries.
 */
export const TAIL_MEMORY_MAX_BYTES = 16 * 1024 * 1024;

/** One chunk's rows as committed: `ids[i]` is row i's id, ascending; rows before `skip` are sealed already. */
export interface TailPiece {
  rows: Uint8Array;
  ids: readonly number[];
  /** Sum of the rows' stored lengths. */
  bytes: number;
  skip: number;
}

/** A run's worth of a project's oldest remembered rows: the pieces (the first from its `skip`) and their ids in order. */
export interface RememberedRun {
  pieces: { rows: Uint8Array; skip: number }[];
  ids: number[];
}

interface ProjectMemory {
  pieces: TailPiece[];
  /** Rows not yet sealed, and their bytes (a piece partly sealed counts whole: an estimate for the cut). */
  entries: number;
  bytes: number;
  /** Whether the pieces are known to be exactly the project's tail (only then is a run sealed from them). */
  known: boolean;
}

export class TailMemory {
  private readonly projects = new Map<number, ProjectMemory>();
  /** Pieces' bytes held over every project. */
  private held = 0;

  constructor(private readonly maxBytes = TAIL_MEMORY_MAX_BYTES) {}

  /**
   * An ingestion committed `pieces` (ids ascending) to the project's tail,
   * which then held `tailEntries` entries: memory is known to match when
   * that is all of them.
   */
  committed(projectId: number, pieces: readonly Omit<TailPiece, 'skip'>[], tailEntries: number): void {
    const added = pieces.reduce((n, p) => n + p.ids.length, 0);
    if (added === 0) return;
    let memory = this.projects.get(projectId);
    if (memory === undefined || added === tailEntries) {
      this.drop(projectId);
      memory = { pieces: [], entries: 0, bytes: 0, known: added === tailEntries };
      this.projects.set(projectId, memory);
    }
    const bytes = pieces.reduce((n, p) => n + p.rows.byteLength, 0);
    const last = memory.pieces.at(-1);
    // Told out of order (rare), or past the bound: nothing kept, so what is kept never has a gap of its own making.
    if (this.held + bytes > this.maxBytes || (last !== undefined && last.ids.at(-1)! >= pieces[0]!.ids[0]!)) {
      this.drop(projectId);
      return;
    }
    for (const p of pieces) if (p.ids.length > 0) memory.pieces.push({ ...p, skip: 0 });
    memory.entries += added;
    memory.bytes += pieces.reduce((n, p) => n + p.bytes, 0);
    this.held += bytes;
  }

  /** The project's oldest rows, when memory is known to match its tail and they make a full run (SEAL_MAX_ENTRIES, or SEAL_MAX_BYTES); else null. */
  fullRun(projectId: number): RememberedRun | null {
    const memory = this.projects.get(projectId);
    if (memory === undefined || !memory.known || (memory.entries < SEAL_MAX_ENTRIES && memory.bytes < SEAL_MAX_BYTES)) return null;
    const run: RememberedRun = { pieces: [], ids: [] };
    for (const p of memory.pieces) {
      if (run.ids.length >= SEAL_MAX_ENTRIES) break;
      run.pieces.push({ rows: p.rows, skip: p.skip });
      for (let i = p.skip; i < p.ids.length && run.ids.length < SEAL_MAX_ENTRIES; i++) run.ids.push(p.ids[i]!);
    }
    return run;
  }

  /**
   * A seal of the project committed: no tail row up to `lastId` is left,
   * and the tail then held `tailEntries` entries (null: not known). Memory
   * holding as many is known to match again: what it holds is committed,
   * above `lastId`, and so in the tail, unless a retention pass deleted it,
   * which the seal's check finds.
   */
  sealed(projectId: number, lastId: number, tailEntries: number | null): void {
    const memory = this.projects.get(projectId);
    if (memory === undefined) return;
    while (memory.pieces.length > 0) {
      const p = memory.pieces[0]!;
      let skip = p.skip;
      while (skip < p.ids.length && p.ids[skip]! <= lastId) skip++;
      memory.entries -= skip - p.skip;
      if (skip < p.ids.length) {
        // A piece partly sealed keeps its bytes counted until it is whole: an overestimate that only seals its run a little early.
        p.skip = skip;
        break;
      }
      memory.pieces.shift();
      memory.bytes -= p.bytes;
      this.held -= p.rows.byteLength;
    }
    if (tailEntries !== null) memory.known = tailEntries === memory.entries;
  }

  /** A seal from memory was refused (the tail differs): the project is read from its tail until memory is known to match again. */
  distrust(projectId: number): void {
    const memory = this.projects.get(projectId);
    if (memory !== undefined) memory.known = false;
  }

  /** Bytes held (tests). */
  heldBytes(): number {
    return this.held;
  }

  private drop(projectId: number): void {
    const memory = this.projects.get(projectId);
    if (memory === undefined) return;
    for (const p of memory.pieces) this.held -= p.rows.byteLength;
    this.projects.delete(projectId);
  }
}
