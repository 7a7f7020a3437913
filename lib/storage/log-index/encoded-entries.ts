/**
 * Encoding a request's prepared entries into what both backends insert
 * (storage.ts `EncodedChunk`): the entry rows as UTF-8 JSON, chunk by
 * chunk. It runs where batches are prepared (the
 * preparation worker for the usual sizes), so the write transaction, which
 * the writer waits on, only concatenates and binds bytes. Serialising and
 * converting those texts inside the transaction was about a quarter of the
 * SQLite writer's time per entry.
 */
import { countMinutes } from './log-rollup.js';
import { PresealCollector, presealTransferList } from './presealed.js';
import type { SealDictionary } from './sealed-block.js';
import { encodeColumns } from './column-arrays.js';
import type { EncodedChunk, LogIngestRequest, PreparedEntry } from '../types-logs.js';

/** Entries per chunk: about 250 kB of rows for usual entries. */
export const CHUNK_ENTRIES = 512;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** An entry row as encoded: `[project_id, received_at, ts, level, bytes, body]`. */
export type EntryRow = [projectId: number, receivedAt: number, ts: number, level: number, bytes: number, body: string];

/** The JSON text of rows, encoded (a fresh buffer of its own). */
export function encodeRows(rows: readonly EntryRow[]): Uint8Array {
  return utf8.encode(JSON.stringify(rows));
}

/**
 * Writes UTF-8 piece by piece into one buffer of its own. Building one big
 * string and encoding it costs more than twice as much: the string is a
 * large object V8 must allocate, flatten and collect.
 */
class ByteWriter {
  private buf: Buffer;
  private at = 0;

  constructor(estimate: number) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(64, estimate));
  }

  write(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    if (this.at + text.length * 3 > this.buf.length) this.grow(text.length * 3);
    this.at += this.buf.write(text, this.at, 'utf8');
  }

  /** The bytes written, as a plain Uint8Array (the only view of its buffer). */
  done(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.at);
  }

  private grow(need: number): void {
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + need));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }
}

/** Encodes consecutive entries of one request as one chunk; with `columns`, as PostgreSQL binary arrays too (column-arrays.ts). */
export function encodeChunk(projectId: number, receivedAt: number, entries: readonly PreparedEntry[], columns = false): EncodedChunk {
  let estimate = 2;
  for (const e of entries) estimate += e.bytes + 64;
  const rows = new ByteWriter(Math.ceil(estimate * 1.25));
  rows.write('[');
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    rows.write(`${i === 0 ? '' : ','}[${projectId},${receivedAt},${e.timestamp},${e.level},${e.bytes},${JSON.stringify(e.body)}]`);
  }
  rows.write(']');
  const chunk: EncodedChunk = { count: entries.length, rows: rows.done(), minutes: countMinutes(entries) };
  if (columns) chunk.columns = encodeColumns(projectId, receivedAt, entries);
  return chunk;
}

/**
 * Encodes a request's entries chunk by chunk as they come, so a large batch
 * never holds all its entries' strings at once. Given the project's
 * dictionary, it also seals them into blocks as they come (presealed.ts).
 */
export class RequestEncoder {
  private readonly sizes: number[] = [];
  private readonly chunks: EncodedChunk[] = [];
  private pending: PreparedEntry[] = [];
  private readonly preseal: PresealCollector | null;

  constructor(
    private readonly projectId: number,
    private readonly receivedAt: number,
    dictionary: SealDictionary | null = null,
    /** Also encode PostgreSQL binary arrays (the server backend inserts those). */
    private readonly columns = false,
  ) {
    this.preseal = dictionary === null ? null : new PresealCollector(receivedAt, dictionary);
  }

  add(entry: PreparedEntry): void {
    this.sizes.push(entry.bytes);
    this.pending.push(entry);
    this.preseal?.add(entry);
    if (this.pending.length === CHUNK_ENTRIES) this.flush();
  }

  finish(): LogIngestRequest {
    this.flush();
    const blocks = this.preseal?.finish() ?? null;
    return { projectId: this.projectId, sizes: this.sizes, chunks: this.chunks, ...(blocks ? { blocks } : {}) };
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.chunks.push(encodeChunk(this.projectId, this.receivedAt, this.pending, this.columns));
    this.pending = [];
  }
}

/** A request of these entries, for one project, received at `receivedAt`. */
export function encodeRequest(projectId: number, receivedAt: number, entries: readonly PreparedEntry[]): LogIngestRequest {
  const encoder = new RequestEncoder(projectId, receivedAt);
  for (const entry of entries) encoder.add(entry);
  return encoder.finish();
}

export function decodeRows(chunk: EncodedChunk): EntryRow[] {
  return JSON.parse(fromUtf8.decode(chunk.rows)) as EntryRow[];
}

/** The buffers of a request's chunks and blocks, to transfer it to another thread. */
export function transferList(request: LogIngestRequest): ArrayBuffer[] {
  return [
    ...request.chunks.flatMap((c) => [c.rows.buffer as ArrayBuffer, ...(c.columns ? [c.columns.elements.buffer as ArrayBuffer] : [])]),
    ...presealTransferList(request.blocks ?? []),
  ];
}
