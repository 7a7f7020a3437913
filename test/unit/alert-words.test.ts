/** Alert rules and notifications in the console's words (console/src/alert-words.ts). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deliveryWords, notificationWords, period, ruleState, ruleSummary } from '../../console/src/alert-words.js';

const time = (iso: string) => iso.slice(11, 19);

describe('alert words', () => {
  it('says periods, rules and states', () => {
    assert.deepEqual(
      [period(60), period(90), period(600), period(3_600), period(86_400), period(7_200)],
      ['1 minute', '90 seconds', '10 minutes', '1 hour', '1 day', '2 hours'],
    );
    assert.equal(
      ruleSummary({ kind: 'any_match', quiet_seconds: 300, window_seconds: null, threshold: null }),
      'Notifies at the first match, then at most once every 5 minutes with the number that matched.',
    );
    assert.equal(
      ruleSummary({ kind: 'threshold', quiet_seconds: null, window_seconds: 600, threshold: 1_000 }),
      'Notifies when 1,000 or more entries match within 10 minutes, and again when fewer do.',
    );
    assert.equal(ruleState({ enabled: true, state: 'firing', paused_reason: null }, '12:00'), 'Firing since 12:00.');
    assert.equal(ruleState({ enabled: true, state: 'ok', paused_reason: null }, '12:00'), 'OK since 12:00.');
    assert.equal(ruleState({ enabled: false, state: 'ok', paused_reason: null }, '12:00'), 'Turned off.');
    assert.equal(ruleState({ enabled: true, state: 'firing', paused_reason: 'project_blocked' }, '12:00'), 'Not notifying: its project is blocked.');
  });

  it('says notifications and their delivery', () => {
    assert.equal(notificationWords({ kind: 'fired', count: 1 }), 'Fired: 1 matching entry');
    assert.equal(notificationWords({ kind: 'repeated', count: 12 }), 'Still matching: 12 matching entries since the last notification');
    assert.equal(notificationWords({ kind: 'resolved', count: 3 }), 'Resolved: 3 matching entries left in the window');
    const base = { attempts: 0, next_attempt_at: null, last_error: null, delivered_at: null };
    assert.equal(deliveryWords({ ...base, state: 'none' }, time), 'Recorded only (the rule sends nowhere).');
    assert.equal(
      deliveryWords({ ...base, state: 'delivered', attempts: 2, delivered_at: '2026-01-01T12:00:05.000Z' }, time),
      'Delivered at 12:00:05 after 2 attempts.',
    );
    assert.equal(
      deliveryWords({ ...base, state: 'pending', attempts: 1, last_error: 'the destination answered 503', next_attempt_at: '2026-01-01T12:00:10.000Z' }, time),
      'Not delivered yet (1 attempt; last: the destination answered 503), next try at 12:00:10.',
    );
    assert.equal(
      deliveryWords({ ...base, state: 'failed', attempts: 9, last_error: 'the destination answered 500' }, time),
      'Not delivered, given up after 9 attempts: the destination answered 500.',
    );
  });
});
