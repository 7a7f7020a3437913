/** Typed query-string reads used by the organisation and audit routes. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseInstant, queryEnum, queryId, queryInstant } from '../../lib/http/query-params.js';
import { LogServiceError } from '../../lib/core/errors.js';

const q = (s: string) => new URLSearchParams(s);
const fieldError = (field: string) => (err: unknown) =>
  err instanceof LogServiceError && err.status === 400 && (err.details as { field: string }).field === field;

describe('query params', () => {
  it('reads ids, treating an empty value as absent and refusing anything but a positive integer', () => {
    assert.equal(queryId(q('a=42'), 'a'), 42);
    assert.equal(queryId(q('a='), 'a'), undefined);
    assert.equal(queryId(q(''), 'a'), undefined);
    for (const bad of ['0', '-1', '1.5', 'x', '01', '99999999999999999']) assert.throws(() => queryId(q(`a=${bad}`), 'a'), fieldError('a'), bad);
  });

  it('reads enums', () => {
    assert.equal(queryEnum(q('t=team'), 't', ['user', 'team']), 'team');
    assert.throws(() => queryEnum(q('t=TEAM'), 't', ['user', 'team']), fieldError('t'));
  });

  it('parses ISO 8601 instants with Z, an offset or none (UTC), and refuses impossible dates', () => {
    assert.equal(parseInstant('2026-01-02T03:04:05.678Z'), Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    assert.equal(parseInstant('2026-01-02 03:04'), Date.UTC(2026, 0, 2, 3, 4));
    assert.equal(parseInstant('2026-01-02T03:04:05+02:00'), Date.UTC(2026, 0, 2, 1, 4, 5));
    assert.equal(parseInstant('2026-01-02T03:04:05.1234-01:30'), Date.UTC(2026, 0, 2, 4, 34, 5, 123));
    for (const bad of ['2026-02-30T00:00Z', '2026-13-01T00:00Z', '2026-01-01', 'yesterday', '2026-01-01T24:00Z', '2026-01-01T00:00+25:00']) {
      assert.equal(parseInstant(bad), null, bad);
    }
    // Years 0–99 are those years, not 1900–1999.
    assert.equal(parseInstant('0042-03-04T05:06:07Z'), Date.parse('0042-03-04T05:06:07.000Z'));
    assert.throws(() => queryInstant(q('from=nope'), 'from'), fieldError('from'));
  });
});
