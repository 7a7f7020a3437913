/**
 * The IP rate-limit bucket of an address: IPv4 as is, IPv6 by its /64,
 * IPv4-mapped IPv6 as the IPv4 address; and the throttle spending one
 * bucket for every address of a /64.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addressBucketKey } from '../../lib/core/client-ip.js';
import { createThrottle } from '../../lib/auth/throttle.js';
import { createRateLimiter } from '../../lib/auth/rate-limit.js';
import { silentLogger } from '../../lib/core/logger.js';
import type { Storage } from '../../lib/storage/storage.js';

describe('address bucket keys', () => {
  it('puts two addresses of one IPv6 /64 under one key, whatever their spelling', () => {
    const key = addressBucketKey('2001:db8:0:1::1');
    assert.equal(addressBucketKey('2001:db8:0:1:ffff:ffff:ffff:ffff'), key);
    assert.equal(addressBucketKey('2001:0DB8:0000:0001:0:0:0:2'), key);
    assert.equal(addressBucketKey('2001:db8:0:1::1%eth0'), key);
  });

  it('keeps addresses of different /64s apart', () => {
    assert.notEqual(addressBucketKey('2001:db8:0:1::1'), addressBucketKey('2001:db8:0:2::1'));
    assert.notEqual(addressBucketKey('2001:db8::1'), addressBucketKey('2001:db9::1'));
  });

  it('counts an IPv4-mapped IPv6 address as the IPv4 address, and keeps IPv4 addresses apart', () => {
    assert.equal(addressBucketKey('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(addressBucketKey('::ffff:c000:201'), '192.0.2.1');
    assert.equal(addressBucketKey('192.0.2.1'), '192.0.2.1');
    assert.notEqual(addressBucketKey('192.0.2.1'), addressBucketKey('192.0.2.2'));
  });

  it('leaves what is not an address as it is', () => {
    assert.equal(addressBucketKey('unknown'), 'unknown');
    assert.equal(addressBucketKey('2001:db8::g'), '2001:db8::g');
  });
});

describe('the IP bucket of the throttle', () => {
  const throttleWith = (capacity: number) =>
    createThrottle({
      enabled: true,
      buckets: { capacity, refillPerMinute: 1, maxKeys: 100 },
      // The refusal that opens an episode writes an audit row: this storage accepts it and keeps nothing.
      storage: { write: async () => undefined } as unknown as Storage,
      logger: silentLogger,
      now: () => 0,
      limiter: createRateLimiter({ capacity, refillPerMinute: 1, maxKeys: 100 }),
    });
  const at = (clientIp: string) => ({ clientIp, path: '/v1/auth/token' });

  it('is shared by two addresses in one /64', async () => {
    const throttle = throttleWith(2);
    await throttle.checkIp(at('2001:db8:0:1::1'));
    await throttle.checkIp(at('2001:db8:0:1::2'));
    await assert.rejects(throttle.checkIp(at('2001:db8:0:1::3')), { code: 'too_many_requests' });
  });

  it('is not shared by addresses in different /64s', async () => {
    const throttle = throttleWith(1);
    await throttle.checkIp(at('2001:db8:0:1::1'));
    await throttle.checkIp(at('2001:db8:0:2::1'));
    await assert.rejects(throttle.checkIp(at('2001:db8:0:2::2')), { code: 'too_many_requests' });
  });

  it('is the IPv4 bucket for an IPv4-mapped address', async () => {
    const throttle = throttleWith(1);
    await throttle.checkIp(at('192.0.2.7'));
    await assert.rejects(throttle.checkIp(at('::ffff:192.0.2.7')), { code: 'too_many_requests' });
  });
});
