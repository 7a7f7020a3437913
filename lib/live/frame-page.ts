/**
 * A page of log frames: what a feed writes to the streams at one cursor,
 * whether the entries were read from storage or handed over by ingestion.
 */
import type { LogRow } from '../storage/types-logs.js';
import { logEntryJson } from '../logs/present-log.js';
import { logFrame } from './sse.js';

/**
 * The log frames of `rows` in order, up to `maxBytes` of text: the page
 * stops after the frame that reaches the bound, so it always holds at least
 * one entry (an entry is never split) and at most one entry's worth more.
 */
export function framePage(rows: readonly LogRow[], maxBytes: number): { text: string; lastId: number; count: number } {
  const frames: string[] = [];
  let bytes = 0;
  for (const row of rows) {
    const frame = logFrame(row.id, logEntryJson(row));
    frames.push(frame);
    bytes += Buffer.byteLength(frame, 'utf8');
    if (bytes >= maxBytes) break;
  }
  return { text: frames.join(''), lastId: rows[frames.length - 1]!.id, count: frames.length };
}
