/**
 * Turns a raw ingestion body into a prepared batch: a JSON array (anything
 * else, or malformed JSON, is 400 and nothing is stored), or NDJSON, where
 * each line is an element on its own and a line that is not JSON is only
 * that element's `validation_error`.
 *
 * A large body is not handed to one JSON.parse: the parsed tree of a 10 MiB
 * batch costs well over 100 MB of heap. Instead the top-level array is cut
 * into its elements by a byte scanner and each element is parsed and
 * prepared on its own, so only the (compact) prepared entries stay alive
 * and the garbage of each parse dies young. Every element is read before
 * anything is stored, so a malformed element still refuses the whole body.
 *
 * Nothing here holds the event loop for long (yield-pacer.ts): the loop
 * over elements or lines yields on every path, good elements or bad. One
 * element cannot be cut, and one element of zeros costs ~0.5 s a MiB to
 * prepare, so on the event loop (with `offload`) an element of
 * OFFLOAD_MIN_BYTES or more is prepared on the preparation worker, and an
 * element longer than MAX_ELEMENT_BYTES is refused without being read.
 */
import { isAscii } from 'node:buffer';
import { invalidRequest } from '../core/errors.js';
import { readBatch } from './entry-validation.js';
import { ndjsonLines } from './ndjson-lines.js';
import { BatchBuilder, entryFromText, type BatchTarget, type PreparedBatch, type TextOutcome } from './prepared-batch.js';
import { YieldPacer } from './yield-pacer.js';
import { isJsonSpace as isSpace } from './json-syntax.js';

/** `json`: the body is one JSON array; `ndjson`: one entry per line. */
export type BodyFormat = 'json' | 'ndjson';

export interface PlainBodyOptions {
  format?: BodyFormat;
  /** Bodies up to this size are parsed whole (default WHOLE_PARSE_LIMIT, or OFFLOAD_MIN_BYTES with `offload`). */
  wholeParseLimit?: number;
  /**
   * Prepares one element's text elsewhere, as `entryFromText` would (the
   * preparation worker): elements of OFFLOAD_MIN_BYTES or more go there.
   */
  offload?: (text: string) => Promise<TextOutcome>;
}

/**
 * The longest element (or NDJSON line) read, as sent, in bytes: a longer
 * one is that index's `validation_error` without being parsed. One element
 * is prepared in one piece (about 0.5 s a MiB at worst, on the worker
 * with its bounded heap), and log stores bound entries alike (1 MiB is the
 * largest of the usual limits).
 */
export const MAX_ELEMENT_BYTES = 1024 * 1024;

/**
 * What one plain batch may store, per byte of its decoded body: each entry
 * is stored as the compact JSON of what was parsed, never longer than this
 * many times its text as sent. Compacting only shortens text; the growth
 * comes from numbers, which are stored written out (`9e20` is 4 bytes sent
 * and 21 stored, 5.25 ×), and from bytes that are not UTF-8 (each stored as
 * U+FFFD, 3 bytes). Not a check: a bound that holds by construction, stated
 * here and tested by the route fuzz.
 */
export const PLAIN_STORED_BYTES_PER_BODY_BYTE = 6;

/**
 * Bodies up to this size are parsed whole (fastest for the usual batches).
 * Never above MAX_ELEMENT_BYTES: an element of a body parsed whole is
 * shorter than the body, so it can never be one the limit refuses.
 */
export const WHOLE_PARSE_LIMIT = MAX_ELEMENT_BYTES;

/**
 * Elements at least this long are prepared by `offload` when there is one:
 * a shorter element, or a body up to this size parsed whole, holds the
 * event loop for less than a slice's worth (docs/measurements.md).
 */
export const OFFLOAD_MIN_BYTES = 64 * 1024;

/** Bytes of one element scanned between two turns of the event loop (a few milliseconds). */
const SCAN_SLICE_BYTES = 1024 * 1024;

const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const malformed = () => invalidRequest('The request body is not valid JSON.');
const NOT_JSON_LINE = 'The line is not valid JSON.';
const TOO_LONG = `The entry is longer than ${MAX_ELEMENT_BYTES} bytes of JSON text.`;

function skipSpace(raw: Buffer, i: number): number {
  while (i < raw.length && isSpace(raw[i])) i++;
  return i;
}

/**
 * Reads and prepares the batch in `raw`; 400 when a `json` body is not a
 * JSON array. Yields to the event loop between short slices (see
 * yield-pacer.ts), so a 10 MiB batch never stalls other requests.
 */
export async function batchFromPlainBody(raw: Buffer, target: BatchTarget, options: PlainBodyOptions = {}): Promise<PreparedBatch> {
  const offload = options.offload ?? null;
  const wholeParseLimit = options.wholeParseLimit ?? (offload === null ? WHOLE_PARSE_LIMIT : OFFLOAD_MIN_BYTES);
  const ndjson = options.format === 'ndjson';
  const builder = new BatchBuilder(target);
  const pacer = new YieldPacer();
  const start = skipSpace(raw, 0);
  if (!ndjson && raw.length <= wholeParseLimit) {
    for (const value of readBatch(parseWhole(raw))) {
      builder.add(value);
      if (pacer.due()) await pacer.pause();
    }
    return builder.result();
  }
  // Parsing a large body only to learn that it is not an array would hold the loop for nothing: readBatch throws its 400.
  if (!ndjson && raw[start] !== OPEN_ARRAY) readBatch(null);
  for (const range of ndjson ? ndjsonLines(raw) : elementsOf(raw, start)) {
    if (range === null) {
      // The scanner is inside a long element: let the event loop run.
      await pacer.pause();
      continue;
    }
    const [from, to] = range;
    const length = to - from;
    if (length > MAX_ELEMENT_BYTES) builder.reject(TOO_LONG);
    else {
      const text = raw.toString('utf8', from, to);
      const outcome = offload !== null && length >= OFFLOAD_MIN_BYTES ? await offload(text) : entryFromText(text);
      if (outcome !== null) builder.addPrepared(outcome);
      else if (ndjson) builder.reject(NOT_JSON_LINE);
      else throw malformed();
    }
    if (pacer.due(length)) await pacer.pause();
  }
  return builder.result();
}

function parseWhole(raw: Buffer): unknown {
  try {
    // ASCII (the usual body) decodes as Latin-1 to the same text, by a
    // plain copy instead of UTF-8 decoding, which is several times slower.
    return JSON.parse(isAscii(raw) ? raw.toString('latin1') : raw.toString('utf8'));
  } catch {
    throw malformed();
  }
}

/**
 * The byte range `[start, end)` of every element of the array opening at
 * `open`, in order. Element boundaries are the commas and the closing
 * bracket at depth 0 outside strings; multi-byte UTF-8 never contains these
 * ASCII bytes, so decoding each slice alone gives the same text as decoding
 * the whole. Structure errors the slices cannot reveal (a stray closing
 * bracket, trailing bytes) are caught here. In a long element the scan
 * stops every SCAN_SLICE_BYTES with a `null`, for the caller to yield to
 * the event loop.
 */
function* elementsOf(raw: Buffer, open: number): Generator<[start: number, end: number] | null> {
  let i = skipSpace(raw, open + 1);
  if (raw[i] === CLOSE_ARRAY) {
    if (skipSpace(raw, i + 1) !== raw.length) throw malformed();
    return;
  }
  for (;;) {
    const from = i;
    let depth = 0;
    let inString = false;
    let pauseAt = i + SCAN_SLICE_BYTES;
    for (; i < raw.length; i++) {
      if (i >= pauseAt) {
        yield null;
        pauseAt = i + SCAN_SLICE_BYTES;
      }
      const b = raw[i]!;
      if (inString) {
        if (b === BACKSLASH) i++;
        else if (b === QUOTE) inString = false;
        continue;
      }
      if (b === QUOTE) inString = true;
      else if (b === OPEN_ARRAY || b === OPEN_OBJECT) depth++;
      else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
        if (depth === 0) break;
        depth--;
      } else if (b === COMMA && depth === 0) break;
    }
    if (i >= raw.length || (raw[i] !== COMMA && raw[i] !== CLOSE_ARRAY)) throw malformed();
    yield [from, i];
    if (raw[i] === CLOSE_ARRAY) {
      if (skipSpace(raw, i + 1) !== raw.length) throw malformed();
      return;
    }
    i++;
  }
}
