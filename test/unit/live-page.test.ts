/**
 * The text written to a live stream per page is bounded in bytes: a page
 * stops after the frame that reaches the bound, never splits an entry, and
 * always carries at least one, so a reader that stalls holds at most about
 * one bound's worth (or one entry larger than it).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { framePage } from '../../lib/live/frame-page.js';
import type { LogRow } from '../../lib/storage/types-logs.js';

function row(id: number, padBytes: number): LogRow {
  return {
    id,
    projectId: 1,
    receivedAt: 0,
    body: JSON.stringify({ level: 'info', event: `e${id}`, timestamp: '2024-01-01T00:00:00Z', pad: 'x'.repeat(padBytes) }),
  };
}

describe('live stream pages', () => {
  it('stop after the frame that reaches the byte bound', () => {
    const rows = Array.from({ length: 50 }, (_, i) => row(i + 1, 1000));
    const page = framePage(rows, 10 * 1024);
    assert.ok(page.count > 1 && page.count < rows.length, `count ${page.count}`);
    assert.equal(page.lastId, page.count);
    const bytes = Buffer.byteLength(page.text);
    assert.ok(bytes >= 10 * 1024, `${bytes} bytes`);
    // Without its last frame the page would still be under the bound.
    assert.ok(Buffer.byteLength(framePage(rows.slice(0, page.count - 1), Number.POSITIVE_INFINITY).text) < 10 * 1024);
    assert.equal(page.text.match(/^event: log$/gm)?.length, page.count);
  });

  it('carry the whole read when it fits', () => {
    const rows = Array.from({ length: 5 }, (_, i) => row(i + 10, 10));
    assert.deepEqual({ ...framePage(rows, 64 * 1024), text: undefined }, { text: undefined, lastId: 14, count: 5 });
  });

  it('carry one entry larger than the bound whole', () => {
    const page = framePage([row(7, 100_000), row(8, 10)], 64 * 1024);
    assert.equal(page.count, 1);
    assert.equal(page.lastId, 7);
    assert.ok(page.text.endsWith('\n\n') && page.text.includes('"id":7'));
  });
});
