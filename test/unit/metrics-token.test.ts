/**
 * The bearer check of `GET /metrics`: without a token anyone may read; with
 * one, only `Authorization: Bearer <token>` exactly (the scheme in any
 * case) passes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bearerTokenCheck } from '../../lib/metrics/metrics-token.js';

describe('the metrics bearer token', () => {
  it('lets anyone read when no token is set', () => {
    const check = bearerTokenCheck(null);
    assert.equal(check(undefined), true);
    assert.equal(check('Bearer anything'), true);
  });

  it('requires exactly the token as a bearer credential', () => {
    const check = bearerTokenCheck('s3cret-token');
    assert.equal(check('Bearer s3cret-token'), true);
    assert.equal(check('bearer s3cret-token'), true);
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      's3cret-token',
      'Basic s3cret-token',
      'Bearer s3cret-token2',
      'Bearer s3cret-toke',
      'Bearer s3cret-token extra',
    ]) {
      assert.equal(check(header), false, String(header));
    }
  });
});
