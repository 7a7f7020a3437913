/**
 * The pino transport's mapping of a pino record to a logkeep entry: levels,
 * `msg` → `event`, `time` → `timestamp`, `name` → `logger`, every other field
 * kept, and fields the server would reject or the mapping would overwrite
 * kept under a `pino_` name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NO_MESSAGE, pinoLevel, pinoTimestamp, pinoToEntry } from '../../lib/client/pino.js';

describe('pinoLevel', () => {
  it("maps pino's standard numeric levels", () => {
    assert.deepEqual([10, 20, 30, 40, 50, 60].map(pinoLevel), ['debug', 'debug', 'info', 'warning', 'error', 'critical']);
  });

  it('maps a custom numeric level to the nearest standard level at or below it', () => {
    assert.equal(pinoLevel(35), 'info');
    assert.equal(pinoLevel(45), 'warning');
    assert.equal(pinoLevel(55), 'error');
    assert.equal(pinoLevel(100), 'critical');
    assert.equal(pinoLevel(25), 'debug');
    assert.equal(pinoLevel(1), 'debug');
  });

  it("maps pino's level labels, and anything else to info", () => {
    assert.deepEqual(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map(pinoLevel), ['debug', 'debug', 'info', 'warning', 'error', 'critical']);
    assert.equal(pinoLevel('verbose'), 'info');
    assert.equal(pinoLevel(undefined), 'info');
  });
});

describe('pinoToEntry', () => {
  const time = Date.UTC(2025, 0, 2, 3, 4, 5, 678);

  it('maps level, msg, time and name, and keeps every other field', () => {
    const entry = pinoToEntry({
      level: 40,
      time,
      pid: 12,
      hostname: 'web-1',
      name: 'api',
      msg: 'slow query',
      request_id: 'r-1',
      db: { ms: 812, table: 'users' },
    });
    assert.deepEqual(entry, {
      level: 'warning',
      event: 'slow query',
      timestamp: '2025-01-02T03:04:05.678Z',
      logger: 'api',
      pid: 12,
      hostname: 'web-1',
      request_id: 'r-1',
      db: { ms: 812, table: 'users' },
    });
  });

  it('uses err.message when there is no msg, else a fixed event', () => {
    assert.equal(pinoToEntry({ level: 50, err: { type: 'Error', message: 'boom', stack: '…' } }).event, 'boom');
    assert.equal(pinoToEntry({ level: 50, msg: '', err: { message: 'boom' } }).event, 'boom');
    assert.equal(pinoToEntry({ level: 30 }).event, NO_MESSAGE);
    assert.equal(pinoToEntry({ level: 30, err: { message: '' } }).event, NO_MESSAGE);
    assert.equal(NO_MESSAGE, '(no message)');
  });

  it('keeps err as a field when it supplies the event', () => {
    const entry = pinoToEntry({ level: 50, err: { message: 'boom' } });
    assert.deepEqual(entry.err, { message: 'boom' });
  });

  it('passes a string time as it is and leaves out a missing one', () => {
    assert.equal(pinoToEntry({ level: 30, msg: 'm', time: '2025-01-02T03:04:05.000Z' }).timestamp, '2025-01-02T03:04:05.000Z');
    assert.equal('timestamp' in pinoToEntry({ level: 30, msg: 'm' }), false);
  });

  it('leaves logger out without a name', () => {
    assert.equal('logger' in pinoToEntry({ level: 30, msg: 'm' }), false);
  });

  it('renames fields the server assigns itself', () => {
    const entry = pinoToEntry({ level: 30, msg: 'm', id: 7, project_id: 'p', received_at: 'then' });
    assert.deepEqual(entry, { level: 'info', event: 'm', pino_id: 7, pino_project_id: 'p', pino_received_at: 'then' });
  });

  it('renames a field the mapping would overwrite, and keeps one it would not', () => {
    const entry = pinoToEntry({ level: 30, time, name: 'api', msg: 'm', event: 'signup', timestamp: 'local', logger: 'inner' });
    assert.equal(entry.event, 'm');
    assert.equal(entry.pino_event, 'signup');
    assert.equal(entry.pino_timestamp, 'local');
    assert.equal(entry.pino_logger, 'inner');
    assert.equal(pinoToEntry({ level: 30, msg: 'm', logger: 'inner' }).logger, 'inner');
  });

  it('keeps a record whose time logkeep could not take: no timestamp (the client sets the time received), the value under pino_time', () => {
    const hostile: unknown[] = [
      1e20,
      -1e20,
      8.64e15,
      1.7e18,
      253402300800000,
      -62167219200001,
      '',
      'yesterday',
      '2025-02-30T00:00:00Z',
      '2025-01-01T24:00:00Z',
      '+010000-01-01T00:00:00.000Z',
      true,
      null,
      { at: 1 },
      [1, 2],
    ];
    for (const time of hostile) {
      const entry = pinoToEntry({ level: 30, time, msg: 'm' });
      assert.equal('timestamp' in entry, false, `no timestamp for ${JSON.stringify(time)}`);
      assert.deepEqual(entry.pino_time, time);
      assert.equal(entry.event, 'm');
    }
  });

  it('takes epoch milliseconds across years 0000 to 9999 and the date-times logkeep accepts', () => {
    assert.equal(pinoTimestamp(0), '1970-01-01T00:00:00.000Z');
    assert.equal(pinoTimestamp(-62167219200000), '0000-01-01T00:00:00.000Z');
    assert.equal(pinoTimestamp(253402300799999), '9999-12-31T23:59:59.999Z');
    assert.equal(pinoTimestamp(1.5), '1970-01-01T00:00:00.001Z');
    for (const text of ['2025-01-02T03:04:05.123456789Z', '2024-02-29 23:59', '2025-01-02T03:04:05+05:30', '2025-01-02T03:04:05']) {
      assert.equal(pinoTimestamp(text), text);
    }
    for (const text of ['2025-02-29T00:00:00Z', '2025-13-01T00:00:00Z', '2025-01-01T00:00:60Z', '2025-01-01T00:00:00+24:00', '2025-01-01']) {
      assert.equal(pinoTimestamp(text), undefined, text);
    }
  });

  it('keeps a field named pino_time beside a bad time, and a msg or name that is not a string', () => {
    const entry = pinoToEntry({ level: 30, time: 'soon', pino_time: 'mine', msg: { text: 'm' }, name: 7 });
    assert.deepEqual(entry, { level: 'info', event: NO_MESSAGE, pino_time: 'soon', pino_pino_time: 'mine', pino_msg: { text: 'm' }, pino_name: 7 });
  });

  it('loses no field when renamed names meet, and keeps __proto__ and inherited names as plain fields', () => {
    const record = JSON.parse('{"level":30,"msg":"m","pino_id":"a","id":"b","toString":"t","constructor":1,"__proto__":{"event":"x"}}');
    const entry = pinoToEntry(record);
    assert.equal(entry.pino_id, 'a');
    assert.equal(entry.pino_pino_id, 'b');
    assert.equal(entry.toString, 't');
    assert.equal(entry.constructor, 1);
    assert.equal(Object.getPrototypeOf(entry), Object.prototype);
    assert.deepEqual(JSON.parse(JSON.stringify(entry)).__proto__, { event: 'x' });
    assert.equal(entry.event, 'm');
  });

  it('does not modify the record', () => {
    const record = { level: 30, msg: 'm', id: 1, nested: { a: 1 } };
    const copy = structuredClone(record);
    pinoToEntry(record);
    assert.deepEqual(record, copy);
  });
});
