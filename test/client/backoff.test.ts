/**
 * The client's retry timing as pure functions: full-jitter exponential
 * backoff with a cap, and `Retry-After` as seconds or as an HTTP date.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, parseRetryAfter, retryDelay, type BackoffPolicy } from '../../lib/client/backoff.js';

const policy: BackoffPolicy = { baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 60_000 };

describe('backoffDelay', () => {
  it('doubles the ceiling per retry up to the cap, and scales it by the random draw', () => {
    const top = () => 0.999999;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 50, 5000].map((r) => backoffDelay(r, policy, top)),
      [99, 199, 399, 799, 999, 999, 999, 999],
    );
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((r) => backoffDelay(r, policy, () => 0.5)),
      [50, 100, 200, 400, 500],
    );
  });

  it('can be zero (full jitter starts at 0)', () => {
    assert.equal(
      backoffDelay(3, policy, () => 0),
      0,
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);

  it('reads delta-seconds', () => {
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter('2', now), 2000);
    assert.equal(parseRetryAfter(' 120 ', now), 120_000);
    assert.equal(parseRetryAfter(['7', '9'], now), 7000);
  });

  it('reads an HTTP date relative to now; a past date means now', () => {
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 12:00:03 GMT', now), 3000);
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 11:59:00 GMT', now), 0);
  });

  it('ignores what is neither', () => {
    for (const bad of [undefined, '', 'soon', '-1', '1.5', '2025-01-01T12:00:03Z']) assert.equal(parseRetryAfter(bad, now), null, String(bad));
  });
});

describe('retryDelay', () => {
  it("prefers the server's Retry-After to backoff, capped at maxRetryAfterMs", () => {
    assert.equal(
      retryDelay(1, 5000, policy, () => 0.5),
      5000,
    );
    assert.equal(
      retryDelay(1, 0, policy, () => 0.5),
      0,
    );
    assert.equal(
      retryDelay(1, 3_600_000, policy, () => 0.5),
      60_000,
    );
    assert.equal(
      retryDelay(3, null, policy, () => 0.5),
      200,
    );
  });
});
