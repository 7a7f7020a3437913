/**
 * Several logkeep processes on one PostgreSQL database: an entry
 * ingested through one reaches matching streams of another, a project
 * blocked through one ends the other's streams at once (not a heartbeat
 * later), and a lost LISTEN connection loses nothing. First with two
 * services in this process, then with two real `logkeep` processes, which
 * also end their streams with `server_shutdown` on SIGTERM without waiting.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pgPromise from 'pg-promise';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, createGroup, createKey, createProject, signIn, signInAdmin, type TestActor } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';
import { PG, createThrowawayDatabase, postgresSkipReason, type ThrowawayDatabase } from '../support/postgres.js';
import { BIN_BOOTSTRAP_PASSWORD, assertBinBuilt, startPostgresBin, type RunningBin } from '../support/bin.js';

const skip = (await postgresSkipReason()) ?? false;
const entry = (event: string) => ({ level: 'info', event, timestamp: '2025-01-01T00:00:00Z' });

describe('live stream across services sharing one PostgreSQL [server]', { skip }, () => {
  let first: RunningService;
  let second: RunningService;
  let admin: TestActor;
  let groupG: number;
  let projectA: number;
  let keyA: string;
  const open: RawStream[] = [];

  const streamOnSecond = async (query: string) => {
    const s = assertOpen(await openRawStream(second.url, `/v1/logs/stream?${query}`, { token: admin.token }));
    open.push(s);
    await s.waitFor((x) => x.text.length > 0, 5_000, 'the opening comment');
    return s;
  };

  before(async () => {
    // A heartbeat far away: whatever arrives came through NOTIFY.
    const settings = { sseHeartbeatIntervalSeconds: 3600 };
    first = await startService('server', { settings });
    second = await startService('server', { settings, database: first.database });
    admin = await signInAdmin(first.url);
    groupG = await createGroup(first.url, admin.token, 'G');
    projectA = await createProject(first.url, admin.token, groupG, 'A');
    keyA = (await createKey(first.url, admin.token, projectA)).secret;
  });
  after(async () => {
    for (const s of open) s.close();
    await second.stop();
    await first.stop({ dropDatabase: true });
  });

  it('an entry ingested through one service reaches the other service’s streams', async () => {
    const direct = await streamOnSecond(`project_id=${projectA}`);
    const group = await streamOnSecond(`group_id=${groupG}&q=crossing`);
    await ingestAll(first.url, keyA, [entry('crossing over'), entry('not matching the group filter')]);
    const [got] = await direct.waitForLogs(1, 5_000);
    assert.equal(got.event, 'crossing over');
    await direct.waitForLogs(2, 5_000);
    const [viaGroup] = await group.waitForLogs(1, 5_000);
    assert.equal(viaGroup.id, got.id);

    const projectLate = await createProject(first.url, admin.token, groupG, 'late');
    const keyLate = (await createKey(first.url, admin.token, projectLate)).secret;
    await ingestAll(first.url, keyLate, [entry('crossing late')]);
    const viaGroupLate = await group.waitForLogs(2, 5_000);
    assert.equal(viaGroupLate[1].project_id, projectLate, 'a project created through the other service joins the group stream');
  });

  it('entries of one project stored through both services reach each service’s streams once, in id order', async () => {
    const project = await createProject(first.url, admin.token, groupG, 'both-ways');
    const key = (await createKey(first.url, admin.token, project)).secret;
    const onFirst = assertOpen(await openRawStream(first.url, `/v1/logs/stream?project_id=${project}`, { token: admin.token }));
    open.push(onFirst);
    await onFirst.waitFor((x) => x.text.length > 0, 5_000, 'the opening comment');
    const onSecond = await streamOnSecond(`project_id=${project}`);
    // A service's own commits go to its streams from memory only while none
    // of the other's lies between; otherwise the streams read.
    const events: string[] = [];
    const sending: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      const event = `turn ${i}`;
      events.push(event);
      // Pairs sent at once, so the two services' commits interleave closely.
      sending.push(ingestAll(i % 2 === 0 ? second.url : first.url, key, [entry(event)]));
      if (i % 2 === 1) await Promise.all(sending.splice(0));
    }
    for (const s of [onFirst, onSecond]) {
      const got = await s.waitForLogs(events.length, 10_000);
      assert.deepEqual([...got.map((e) => e.event)].sort(), [...events].sort(), 'every entry once');
      const ids = got.map((e) => Number(e.id));
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'in id order',
      );
    }
  });

  it('blocking a project through one service ends the other service’s streams at once', async () => {
    const project = await createProject(first.url, admin.token, groupG, 'blocked-remotely');
    const s = await streamOnSecond(`project_id=${project}`);
    assertStatus(await api(first.url, 'POST', `/v1/projects/${project}/block`, { token: admin.token }), 200);
    await s.waitClosed(5_000);
    assert.equal(s.endReason(), 'project_blocked');
  });

  it('loses nothing when the LISTEN connections drop', async () => {
    const s = await streamOnSecond(`project_id=${projectA}&q=afterdrop`);
    const pgp = pgPromise({ noWarnings: true });
    const pgAdmin = pgp({ host: PG.host, port: PG.port, user: PG.user, password: PG.password, database: PG.adminDatabase, max: 1 });
    try {
      const killed = await pgAdmin.any(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%'`, [
        first.database.config.dbServerDatabase,
      ]);
      assert.ok(killed.length >= 2, 'both services had a listening connection');
    } finally {
      await pgAdmin.$pool.end();
    }
    // Sent at once: the listeners may still be reconnecting, so NOTIFY can miss.
    await ingestAll(first.url, keyA, [entry('afterdrop one')]);
    const [got] = await s.waitForLogs(1, 10_000);
    assert.equal(got.event, 'afterdrop one');
    await ingestAll(first.url, keyA, [entry('afterdrop two')]);
    await s.waitForLogs(2, 5_000);
  });
});

describe('live stream across logkeep processes sharing one PostgreSQL [server]', { skip }, () => {
  let database: ThrowawayDatabase;
  const bins: RunningBin[] = [];
  const open: RawStream[] = [];

  const serve = async (): Promise<{ bin: RunningBin; url: string }> => {
    const started = await startPostgresBin({ ...PG, database: database.name }, ['--sse-heartbeat-interval-seconds', '3600']);
    bins.push(started.bin);
    return started;
  };

  before(async () => {
    assertBinBuilt();
    database = await createThrowawayDatabase();
  });
  after(async () => {
    for (const s of open) s.close();
    for (const bin of bins) bin.kill();
    await database.drop();
  });

  it('ingest through one process, receive on the other; SIGTERM ends streams with server_shutdown and exits promptly', async () => {
    const one = await serve();
    const two = await serve();
    const first = await api(one.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: BIN_BOOTSTRAP_PASSWORD } });
    assertStatus(first, 200);
    const changed = await api(one.url, 'POST', '/v1/auth/change-password', {
      token: first.body.access_token,
      json: { current_password: BIN_BOOTSTRAP_PASSWORD, new_password: 'admin-password-final-9' },
    });
    assertStatus(changed, 200);
    const admin = await signIn(one.url, 'admin', 'admin-password-final-9');
    const group = await createGroup(one.url, admin.token, 'G');
    const project = await createProject(one.url, admin.token, group, 'A');
    const key = (await createKey(one.url, admin.token, project)).secret;

    const onTwo = assertOpen(await openRawStream(two.url, `/v1/logs/stream?group_id=${group}`, { token: admin.token }));
    open.push(onTwo);
    await onTwo.waitFor((x) => x.text.length > 0, 5_000, 'the opening comment');
    await ingestAll(one.url, key, [entry('from process one')]);
    await ingestAll(two.url, key, [entry('from process two')]);
    const got = await onTwo.waitForLogs(2, 10_000);
    assert.deepEqual(
      got.map((e) => e.event),
      ['from process one', 'from process two'],
    );

    const stopping = Date.now();
    two.bin.child.kill('SIGTERM');
    await onTwo.waitClosed(5_000);
    assert.equal(onTwo.endReason(), 'server_shutdown');
    const result = await two.bin.exited(10_000);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(Date.now() - stopping < 5_000, `an open stream does not hold the shutdown (${Date.now() - stopping} ms)`);

    one.bin.child.kill('SIGTERM');
    assert.equal((await one.bin.exited(10_000)).code, 0);
  });
});
