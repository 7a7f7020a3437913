/**
 * What an ingest transaction writes, derived from its requests' encoded
 * chunks (encoded-entries.ts) and the quota plan (log-quota.ts), the same
 * way for both backends. Entries are named by rank (their position among
 * the admitted entries in id order); each backend turns ranks into ids.
 *
 * Requests admitted whole are written from their chunks' bytes as they
 * are, or as the blocks they were sealed into when prepared (presealed.ts);
 * a request a quota cut short (rare: only at the limit) has its chunks
 * decoded and the admitted part encoded again.
 */
import { CHUNK_ENTRIES, decodeRows, encodeRows } from './encoded-entries.js';
import type { IngestPlan } from './log-quota.js';
import { RollupTally, minuteOf, type RollupCount } from './log-rollup.js';
import type { EncodedChunk, LogIngestRequest } from '../types-logs.js';
import type { SealedRun } from './seal-run.js';
import { columnsOfRows, type ChunkColumns } from './column-arrays.js';

/** Entry rows for one INSERT, of consecutive ranks from `firstRank`: pieces of chunks (`partJson`, `partColumns`). */
export interface RowsPart {
  kind: 'rows';
  firstRank: number;
  count: number;
  pieces: RowsPiece[];
}

/** A chunk's admitted rows: as encoded (with its binary columns when it has them), or encoded again when a quota cut its request short. */
export interface RowsPiece {
  /** The project of every row (a chunk is one request's). */
  projectId: number;
  /** Its rows, and the sum of their stored lengths. */
  count: number;
  bytes: number;
  rows: Uint8Array;
  columns: ChunkColumns | undefined;
}

/** A part's rows as one JSON array (the file backend inserts those). */
export function partJson(part: RowsPart): Uint8Array {
  return concatJsonArrays(part.pieces.map((p) => p.rows));
}

/** A part's rows as binary columns (the server backend inserts those), made from the JSON rows where a piece has none. */
export function partColumns(part: RowsPart): ChunkColumns[] {
  return part.pieces.map((p) => p.columns ?? columnsOfRows(decodeRows({ count: 0, rows: p.rows, minutes: [] })));
}

/** A request's entries as blocks sealed when it was prepared, with placeholder ids (presealed.ts `withIds`): consecutive ranks from `firstRank`. */
export interface BlocksPart {
  kind: 'blocks';
  /** The request's index in the transaction's requests. */
  request: number;
  projectId: number;
  firstRank: number;
  count: number;
  blocks: SealedRun[];
}

/**
 * Which projects may take presealed blocks in this transaction: those
 * whose tail was empty when it started (read under the transaction's
 * lock), with the dictionary id that is their newest.
 */
export interface PresealRoom {
  /** The project's newest dictionary id when its tail is empty, else absent. */
  emptyTails: Map<number, number>;
}

const COMMA = 0x2c;

/** One JSON array of the elements of several non-empty ones. */
export function concatJsonArrays(arrays: readonly Uint8Array[]): Uint8Array {
  if (arrays.length === 1) return arrays[0]!;
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0) - (arrays.length - 1));
  let at = 0;
  arrays.forEach((a, i) => {
    const from = i === 0 ? 0 : 1;
    const to = i === arrays.length - 1 ? a.length : a.length - 1;
    if (i > 0) out[at++] = COMMA;
    out.set(a.subarray(from, to), at);
    at += to - from;
  });
  return out;
}

/** The admitted ranks of a request's entries `from` … `to` (inclusive): consecutive, or none. */
function rankSpan(slots: IngestPlan['slots'][number], from: number, to: number): [number, number] | null {
  let first = -1;
  let last = -1;
  for (let i = from; i <= to; i++) {
    const slot = slots[i]!;
    if (typeof slot !== 'number') continue;
    if (first < 0) first = slot;
    last = slot;
  }
  return first < 0 ? null : [first, last];
}

/** Whether every entry of the request was admitted. */
function admittedWhole(slots: IngestPlan['slots'][number]): boolean {
  return slots.every((s) => typeof s === 'number');
}

/** A chunk of a request, in rank order of the plan, with what the plan says of its request. */
interface PlannedChunk {
  request: LogIngestRequest;
  slots: IngestPlan['slots'][number];
  /** Whether every entry of the request was admitted. */
  whole: boolean;
  chunk: EncodedChunk;
  /** The chunk's first entry within its request. */
  offset: number;
}

function* plannedChunks(requests: readonly LogIngestRequest[], plan: IngestPlan): Generator<PlannedChunk> {
  for (const index of plan.order) {
    const request = requests[index]!;
    const slots = plan.slots[index]!;
    const whole = admittedWhole(slots);
    let offset = 0;
    for (const chunk of request.chunks) {
      yield { request, slots, whole, chunk, offset };
      offset += chunk.count;
    }
  }
}

/**
 * What to insert, in rank order: entry rows in parts of at most
 * CHUNK_ENTRIES entries (small requests' chunks joined, a large request's
 * chunks one by one), and a large request's presealed blocks as one part
 * where `room` allows (the project's tail empty when the transaction
 * started and none of its entries put in the tail since, the blocks sealed
 * with its newest dictionary, the request admitted whole). Yields one part
 * at a time, so a 10 MiB batch is not copied whole.
 */
export function* ingestParts(
  requests: readonly LogIngestRequest[],
  plan: IngestPlan,
  room: PresealRoom = { emptyTails: new Map() },
): Generator<RowsPart | BlocksPart> {
  let group: RowsPiece[] = [];
  let groupFirst = 0;
  let groupCount = 0;
  const flush = (): RowsPart | null => {
    if (groupCount === 0) return null;
    const full: RowsPart = { kind: 'rows', firstRank: groupFirst, count: groupCount, pieces: group };
    group = [];
    groupCount = 0;
    return full;
  };
  const tailed = new Set<number>();
  for (const index of plan.order) {
    const request = requests[index]!;
    const slots = plan.slots[index]!;
    const whole = admittedWhole(slots);
    const dictionaryId = room.emptyTails.get(request.projectId);
    const blocks = request.blocks;
    if (
      whole &&
      blocks !== undefined &&
      dictionaryId !== undefined &&
      !tailed.has(request.projectId) &&
      blocks.every((b) => blockDictionary(b) === dictionaryId)
    ) {
      const full = flush();
      if (full) yield full;
      yield { kind: 'blocks', request: index, projectId: request.projectId, firstRank: slots[0] as number, count: slots.length, blocks };
      continue;
    }
    let offset = 0;
    for (const chunk of request.chunks) {
      const span = rankSpan(slots, offset, offset + chunk.count - 1);
      if (span !== null) {
        tailed.add(request.projectId);
        const count = span[1] - span[0] + 1;
        const admitted = (i: number) => typeof slots[offset + i] === 'number';
        let bytes = 0;
        for (let i = 0; i < chunk.count; i++) if (admitted(i)) bytes += request.sizes[offset + i]!;
        const piece: RowsPiece = {
          projectId: request.projectId,
          count,
          bytes,
          ...(whole ? { rows: chunk.rows, columns: chunk.columns } : { rows: encodeRows(decodeRows(chunk).filter((_, i) => admitted(i))), columns: undefined }),
        };
        if (groupCount > 0 && groupCount + count > CHUNK_ENTRIES) yield flush()!;
        if (groupCount === 0) groupFirst = span[0];
        group.push(piece);
        groupCount += count;
      }
      offset += chunk.count;
    }
  }
  const last = flush();
  if (last) yield last;
}

/** The entry rows to insert, in rank order, when nothing is presealed (every part is rows). */
export function* rowParts(requests: readonly LogIngestRequest[], plan: IngestPlan): Generator<RowsPart> {
  for (const part of ingestParts(requests, plan)) if (part.kind === 'rows') yield part;
}

/** The dictionary id a block was sealed with (its header's bytes 4–7). */
function blockDictionary(run: SealedRun): number {
  return new DataView(run.block.buffer, run.block.byteOffset, run.block.byteLength).getUint32(4, true);
}

/**
 * The admitted entries counted per (project, span, start, level), for the
 * rollup (log-rollup.ts): a request admitted whole adds its chunks'
 * minute counts as encoded; one a quota cut short (rare) has its chunks
 * decoded and only the admitted entries counted.
 */
export function batchRollupCounts(requests: readonly LogIngestRequest[], plan: IngestPlan): RollupCount[] {
  const tally = new RollupTally();
  for (const { request, slots, whole, chunk, offset } of plannedChunks(requests, plan)) {
    if (whole) {
      tally.addFlat(request.projectId, chunk.minutes);
      continue;
    }
    decodeRows(chunk).forEach(([projectId, , ts, level], i) => {
      if (typeof slots[offset + i] === 'number') tally.add(projectId, minuteOf(ts), level, 1);
    });
  }
  return tally.all();
}
