/**
 * The lines of an NDJSON body (`application/x-ndjson`): one entry per line,
 * `\n` or `\r\n` line ends, lines of only whitespace skipped. A line's
 * index in the batch is its 0-based position among the non-blank lines.
 */
import { isJsonSpace as isSpace } from './json-syntax.js';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The byte range `[start, end)` of every non-blank line, in order, without
 * its line end. A newline byte never occurs inside multi-byte UTF-8, so
 * decoding each line alone gives the same text as decoding the whole; the
 * caller can also judge a line by its length before decoding it.
 */
export function* ndjsonLines(raw: Buffer): Generator<[start: number, end: number]> {
  let from = 0;
  while (from < raw.length) {
    let end = raw.indexOf(NEWLINE, from);
    if (end < 0) end = raw.length;
    let last = end;
    if (last > from && raw[last - 1] === CARRIAGE_RETURN) last--;
    let first = from;
    while (first < last && isSpace(raw[first])) first++;
    if (first < last) yield [from, last];
    from = end + 1;
  }
}
