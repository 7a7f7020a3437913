/**
 * The pino transport's mapping of a pino record to a logkeep entry: levels,
 * `msg` → `event`, `time` → `timestamp`, `name` → `logger`, every other field
 * kept, and fields the server would reject or the mapping would overwrite
 * kept under a `pino_` name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NO_MESSAGE, pinoLevel, pinoToEntry } from '../../lib/client/pino.js';

describe('pinoLevel', () => {
  it('maps pino\'s standard numeric levels', () => {
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

  it('maps pino\'s level labels, and anything else to info', () => {
    assert.deepEqual(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map(pinoLevel), ['debug', 'debug', 'info', 'warning', 'error', 'critical']);
    assert.equal(pinoLevel('verbose'), 'info');
    assert.equal(pinoLevel(undefined), 'info');
  });
});

describe('pinoToEntry', () => {
  const time = Date.UTC(2025, 0, 2, 3, 4, 5, 678);

  it('maps level, msg, time and name, and keeps every other field', () => {
    const entry = pinoToEntry({ level: 40, time, pid: 12, hostname: 'web-1', name: 'api', msg: 'slow query', request_id: 'r-1', db: { ms: 812, table: 'users' } });
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

  it('does not modify the record', () => {
    const record = { level: 30, msg: 'm', id: 1, nested: { a: 1 } };
    const copy = structuredClone(record);
    pinoToEntry(record);
    assert.deepEqual(record, copy);
  });
});
