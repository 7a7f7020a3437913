import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SPARE_BODY_MIN_BYTES, SpareBodyBuffer } from '../../lib/ingest/spare-body-buffer.js';

describe('SpareBodyBuffer', () => {
  it('lends one buffer of the asked size at a time, and the same memory again once given back', () => {
    const spare = new SpareBodyBuffer(4 * SPARE_BODY_MIN_BYTES);
    const first = spare.lend(2 * SPARE_BODY_MIN_BYTES);
    assert.ok(first);
    assert.equal(first.buffer.length, 2 * SPARE_BODY_MIN_BYTES);
    assert.equal(spare.lend(2 * SPARE_BODY_MIN_BYTES), null, 'lent out');
    first.buffer[0] = 7;
    first.giveBack();
    first.giveBack();
    const second = spare.lend(3 * SPARE_BODY_MIN_BYTES);
    assert.ok(second);
    assert.equal(second.buffer.length, 3 * SPARE_BODY_MIN_BYTES);
    assert.equal(second.buffer.buffer, first.buffer.buffer, 'the same memory');
    assert.equal(second.buffer[0], 7);
    // A second give-back of the first loan must not free the second one.
    first.giveBack();
    assert.equal(spare.lend(SPARE_BODY_MIN_BYTES), null);
    second.giveBack();
    assert.ok(spare.lend(SPARE_BODY_MIN_BYTES));
  });

  it('lends nothing for small bodies or bodies over its capacity', () => {
    const spare = new SpareBodyBuffer(2 * SPARE_BODY_MIN_BYTES);
    assert.equal(spare.lend(SPARE_BODY_MIN_BYTES - 1), null);
    assert.equal(spare.lend(2 * SPARE_BODY_MIN_BYTES + 1), null);
    assert.ok(spare.lend(2 * SPARE_BODY_MIN_BYTES));
  });
});
