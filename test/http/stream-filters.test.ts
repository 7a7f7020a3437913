/**
 * The stream sends exactly what `GET /v1/logs` returns for the same
 * parameters, oldest first: every filter of the list (level,
 * category, logger, from/to, correlation ids, q, context.*) alone and
 * combined, live and replayed with since_id; a group stream leaves blocked
 * projects out and takes in projects created after it opened.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus, createKey, createProject, createTwoProjectGroup, type TestActor } from '../support/actors.js';
import { fixtureQueries, ingestAll, mixedEntries, queryAllPages } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';

/** Long enough for a stray extra frame to show up after the expected ones. */
const SETTLE_MS = 300;

describeEachBackend('live stream: the same entries as GET /v1/logs', (backend) => {
  let member: TestActor;
  let groupG: number;
  let projectA: number;
  let projectB: number;
  let keyA: string;
  let keyB: string;
  const open: RawStream[] = [];

  const stream = async (params: [string, string][]) => {
    const s = assertOpen(await openRawStream(app.url, `/v1/logs/stream?${new URLSearchParams(params).toString()}`, { token: member.token }));
    open.push(s);
    return s;
  };
  /** GET /v1/logs ids for the parameters, oldest first. */
  const listedIds = async (params: [string, string][]) => (await queryAllPages(app.url, member.token, params, 200)).items.map((i) => i.id as number).reverse();
  const streamedIds = (s: RawStream) => s.logs().map((e) => e.id as number);

  /** Waits for the stream to hold `expected`, lets extra frames show up, and compares exactly. */
  const assertStreamed = async (s: RawStream, expected: number[], label: string) => {
    await s.waitFor((x) => x.frames.filter((f) => f.event === 'log').length >= expected.length, 15_000, `${expected.length} entries for ${label}`);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    assert.deepEqual(streamedIds(s), expected, label);
  };

  // One user holds hundreds of streams open at once here, far past the default caps.
  after(async () => {
    for (const s of open) s.close();
  });
  const app = serviceWithAdmin(backend, { settings: { sseMaxStreams: 10_000, sseMaxStreamsPerUser: 10_000 } });
  before(async () => {
    ({ groupG, projectA, projectB, keyA, keyB, member } = await createTwoProjectGroup(app.url, app.admin.token, `viewer-${backend}`));
  });

  it('live and replayed, every filter alone and combined matches GET /v1/logs exactly', async () => {
    const queries = fixtureQueries();
    assert.ok(queries.length >= 50);
    const scoped = queries.flatMap((q): [string, string][][] => [
      [['project_id', String(projectA)], ...q],
      [['group_id', String(groupG)], ...q],
    ]);
    const live = await Promise.all(scoped.map((params) => stream(params)));
    // The same fixture into two projects of the group, in several commits, so
    // group streams interleave projects and projects interleave commits.
    const fixture = mixedEntries(120, 11);
    for (let i = 0; i < fixture.length; i += 30) {
      await ingestAll(app.url, keyA, fixture.slice(i, i + 30));
      await ingestAll(app.url, keyB, fixture.slice(i, i + 15));
    }
    const expected = await Promise.all(scoped.map((params) => listedIds(params)));
    assert.ok(expected.some((ids) => ids.length > 0) && expected.some((ids) => ids.length === 0), 'the fixture both matches and misses');
    await Promise.all(live.map((s, i) => assertStreamed(s, expected[i]!, `live ${new URLSearchParams(scoped[i]!).toString()}`)));
    for (const s of live) s.close();

    const replayed = await Promise.all(scoped.map((params) => stream([...params, ['since_id', '0']])));
    await Promise.all(replayed.map((s, i) => assertStreamed(s, expected[i]!, `replayed ${new URLSearchParams(scoped[i]!).toString()}`)));
    for (const s of replayed) s.close();
  });

  it('a group stream leaves blocked projects out, also in replay, and takes them back once unblocked', async () => {
    const entry = (event: string) => ({ level: 'info', event, timestamp: '2025-01-01T00:00:00Z' });
    await ingestAll(app.url, keyB, [entry('b-before-block')]);
    const live = await stream([['group_id', String(groupG)]]);
    assertStatus(await api(app.url, 'POST', `/v1/projects/${projectB}/block`, { token: app.admin.token }), 200);
    const replay = await stream([
      ['group_id', String(groupG)],
      ['since_id', '0'],
    ]);
    const listedWhileBlocked = await listedIds([['group_id', String(groupG)]]);
    await assertStreamed(replay, listedWhileBlocked, 'replay while B is blocked');
    assert.ok(replay.logs().every((e) => e.project_id !== projectB));

    await ingestAll(app.url, keyA, [entry('a-while-b-blocked')]);
    await live.waitFor((x) => x.logs().some((e) => e.event === 'a-while-b-blocked'), 10_000, 'the entry of A');
    assert.equal(live.endReason(), null, 'blocking a project of the group does not end a group stream');

    assertStatus(await api(app.url, 'POST', `/v1/projects/${projectB}/unblock`, { token: app.admin.token }), 200);
    await ingestAll(app.url, keyB, [entry('b-after-unblock')]);
    await live.waitFor((x) => x.logs().some((e) => e.event === 'b-after-unblock'), 10_000, 'the entry of B after unblocking');
    assert.deepEqual(
      live.logs().map((e) => e.event),
      ['a-while-b-blocked', 'b-after-unblock'],
    );
    const replayAgain = await stream([
      ['group_id', String(groupG)],
      ['since_id', '0'],
    ]);
    await assertStreamed(replayAgain, await listedIds([['group_id', String(groupG)]]), 'replay after unblocking');
    assert.ok(replayAgain.logs().some((e) => e.event === 'b-before-block'));
  });

  it('a group stream takes in projects created after it opened', async () => {
    const live = await stream([
      ['group_id', String(groupG)],
      ['q', 'latecomer'],
    ]);
    const projectLate = await createProject(app.url, app.admin.token, groupG, 'late');
    const keyLate = (await createKey(app.url, app.admin.token, projectLate)).secret;
    await ingestAll(app.url, keyLate, [{ level: 'warning', event: 'latecomer arrives', timestamp: '2025-01-01T00:00:00Z' }]);
    const [entry] = await live.waitForLogs(1);
    assert.equal(entry.project_id, projectLate);
    assert.equal(entry.event, 'latecomer arrives');
  });
});
