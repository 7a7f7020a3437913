import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createCursorCodec, readPageRequest, toPage } from '../../lib/core/pagination.js';
import { LogServiceError } from '../../lib/core/errors.js';

const codec = createCursorCodec('secret-one');

describe('cursor codec', () => {
  it('round-trips any positive id for its own list', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (id) => {
        assert.equal(codec.decode('users', codec.encode('users', id)), id);
      }),
    );
  });

  it('refuses a cursor from another list, another secret, or tampered', () => {
    const cursor = codec.encode('users', 42);
    const bad = [
      () => codec.decode('groups', cursor),
      () => createCursorCodec('secret-two').decode('users', cursor),
      () => codec.decode('users', cursor.replace(/^[^.]+/, Buffer.from('43').toString('base64url'))),
      () => codec.decode('users', 'garbage'),
      () => codec.decode('users', ''),
      () => codec.decode('users', `${cursor}x`),
    ];
    for (const attempt of bad) {
      assert.throws(attempt, (err: unknown) => err instanceof LogServiceError && err.status === 400 && (err.details as any).field === 'cursor');
    }
  });
});

describe('page requests', () => {
  it('defaults to 50, caps at 200 and refuses what is not a positive integer', () => {
    assert.deepEqual(readPageRequest(new URLSearchParams(), 'u', codec), { limit: 50, beforeId: undefined });
    assert.equal(readPageRequest(new URLSearchParams('limit=500'), 'u', codec).limit, 200);
    assert.equal(readPageRequest(new URLSearchParams('limit=7'), 'u', codec).limit, 7);
    for (const v of ['0', '-1', 'abc', '1.5', '', ' 5']) {
      assert.throws(() => readPageRequest(new URLSearchParams({ limit: v }), 'u', codec), LogServiceError, v);
    }
  });

  it('turns limit+1 rows into a page and a cursor, and no cursor on the last page', () => {
    const rows = [5, 4, 3].map((id) => ({ id }));
    const page = toPage(rows, { limit: 2, beforeId: undefined }, 'u', codec, (r) => r.id);
    assert.deepEqual(page.items, [5, 4]);
    assert.equal(codec.decode('u', page.next_cursor!), 4);
    const last = toPage(rows.slice(0, 2), { limit: 2, beforeId: undefined }, 'u', codec, (r) => r.id);
    assert.equal(last.next_cursor, null);
  });
});
