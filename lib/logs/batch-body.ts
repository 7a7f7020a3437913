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
 */
import { isAscii } from 'node:buffer';
import { invalidRequest } from '../core/errors.js';
import { readBatch } from './entry-validation.js';
import { ndjsonLines } from './ndjson-lines.js';
import { BatchPreparer, type BatchTarget, type PreparedBatch } from './prepare-entries.js';

/** `json`: the body is one JSON array; `ndjson`: one entry per line. */
export type BodyFormat = 'json' | 'ndjson';

export interface PrepareBodyOptions {
  format?: BodyFormat;
  /** For tests (default WHOLE_PARSE_LIMIT). */
  wholeParseLimit?: number;
}

/** Bodies up to this size are parsed whole (fastest for the usual batches). */
export const WHOLE_PARSE_LIMIT = 1024 * 1024;

const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const malformed = () => invalidRequest('The request body is not valid JSON.');

// JSON's four whitespace bytes.
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(raw: Buffer, i: number): number {
  while (i < raw.length && isSpace(raw[i])) i++;
  return i;
}

/** Entries prepared between two turns of the event loop (about 10–20 ms of work). */
const YIELD_EVERY = 256;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Reads and prepares the batch in `raw`; 400 when a `json` body is not a
 * JSON array. Yields to the event loop every few hundred entries, so a
 * 10 MiB batch (a second or more of work) never stalls other requests.
 */
export async function prepareBody(raw: Buffer, target: BatchTarget, options: PrepareBodyOptions = {}): Promise<PreparedBatch> {
  const wholeParseLimit = options.wholeParseLimit ?? WHOLE_PARSE_LIMIT;
  const start = skipSpace(raw, 0);
  const preparer = new BatchPreparer(target);
  let prepared = 0;
  const add = async (value: unknown) => {
    preparer.add(value);
    if (++prepared % YIELD_EVERY === 0) await yieldToLoop();
  };
  if (options.format === 'ndjson') {
    for (const line of ndjsonLines(raw)) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        preparer.reject('The line is not valid JSON.');
        continue;
      }
      await add(value);
    }
    return preparer.result();
  }
  if (raw.length <= wholeParseLimit || raw[start] !== OPEN_ARRAY) {
    for (const value of readBatch(parseWhole(raw))) await add(value);
    return preparer.result();
  }
  for (const text of elementsOf(raw, start)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw malformed();
    }
    await add(value);
  }
  return preparer.result();
}

function parseWhole(raw: Buffer): unknown {
  try {
    // ASCII (the usual body) decodes as Latin-1 to the same text, by a
    // plain copy instead of UTF-8 decoding (~3× faster here).
    return JSON.parse(isAscii(raw) ? raw.toString('latin1') : raw.toString('utf8'));
  } catch {
    throw malformed();
  }
}

/**
 * The text of every element of the array opening at `open`, in order. Element boundaries are the commas and the closing
 * bracket at depth 0 outside strings; multi-byte UTF-8 never contains these
 * ASCII bytes, so decoding each slice alone gives the same text as decoding
 * the whole. Structure errors the slices cannot reveal (a stray closing
 * bracket, trailing bytes) are caught here.
 */
function* elementsOf(raw: Buffer, open: number): Generator<string> {
  let i = skipSpace(raw, open + 1);
  if (raw[i] === CLOSE_ARRAY) {
    if (skipSpace(raw, i + 1) !== raw.length) throw malformed();
    return;
  }
  for (;;) {
    const from = i;
    let depth = 0;
    let inString = false;
    for (; i < raw.length; i++) {
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
    yield raw.toString('utf8', from, i);
    if (raw[i] === CLOSE_ARRAY) {
      if (skipSpace(raw, i + 1) !== raw.length) throw malformed();
      return;
    }
    i++;
  }
}
