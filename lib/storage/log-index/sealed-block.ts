/**
 * Sealed blocks, format version 1 (docs/storage-format.md): a run of one
 * project's consecutive entries kept as one immutable byte string, the same
 * on both backends. The header holds every entry's id, received_at, ts,
 * level and stored length, uncompressed and small (varints of deltas), so
 * a reader can tell which entries a block holds, and where, without
 * inflating anything. The entries' texts follow in frames of up to
 * SEAL_FRAME_ENTRIES entries, each compressed on its own (raw deflate,
 * with the project's preset dictionary), so one entry is read by
 * inflating one frame. Decoding returns every text byte for byte as it was
 * stored (the submitted JSON, key order kept).
 *
 * Layout (little endian; `varint` is unsigned LEB128, `zigzag` a signed
 * value folded into one; all arithmetic is on JavaScript numbers, so ids
 * and times stay below 2^53):
 *
 *   u8      format version (1)
 *   u8      codec (1 = raw deflate)
 *   u16     entries per frame (SEAL_FRAME_ENTRIES when written)
 *   u32     dictionary id (0 = none)
 *   u32     entry count N (1 … SEAL_MAX_ENTRIES)
 *   f64     first id;          then N-1 varint   id deltas (each ≥ 1)
 *   f64     first received_at; then N-1 zigzag   deltas
 *   f64     first ts;          then N-1 zigzag   deltas
 *   N × u8  levels (0 = debug … 4 = critical)
 *   N varint stored lengths in bytes
 *   F varint compressed lengths of the F = ceil(N / per frame) frames
 *   the F frames, one after another
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { FILTER_MAX_FRAMES } from './block-filter.js';
import { Reader, SealedBlockError, Writer } from './block-bytes.js';

export { SealedBlockError };

/** Format version written in every sealed block's first byte. */
export const SEALED_FORMAT_VERSION = 1;

/** Codec byte of raw deflate (node:zlib), the only one of version 1. */
export const CODEC_DEFLATE_RAW = 1;

/**
 * Most entries in a block: 1,024 of ~470 B is ~480 kB of JSON, one
 * block's worth of reading for a rare term, and enough that per-block rows
 * (index, filter shards) cost a few bytes per entry.
 */
export const SEAL_MAX_ENTRIES = 1024;

/**
 * Most stored bytes of entries in a block (a block is cut before it): a
 * block of large entries stays a bounded read and a bounded allocation.
 */
export const SEAL_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Entries per compressed frame: reading one entry inflates at most this
 * many. With a preset dictionary, 64-entry frames compressed within a few
 * percent of 4,096-entry runs (docs/storage-format.md).
 */
export const SEAL_FRAME_ENTRIES = 128;

/** Deflate level: 6 (zlib's default), the measured balance of size and speed. */
export const SEAL_DEFLATE_LEVEL = 6;

/** Most bytes of a preset dictionary (deflate's window). */
export const MAX_DICTIONARY_BYTES = 32 * 1024;

/** One entry to seal, as the tail row keeps it. */
export interface SealInput {
  id: number;
  receivedAt: number;
  ts: number;
  level: number;
  /** The stored JSON text, exactly as returned to readers. */
  body: string;
}

/** A preset dictionary: its id (as the backend numbers it per project) and bytes. */
export interface SealDictionary {
  id: number;
  bytes: Uint8Array;
}

/** What a block's header says, without inflating anything. */
export interface SealedHeader {
  version: number;
  codec: number;
  frameEntries: number;
  dictionaryId: number;
  ids: number[];
  receivedAt: number[];
  ts: number[];
  levels: number[];
  /** Stored length in bytes of each entry's text. */
  lengths: number[];
  /** Byte offset and length of each compressed frame within the block. */
  frames: { offset: number; length: number }[];
}

// ---- encoding -----------------------------------------------------------------

function deflate(text: Buffer, dictionary: SealDictionary | null): Buffer {
  return deflateRawSync(text, { level: SEAL_DEFLATE_LEVEL, ...(dictionary ? { dictionary: dictionary.bytes } : {}) });
}

/**
 * Encodes a run of one project's entries (ids increasing) as a sealed
 * block. The caller cuts runs with `cutSealRuns`; this checks the bounds
 * again and throws a RangeError past them.
 */
export function encodeSealedBlock(entries: readonly SealInput[], dictionary: SealDictionary | null): Uint8Array {
  const n = entries.length;
  if (n === 0 || n > SEAL_MAX_ENTRIES) throw new RangeError(`a sealed block holds 1 to ${SEAL_MAX_ENTRIES} entries, not ${n}`);
  if (dictionary && dictionary.bytes.length > MAX_DICTIONARY_BYTES) throw new RangeError('a preset dictionary holds at most 32 KiB');
  const texts = entries.map((e) => Buffer.from(e.body, 'utf8'));
  const w = new Writer();
  w.u8(SEALED_FORMAT_VERSION);
  w.u8(CODEC_DEFLATE_RAW);
  w.u16(SEAL_FRAME_ENTRIES);
  w.u32(dictionary?.id ?? 0);
  w.u32(n);
  const column = (value: (e: SealInput) => number, signed: boolean) => {
    w.f64(value(entries[0]!));
    for (let i = 1; i < n; i++) {
      const delta = value(entries[i]!) - value(entries[i - 1]!);
      if (signed) w.zigzag(delta);
      else if (delta < 1) throw new RangeError('ids of a sealed block must increase');
      else w.varint(delta);
    }
  };
  column((e) => e.id, false);
  column((e) => e.receivedAt, true);
  column((e) => e.ts, true);
  for (const e of entries) w.u8(e.level);
  for (const t of texts) w.varint(t.length);
  const frames: Buffer[] = [];
  for (let at = 0; at < n; at += SEAL_FRAME_ENTRIES) frames.push(deflate(Buffer.concat(texts.slice(at, at + SEAL_FRAME_ENTRIES)), dictionary));
  for (const f of frames) w.varint(f.length);
  for (const f of frames) w.bytes(f);
  return w.done();
}

// ---- decoding -----------------------------------------------------------------

/**
 * Reads a block's header (ids, times, levels, lengths, frame positions): no
 * inflating. `length`: the whole block's, when `block` holds only its first
 * bytes (a header running past them is SealedBlockError, "truncated").
 */
export function readSealedHeader(block: Uint8Array, length = block.length): SealedHeader {
  const r = new Reader(block);
  const version = r.u8();
  if (version !== SEALED_FORMAT_VERSION) throw new SealedBlockError(`sealed block has format version ${version}; this version reads ${SEALED_FORMAT_VERSION}`);
  const codec = r.u8();
  if (codec !== CODEC_DEFLATE_RAW) throw new SealedBlockError(`sealed block has unknown codec ${codec}`);
  const frameEntries = r.u16();
  const dictionaryId = r.u32();
  const n = r.u32();
  // A filter describes at most FILTER_MAX_FRAMES frames of a block.
  if (n === 0 || n > SEAL_MAX_ENTRIES || frameEntries === 0 || Math.ceil(n / frameEntries) > FILTER_MAX_FRAMES)
    throw new SealedBlockError('sealed block has a malformed header');
  const column = (signed: boolean) => {
    const out = new Array<number>(n);
    out[0] = r.f64();
    if (signed) for (let i = 1; i < n; i++) out[i] = out[i - 1]! + r.zigzag();
    else for (let i = 1; i < n; i++) out[i] = out[i - 1]! + r.varint();
    return out;
  };
  const ids = column(false);
  const receivedAt = column(true);
  const ts = column(true);
  const levels = new Array<number>(n);
  for (let i = 0; i < n; i++) levels[i] = r.u8();
  const lengths = new Array<number>(n);
  for (let i = 0; i < n; i++) lengths[i] = r.varint();
  const count = Math.ceil(n / frameEntries);
  const sizes: number[] = [];
  for (let i = 0; i < count; i++) sizes.push(r.varint());
  const frames: { offset: number; length: number }[] = [];
  let offset = r.at;
  for (const length of sizes) {
    frames.push({ offset, length });
    offset += length;
  }
  if (offset !== length) throw new SealedBlockError('sealed block frames do not fill it');
  return { version, codec, frameEntries, dictionaryId, ids, receivedAt, ts, levels, lengths, frames };
}

function dictionaryFor(header: SealedHeader, dictionary: SealDictionary | null): SealDictionary | null {
  if (header.dictionaryId === 0) return null;
  if (dictionary === null || dictionary.id !== header.dictionaryId) throw new SealedBlockError(`sealed block needs dictionary ${header.dictionaryId}`);
  return dictionary;
}

/** The texts of frame `f` (inflated once). */
function frameTexts(block: Uint8Array, header: SealedHeader, f: number, dictionary: SealDictionary | null): string[] {
  const { offset, length } = header.frames[f]!;
  const first = f * header.frameEntries;
  const last = Math.min(header.ids.length, first + header.frameEntries);
  let expected = 0;
  for (let i = first; i < last; i++) expected += header.lengths[i]!;
  const dict = dictionaryFor(header, dictionary);
  let raw: Buffer;
  try {
    raw = inflateRawSync(block.subarray(offset, offset + length), { ...(dict ? { dictionary: dict.bytes } : {}), maxOutputLength: Math.max(1, expected) });
  } catch {
    throw new SealedBlockError('sealed block frame does not inflate');
  }
  if (raw.length !== expected) throw new SealedBlockError('sealed block frame has the wrong length');
  const out: string[] = [];
  let at = 0;
  for (let i = first; i < last; i++) {
    out.push(raw.toString('utf8', at, at + header.lengths[i]!));
    at += header.lengths[i]!;
  }
  return out;
}

/** One decoded entry of a block. */
export interface SealedEntry {
  id: number;
  receivedAt: number;
  ts: number;
  level: number;
  body: string;
}

/**
 * The entries of a block, oldest first. With `want` (an entry's index and
 * the block's header → whether it is needed), only the frames holding a
 * wanted entry are inflated and only wanted entries returned. `header`:
 * the block's, when the caller has read it already.
 */
export function decodeSealedBlock(
  block: Uint8Array,
  dictionary: SealDictionary | null,
  want?: (index: number, header: SealedHeader) => boolean,
  header: SealedHeader = readSealedHeader(block),
): SealedEntry[] {
  const out: SealedEntry[] = [];
  for (let f = 0; f < header.frames.length; f++) {
    const first = f * header.frameEntries;
    const last = Math.min(header.ids.length, first + header.frameEntries);
    if (want) {
      let any = false;
      for (let i = first; i < last && !any; i++) any = want(i, header);
      if (!any) continue;
    }
    const texts = frameTexts(block, header, f, dictionary);
    for (let i = first; i < last; i++) {
      if (want && !want(i, header)) continue;
      out.push({ id: header.ids[i]!, receivedAt: header.receivedAt[i]!, ts: header.ts[i]!, level: header.levels[i]!, body: texts[i - first]! });
    }
  }
  return out;
}

/** The entry of a block with this id (one frame inflated), or null when the block does not hold it. */
export function decodeSealedEntry(block: Uint8Array, id: number, dictionary: SealDictionary | null): SealedEntry | null {
  const header = readSealedHeader(block);
  const index = binarySearch(header.ids, id);
  if (index < 0) return null;
  return decodeSealedBlock(block, dictionary, (i) => i === index)[0] ?? null;
}

function binarySearch(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === value) return mid;
    if (v < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

// ---- runs and dictionaries ----------------------------------------------------------

/**
 * Cuts one project's tail entries (ids increasing) into runs to seal: at
 * most SEAL_MAX_ENTRIES entries and SEAL_MAX_BYTES stored bytes each (an
 * entry larger than that alone gets a block of its own). Only full runs
 * are returned unless `all`: a part-filled last run stays in the tail
 * until more entries come (or until the tail is old enough to seal anyway).
 */
export function cutSealRuns<T extends { body: string }>(entries: readonly T[], all: boolean): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let bytes = 0;
  for (const e of entries) {
    const size = Buffer.byteLength(e.body, 'utf8');
    if (run.length > 0 && (run.length === SEAL_MAX_ENTRIES || bytes + size > SEAL_MAX_BYTES)) {
      runs.push(run);
      run = [];
      bytes = 0;
    }
    run.push(e);
    bytes += size;
  }
  if (run.length > 0 && (all || run.length === SEAL_MAX_ENTRIES || bytes >= SEAL_MAX_BYTES)) runs.push(run);
  return runs;
}

/**
 * A project's preset dictionary, taken from entries about to be sealed:
 * whole texts, newest last (deflate prefers near matches), up to
 * MAX_DICTIONARY_BYTES, sampled evenly across the run so it carries its
 * kinds of entries, not only its last ones.
 */
export function buildDictionary(bodies: readonly string[], maxBytes = MAX_DICTIONARY_BYTES): Uint8Array {
  if (bodies.length === 0) return new Uint8Array(0);
  const total = bodies.reduce((n, b) => n + Buffer.byteLength(b, 'utf8'), 0);
  const step = Math.max(1, Math.ceil(total / maxBytes));
  const parts: Buffer[] = [];
  let size = 0;
  for (let i = bodies.length - 1; i >= 0; i -= step) {
    const text = Buffer.from(bodies[i]!, 'utf8');
    if (size + text.length > maxBytes) {
      if (size === 0) parts.push(text.subarray(text.length - maxBytes));
      break;
    }
    parts.push(text);
    size += text.length;
  }
  return new Uint8Array(Buffer.concat(parts.reverse()));
}
