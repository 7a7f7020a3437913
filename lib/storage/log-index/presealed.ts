/**
 * Blocks sealed before their entries are stored (docs/storage-format.md,
 * "Large requests go straight to blocks"). A request of at least
 * PRESEAL_MIN_ENTRIES entries is already a run of one project's
 * consecutive entries: the preparation thread seals it there, with the
 * project's newest dictionary, into blocks whose ids are placeholders
 * (1, 2, …), and the ingest transaction writes those blocks with the ids
 * it draws, instead of one tail row per entry that sealing would read,
 * delete and write again. The transaction does so only while the
 * project's tail is empty (else the entries go to the tail as before), so a
 * project's blocks always hold its oldest entries and its tail the rest,
 * whatever the order of commits: what every read of tail and blocks relies
 * on.
 */
import type { PreparedEntry } from '../types-logs.js';
import { Writer } from './block-bytes.js';
import { sealRun, type SealedRun } from './seal-run.js';
import { SEAL_MAX_BYTES, SEAL_MAX_ENTRIES, type SealDictionary, type SealInput } from './sealed-block.js';

/**
 * Fewest entries of a request sealed at ingestion: a full block. Smaller
 * requests go to the tail and are sealed in runs of SEAL_MAX_ENTRIES. A
 * block of each 500-entry request was measured to make rare-term queries
 * 1.5–1.9 × slower (twice the blocks to probe) for a third more
 * sustained ingestion: full blocks keep queries as they were.
 */
export const PRESEAL_MIN_ENTRIES = SEAL_MAX_ENTRIES;

/** Where the id column starts in a block (sealed-block.ts: version, codec, frame entries, dictionary id, count). */
const IDS_AT = 12;

/**
 * Collects a request's entries as they are prepared and seals them in runs
 * of at most SEAL_MAX_ENTRIES entries and SEAL_MAX_BYTES stored bytes
 * (as `cutSealRuns` cuts a tail), with placeholder ids.
 */
export class PresealCollector {
  private readonly blocks: SealedRun[] = [];
  private run: SealInput[] = [];
  private runBytes = 0;
  private count = 0;

  constructor(
    private readonly receivedAt: number,
    private readonly dictionary: SealDictionary,
  ) {}

  add(entry: PreparedEntry): void {
    if (this.run.length > 0 && (this.run.length === SEAL_MAX_ENTRIES || this.runBytes + entry.bytes > SEAL_MAX_BYTES)) this.seal();
    this.run.push({ id: this.run.length + 1, receivedAt: this.receivedAt, ts: entry.timestamp, level: entry.level, body: entry.body });
    this.runBytes += entry.bytes;
    this.count += 1;
  }

  /** The request's blocks, or null when it has too few entries to be sealed at ingestion. */
  finish(): SealedRun[] | null {
    if (this.count < PRESEAL_MIN_ENTRIES) return null;
    if (this.run.length > 0) this.seal();
    return this.blocks;
  }

  private seal(): void {
    const run = sealRun(this.run, this.dictionary);
    // Blocks are transferred to the event loop's thread: each must own its whole buffer (a small one may sit in Buffer's shared pool).
    const owned = run.block.byteOffset === 0 && run.block.buffer.byteLength === run.block.length;
    this.blocks.push(owned ? run : { ...run, block: run.block.slice() });
    this.run = [];
    this.runBytes = 0;
  }
}

/**
 * A block sealed with placeholder ids (1 … count), given the ids the
 * transaction drew for its entries (increasing): the id column is written
 * again, everything after it is kept as it is.
 */
export function withIds(block: SealedRun, ids: readonly number[]): SealedRun {
  const n = block.count;
  if (ids.length !== n) throw new RangeError(`a block of ${n} entries needs ${n} ids, not ${ids.length}`);
  const column = new Writer();
  column.f64(ids[0]!);
  for (let i = 1; i < n; i++) {
    const delta = ids[i]! - ids[i - 1]!;
    if (delta < 1) throw new RangeError('ids of a sealed block must increase');
    column.varint(delta);
  }
  const idBytes = column.done();
  // The placeholder column: the first id as f64, then n − 1 deltas of 1, one byte each.
  const rest = block.block.subarray(IDS_AT + 8 + (n - 1));
  const out = new Uint8Array(IDS_AT + idBytes.length + rest.length);
  out.set(block.block.subarray(0, IDS_AT), 0);
  out.set(idBytes, IDS_AT);
  out.set(rest, IDS_AT + idBytes.length);
  return { ...block, firstId: ids[0]!, lastId: ids[n - 1]!, block: out };
}

/** The buffers of presealed blocks, to transfer them to another thread. */
export function presealTransferList(blocks: readonly SealedRun[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const b of blocks) {
    out.add(b.block.buffer as ArrayBuffer);
    for (const s of b.shards) out.add(s.buffer as ArrayBuffer);
  }
  return [...out];
}
