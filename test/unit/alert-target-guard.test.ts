/**
 * Where alert webhooks may go: the address classes refused by default,
 * names checked as they resolve, and the webhook signature a receiver
 * recomputes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { guardedLookup, isPrivateAddress } from '../../lib/alerts/target-guard.js';
import { signature } from '../../lib/alerts/senders.js';
import { createSealer } from '../../lib/alerts/sealed.js';

describe('alert targets', () => {
  it('refuses loopback, private, shared, link-local, metadata, multicast and reserved addresses, IPv4-mapped ones included', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'not-an-address',
    ]) {
      assert.equal(isPrivateAddress(address), true, address);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(address), false, address);
  });

  it('checks names in the lookup the connection uses, unless private targets are allowed', async () => {
    const look = (allow: boolean) =>
      new Promise<{ err: Error | null; addresses: unknown }>((resolve) =>
        guardedLookup(allow)('localhost', { all: true }, (err, addresses) => resolve({ err, addresses })),
      );
    const refused = await look(false);
    assert.match(String(refused.err?.message), /localhost resolves to a private or reserved address, refused/);
    const allowed = await look(true);
    assert.equal(allowed.err, null);
    assert.ok(Array.isArray(allowed.addresses) && allowed.addresses.length > 0);
  });

  it('signs "<t>.<body>" with HMAC-SHA256 as the documentation shows', () => {
    const body = '{"a":1}';
    const expected = createHmac('sha256', 'whsec_x').update(`1700000000.${body}`).digest('hex');
    assert.equal(signature('whsec_x', 1700000000, body), `t=1700000000,v1=${expected}`);
  });

  it('seals destinations so that another service secret, or an altered value, cannot open them', () => {
    const sealer = createSealer('a-service-secret-of-enough-length-000');
    const sealed = sealer.seal('{"url":"https://hooks.example.com/x","secret":"whsec_y"}');
    assert.ok(!sealed.includes('hooks.example.com'));
    assert.equal(sealer.open(sealed), '{"url":"https://hooks.example.com/x","secret":"whsec_y"}');
    assert.equal(createSealer('another-secret-of-enough-length-0000000').open(sealed), null);
    const [v, iv, body, tag] = sealed.split('.');
    const flipped = Buffer.from(body!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    assert.equal(sealer.open([v, iv, flipped.toString('base64url'), tag].join('.')), null);
  });
});
