import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CODES, LogServiceError, errorStatuses, type ErrorCode } from '../../lib/core/errors.js';

describe('error codes', () => {
  it('takes every error status from the one table', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const err = new LogServiceError(code, 'x');
      assert.equal(err.status, errorStatuses(code)[0], code);
      assert.ok(err.status >= 400 && err.status < 600, code);
    }
  });

  it('answers invalid_grant with 400 by default and 401 when asked', () => {
    assert.equal(new LogServiceError('invalid_grant', 'x').status, 400);
    assert.equal(new LogServiceError('invalid_grant', 'x', { status: 401 }).status, 401);
  });

  it('refuses a status the table does not list for the code', () => {
    assert.throws(() => new LogServiceError('not_found', 'x', { status: 400 }), /never answered with status 400/);
  });

  it('keeps details and headers', () => {
    const err = new LogServiceError('too_many_requests', 'slow down', { details: { a: 1 }, headers: { 'Retry-After': '3' } });
    assert.deepEqual([err.code, err.status, err.message, err.details, err.headers], ['too_many_requests', 429, 'slow down', { a: 1 }, { 'Retry-After': '3' }]);
  });
});
