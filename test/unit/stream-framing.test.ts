/**
 * Pure parts of the live stream: event-stream frames and headers,
 * the feed key that lets equal streams share reads, the payloads of the
 * cross-process signals, and the cap on concurrent reads.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { endFrame, logFrame, OPEN_FRAME, PING_FRAME } from '../../lib/live/sse.js';
import { feedKey } from '../../lib/live/live-scope.js';
import { decodeBlocked, decodeEntries, encodeEntries } from '../../lib/live/live-signals.js';
import { ReadGate } from '../../lib/live/read-gate.js';
import type { LogFilter } from '../../lib/search/log-filter.js';

describe('event-stream frames', () => {
  it('frames a log entry as id, event and one data line, ended by a blank line', () => {
    assert.equal(logFrame(42, '{"id":42,"event":"a\\nb"}'), 'id: 42\nevent: log\ndata: {"id":42,"event":"a\\nb"}\n\n');
  });

  it('splits a payload holding raw line breaks into several data lines', () => {
    assert.equal(logFrame(1, 'a\nb\r\nc\rd'), 'id: 1\nevent: log\ndata: a\ndata: b\ndata: c\ndata: d\n\n');
  });

  it('ends with an id-less end frame carrying the reason', () => {
    assert.equal(endFrame('token_revoked'), 'event: end\ndata: {"reason":"token_revoked"}\n\n');
    assert.equal(endFrame('server_shutdown'), 'event: end\ndata: {"reason":"server_shutdown"}\n\n');
  });

  it('opens and pings with comment frames', () => {
    assert.match(OPEN_FRAME, /^:[^\n]*\n\n$/);
    assert.equal(PING_FRAME, ': ping\n\n');
  });
});

describe('feed keys', () => {
  const filter: LogFilter = {
    minLevel: null,
    from: null,
    to: null,
    words: ['b', 'a'],
    prefixes: ['y', 'x'],
    exact: [
      { path: ['category'], value: 'db' },
      { path: ['user', 'id'], value: '42' },
    ],
  };
  const group = { kind: 'group', groupId: 1 } as const;
  it('ignores the order of ANDed words and prefixes', () => {
    assert.equal(feedKey(group, filter), feedKey(group, { ...filter, words: ['a', 'b'] }));
    assert.equal(feedKey(group, filter), feedKey(group, { ...filter, prefixes: ['x', 'y'] }));
  });
  it('ignores the order of ANDed exact-match filters', () => {
    assert.equal(feedKey(group, filter), feedKey(group, { ...filter, exact: [...filter.exact].reverse() }));
  });
  it('tells scopes and filters apart', () => {
    const project = feedKey({ kind: 'project', projectId: 1, groupId: 1 }, filter);
    assert.notEqual(project, feedKey(group, filter));
    assert.notEqual(project, feedKey({ kind: 'project', projectId: 1, groupId: 1 }, { ...filter, minLevel: 3 }));
    const key = feedKey(group, filter);
    const others: LogFilter[] = [
      { ...filter, from: 1 },
      { ...filter, to: 1 },
      { ...filter, words: ['a'] },
      // A word is not a prefix, nor the other way round.
      { ...filter, words: ['a', 'b', 'x'], prefixes: ['y'] },
      { ...filter, exact: [filter.exact[0]!] },
      // Path and value stay apart: user → id = 42 is not user.id = 42 nor user = id.42.
      { ...filter, exact: [filter.exact[0]!, { path: ['user.id'], value: '42' }] },
      { ...filter, exact: [filter.exact[0]!, { path: ['user'], value: 'id.42' }] },
      { ...filter, exact: [filter.exact[0]!, { path: ['user', 'id'], value: '43' }] },
    ];
    for (const other of others) assert.notEqual(feedKey(group, other), key, JSON.stringify(other));
  });
});

describe('cross-process signal payloads', () => {
  it('round-trips committed entries', () => {
    assert.deepEqual(decodeEntries(encodeEntries('me', [3, 7], 120)), { sender: 'me', maxId: 120, projectIds: [3, 7] });
  });
  it('says "any project" when the list would not fit a NOTIFY payload', () => {
    const many = Array.from({ length: 5000 }, (_, i) => i + 1);
    const payload = encodeEntries('me', many, 9);
    assert.ok(payload.length < 8000);
    assert.deepEqual(decodeEntries(payload), { sender: 'me', maxId: 9, projectIds: null });
  });
  it('ignores malformed payloads', () => {
    for (const bad of ['', 'me', 'me x 1', 'me 5 1,a', 'me 5 0']) assert.equal(decodeEntries(bad), null, bad);
    assert.deepEqual(decodeBlocked('me 12'), { sender: 'me', projectId: 12 });
    for (const bad of ['', 'me', 'me x', 'me -1']) assert.equal(decodeBlocked(bad), null, bad);
    // "a credential was revoked": no project, every stream re-checked.
    assert.ok((decodeBlocked('me revoked')?.projectId ?? 0) < 0);
  });
});

describe('read gate', () => {
  it('runs at most `limit` reads at once, in arrival order, and frees the slot of a failed read', async () => {
    const gate = new ReadGate(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const read = (n: number, fail = false) =>
      gate.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running -= 1;
        order.push(n);
        if (fail) throw new Error(`read ${n} failed`);
        return n;
      });
    const results = await Promise.allSettled([read(1), read(2, true), read(3), read(4), read(5)]);
    assert.equal(peak, 2);
    assert.deepEqual(order, [1, 2, 3, 4, 5]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'],
    );
  });
});
