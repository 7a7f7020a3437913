/**
 * The token buckets as pure arithmetic: continuous refill, the Retry-After
 * value, LRU eviction and throttling-episode detection.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TokenBucketTable, createRateLimiter } from '../../lib/auth/rate-limit.js';

const MINUTE = 60_000;

function table(capacity = 3, refillPerMinute = 6, maxKeys = 100): TokenBucketTable {
  return new TokenBucketTable({ capacity, refillPerMinute, maxKeys });
}

describe('token bucket refill', () => {
  it('starts full, spends one token per take and refuses when empty', () => {
    const t = table(3);
    assert.equal(t.peek('k', 0), 3);
    for (let i = 0; i < 3; i++) assert.deepEqual(t.take('k', 0), { allowed: true });
    const refused = t.take('k', 0);
    assert.equal(refused.allowed, false);
    assert.equal(t.peek('k', 0), 0);
  });

  it('refills continuously at refillPerMinute, never above capacity', () => {
    const t = table(3, 6); // one token every 10 s
    for (let i = 0; i < 3; i++) t.take('k', 0);
    assert.equal(t.peek('k', 5_000), 0.5);
    assert.equal(t.take('k', 5_000).allowed, false);
    assert.equal(t.take('k', 10_000).allowed, true);
    assert.equal(t.peek('k', 10 * MINUTE), 3);
  });

  it('answers Retry-After as the whole seconds until one token is back, at least 1', () => {
    const t = table(1, 6);
    t.take('k', 0);
    const r1 = t.take('k', 0);
    assert.equal(r1.allowed === false && r1.retryAfterSeconds, 10);
    const r2 = t.take('k', 9_500);
    assert.equal(r2.allowed === false && r2.retryAfterSeconds, 1);
    const fast = table(1, 6000); // a token every 10 ms: still at least 1 s
    fast.take('k', 0);
    const r3 = fast.take('k', 0);
    assert.equal(r3.allowed === false && r3.retryAfterSeconds, 1);
  });

  it('adds nothing when the clock steps backwards', () => {
    const t = table(3, 6);
    t.take('k', 100_000);
    t.take('k', 100_000);
    assert.equal(t.peek('k', 50_000), 1);
  });

  it('fill() refills to capacity; refund() gives one token back, capped', () => {
    const t = table(3, 6);
    for (let i = 0; i < 3; i++) t.take('k', 0);
    t.refund('k', 0);
    assert.equal(t.peek('k', 0), 1);
    t.fill('k', 0);
    assert.equal(t.peek('k', 0), 3);
    t.refund('k', 0);
    assert.equal(t.peek('k', 0), 3);
  });

  it('matches the closed form: tokens = min(capacity, capacity - taken + elapsed * rate)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 600 }),
        fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 40 }),
        (capacity, rate, gaps) => {
          const t = table(capacity, rate);
          let now = 0;
          let model = capacity;
          for (const gap of gaps) {
            now += gap;
            model = Math.min(capacity, model + (gap * rate) / MINUTE);
            const result = t.take('k', now);
            if (model >= 1) {
              assert.equal(result.allowed, true);
              model -= 1;
            } else {
              assert.equal(result.allowed, false);
              if (!result.allowed) {
                // Waiting Retry-After seconds always yields a token.
                assert.ok(model + (result.retryAfterSeconds * 1000 * rate) / MINUTE >= 1 - 1e-9);
                assert.ok(result.retryAfterSeconds >= 1);
              }
            }
            assert.ok(Math.abs(t.peek('k', now) - model) < 1e-6);
          }
        },
      ),
    );
  });
});

describe('LRU key table', () => {
  it('never tracks more than maxKeys and forgets the least recently used first', () => {
    const t = table(2, 1, 3);
    t.take('a', 0);
    t.take('b', 0);
    t.take('c', 0);
    t.take('a', 1); // a is now the most recent; b the least
    t.take('d', 2);
    assert.equal(t.size, 3);
    assert.equal(t.has('b'), false);
    assert.ok(t.has('a') && t.has('c') && t.has('d'));
    // A forgotten key comes back full.
    assert.equal(t.peek('b', 2), 2);
  });

  it('holds the cap for any access sequence', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 200 }), (maxKeys, keys) => {
        const t = table(2, 1, maxKeys);
        const recent: number[] = [];
        keys.forEach((k, i) => {
          t.take(`k${k}`, i);
          const at = recent.indexOf(k);
          if (at >= 0) recent.splice(at, 1);
          recent.push(k);
          assert.ok(t.size <= maxKeys);
        });
        // The tracked keys are exactly the maxKeys most recently used.
        for (const k of recent.slice(-maxKeys)) assert.ok(t.has(`k${k}`));
        for (const k of recent.slice(0, -maxKeys)) assert.equal(t.has(`k${k}`), false);
      }),
    );
  });

  it('keeps the IP and subject tables apart', () => {
    const limiter = createRateLimiter({ capacity: 1, refillPerMinute: 1, maxKeys: 10 });
    limiter.ip.take('same', 0);
    assert.equal(limiter.subject.take('same', 0).allowed, true);
    assert.equal(limiter.ip.take('same', 0).allowed, false);
  });
});

describe('throttling episodes', () => {
  it('reports only the first refusal of a run of refusals as an episode start', () => {
    const t = table(1, 6);
    t.take('k', 0);
    const first = t.take('k', 1);
    const second = t.take('k', 2);
    const third = t.take('k', 3);
    assert.ok(!first.allowed && first.episodeStarted);
    assert.ok(!second.allowed && !second.episodeStarted);
    assert.ok(!third.allowed && !third.episodeStarted);
  });

  it('keeps one episode while the caller keeps the bucket from filling up, even if some requests pass', () => {
    const t = table(2, 6); // 10 s per token
    t.take('k', 0);
    t.take('k', 0);
    const opened = t.take('k', 0);
    assert.ok(!opened.allowed && opened.episodeStarted);
    assert.equal(t.take('k', 10_000).allowed, true); // one token came back and is spent
    const again = t.take('k', 11_000);
    assert.ok(!again.allowed && !again.episodeStarted);
  });

  it('ends the episode once the bucket is full again, or on fill()', () => {
    const t = table(2, 6);
    t.take('k', 0);
    t.take('k', 0);
    assert.ok(t.take('k', 0).allowed === false);
    // 20 s later the bucket is full: the episode is over.
    t.take('k', 20_000);
    t.take('k', 20_000);
    const next = t.take('k', 20_000);
    assert.ok(!next.allowed && next.episodeStarted);
    t.fill('k', 20_001);
    t.take('k', 20_001);
    t.take('k', 20_001);
    const afterFill = t.take('k', 20_001);
    assert.ok(!afterFill.allowed && afterFill.episodeStarted);
  });

  it('starts exactly one episode per maximal run of refusals separated by a full bucket (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 25_000 }), { minLength: 1, maxLength: 60 }), (gaps) => {
        const capacity = 2;
        const t = table(capacity, 6);
        let now = 0;
        let tokens = capacity;
        let inEpisode = false;
        for (const gap of gaps) {
          now += gap;
          tokens = Math.min(capacity, tokens + (gap * 6) / MINUTE);
          if (tokens >= capacity) inEpisode = false;
          const r = t.take('k', now);
          if (tokens >= 1) {
            tokens -= 1;
            assert.equal(r.allowed, true);
          } else {
            assert.equal(r.allowed, false);
            assert.equal(!r.allowed && r.episodeStarted, !inEpisode);
            inEpisode = true;
          }
        }
      }),
    );
  });
});

describe('stored keys', () => {
  it('are fixed-size digests: a long key costs the table no more than a short one', () => {
    const t = table(2, 1, 100);
    t.take('a', 0);
    const perKey = t.retainedKeyChars;
    assert.ok(perKey > 0 && perKey <= 64);
    t.take('x'.repeat(256 * 1024), 0);
    t.take('y'.repeat(64 * 1024), 0);
    assert.equal(t.size, 3);
    assert.equal(t.retainedKeyChars, 3 * perKey);
    // The bucket is still the key's own: the same long key spends the same bucket.
    t.take('x'.repeat(256 * 1024), 0);
    assert.equal(t.take('x'.repeat(256 * 1024), 0).allowed, false);
    assert.equal(t.peek('y'.repeat(64 * 1024), 0), 1);
  });
});
