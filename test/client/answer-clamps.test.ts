/**
 * How the client believes a 202, for any body a server could send: parsed
 * from random JSON shaped like an IngestionResponse (and unlike one), its
 * counts never exceed the batch sent and each entry is reported at most once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseIngestionAnswer, settleAnswer } from '../../lib/client/ingest-answer.js';

const number = fc.oneof(fc.integer({ min: -5, max: 10 }), fc.double(), fc.constantFrom(1e9, -1e9, 2 ** 53, 0.5));
const rejection = fc.oneof(
  fc.record({ index: number, error: fc.oneof(fc.string(), fc.integer()), message: fc.oneof(fc.string(), fc.constant(null)) }, { requiredKeys: ['index'] }),
  fc.anything(),
);
const body = fc.oneof(
  fc.record(
    { accepted: number, rejected: fc.array(rejection, { maxLength: 40 }), rejected_count: fc.oneof(number, fc.string()) },
    { requiredKeys: ['accepted', 'rejected'] },
  ),
  fc.anything(),
);

describe('settling a 202 answer', () => {
  it('never counts more than was sent, and reports each sent index at most once', () => {
    fc.assert(
      fc.property(body, fc.integer({ min: 1, max: 8 }), (value, sent) => {
        const text = JSON.stringify(value) ?? 'null';
        const { accepted, rejected, reported } = settleAnswer(parseIngestionAnswer(text), sent);
        assert.ok(Number.isInteger(accepted) && accepted >= 0 && accepted <= sent);
        assert.ok(Number.isInteger(rejected) && rejected >= 0 && accepted + rejected <= sent);
        assert.ok(reported.length <= rejected);
        const indexes = reported.map((r) => r.index);
        assert.equal(new Set(indexes).size, indexes.length);
        assert.ok(indexes.every((i) => Number.isInteger(i) && i >= 0 && i < sent));
        assert.ok(reported.every((r) => typeof r.error === 'string' && typeof r.message === 'string'));
      }),
      { numRuns: 2000 },
    );
  });

  it("takes logkeep's own answers as they are, with or without rejected_count", () => {
    const listed = [{ index: 1, error: 'validation_error', message: "'event' must be a non-empty string." }];
    assert.deepEqual(settleAnswer(parseIngestionAnswer(JSON.stringify({ accepted: 2, rejected: listed })), 3), { accepted: 2, rejected: 1, reported: listed });
    assert.deepEqual(settleAnswer(parseIngestionAnswer(JSON.stringify({ accepted: 0, rejected: listed, rejected_count: 3 })), 3), {
      accepted: 0,
      rejected: 3,
      reported: listed,
    });
    assert.deepEqual(settleAnswer(parseIngestionAnswer('<html>ok</html>'), 3), { accepted: 3, rejected: 0, reported: [] });
  });
});
