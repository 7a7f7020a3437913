/**
 * GET /v1/logs/histogram over HTTP on both backends: the check order of
 * `GET /v1/logs` (and its 403 versus 404 rule), the grid (nice steps,
 * alignment, defaults), entries on bucket edges and range edges, empty
 * ranges, whole and partial minutes and hours (the rollup), and every
 * filter of the list, each answer checked against the reference matcher
 * and against what `GET /v1/logs` returns.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, type ApiResponse } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject } from '../support/actors.js';
import { fixtureQueries, ingestAll, LEVELS, mixedEntries, queryAllPages, referenceMatches } from '../support/logs.js';

const FIXTURE_SIZE = 160;
/** The service's clock: the default range ends here. */
const NOW = Date.UTC(2025, 5, 10, 12, 34, 56, 789);
/** A range holding every fixture entry (they lie within 2025-03-01T00:00Z + 160 minutes). */
const WHOLE: [string, string][] = [
  ['from', '2025-02-28T23:00:00Z'],
  ['to', '2025-03-01T03:00:00Z'],
];

function histogram(url: string, token: string, params: string | [string, string][]): Promise<ApiResponse> {
  const qs = typeof params === 'string' ? params : new URLSearchParams(params).toString();
  return api(url, 'GET', `/v1/logs/histogram?${qs}`, { token });
}

const iso = (ms: number) => new Date(ms).toISOString();
const zero = () => ({ debug: 0, info: 0, warning: 0, error: 0, critical: 0 });

describeEachBackend('GET /v1/logs/histogram', (backend) => {
  let groupG: number;
  let groupH: number;
  let projectA: number;
  let projectB: number;
  let projectC: number;
  let keyA: string;
  let keyC: string;
  const fixture = mixedEntries(FIXTURE_SIZE, 11);

  const app = serviceWithAdmin(backend, { now: () => NOW });
  before(async () => {
    groupG = await createGroup(app.url, app.admin.token, 'G');
    groupH = await createGroup(app.url, app.admin.token, 'H');
    projectA = await createProject(app.url, app.admin.token, groupG, 'A');
    projectB = await createProject(app.url, app.admin.token, groupG, 'B');
    projectC = await createProject(app.url, app.admin.token, groupH, 'C');
    keyA = (await createKey(app.url, app.admin.token, projectA)).secret;
    const keyB = (await createKey(app.url, app.admin.token, projectB)).secret;
    keyC = (await createKey(app.url, app.admin.token, projectC)).secret;
    await ingestAll(app.url, keyA, fixture);
    await ingestAll(app.url, keyB, mixedEntries(40, 12));
  });

  it('checks the scope as GET /v1/logs does (shape, 404, 403 forbidden, 403 project_blocked), then filters, cursor/limit, buckets, the range', async () => {
    const outsider = await createActor(app.url, app.admin.token, `h-outsider-${backend}`, {
      grants: [{ role: 'user', scope_type: 'group', scope_id: groupH }],
    });
    const h = (token: string, qs: string) => histogram(app.url, token, qs);
    for (const qs of ['', 'buckets=0', 'project_id=1&group_id=1']) {
      const res = await h(outsider.token, qs);
      assertStatus(res, 400, 'invalid_request', qs);
      assert.deepEqual(res.body.details, { field: 'project_id', reason: 'invalid' });
    }
    assertStatus(await h(outsider.token, 'group_id=x'), 400, 'invalid_request');
    assertStatus(await h(outsider.token, 'project_id=999999&buckets=0'), 404, 'not_found');
    assertStatus(await h(outsider.token, 'group_id=999999&level=bogus'), 404, 'not_found');
    assertStatus(await h(outsider.token, `project_id=${projectA}&buckets=0`), 403, 'forbidden');
    assertStatus(await h(outsider.token, `group_id=${groupG}&limit=5`), 403, 'forbidden');
    assertStatus(await h(outsider.token, `project_id=${projectC}`), 200);

    const blocked = await createProject(app.url, app.admin.token, groupH, 'blocked-scope');
    assertStatus(await api(app.url, 'POST', `/v1/projects/${blocked}/block`, { token: app.admin.token }), 200);
    assertStatus(await h(app.admin.token, `project_id=${blocked}&buckets=0&cursor=x`), 403, 'project_blocked');
    assertStatus(await h(outsider.token, `project_id=${blocked}`), 403, 'project_blocked');

    const p = `project_id=${projectA}`;
    const fields: [string, string, string][] = [
      ['level=fatal', 'level', 'invalid'],
      ['from=yesterday', 'from', 'invalid'],
      ['to=2025-02-30T00:00:00Z', 'to', 'invalid'],
      ['context.a..b=1', 'context.a..b', 'invalid'],
      ['q=%2A%2A', 'q', 'invalid'],
      ['cursor=abc', 'cursor', 'unknown'],
      ['limit=10', 'limit', 'unknown'],
      ['buckets=0', 'buckets', 'invalid'],
      ['buckets=501', 'buckets', 'invalid'],
      ['buckets=1.5', 'buckets', 'invalid'],
      ['buckets=-3', 'buckets', 'invalid'],
      ['buckets=', 'buckets', 'invalid'],
      ['buckets=ten', 'buckets', 'invalid'],
      ['from=2025-03-02T00:00:00Z&to=2025-03-01T00:00:00Z', 'to', 'invalid'],
      // `to` defaults to now: a `from` after it has no range.
      ['from=2030-01-01T00:00:00Z', 'from', 'invalid'],
      // At most 36,525 days.
      ['from=1900-01-01T00:00:00Z&to=2001-01-01T00:00:00Z', 'from', 'invalid'],
    ];
    for (const [qs, field, reason] of fields) {
      const res = await h(app.admin.token, `${p}&${qs}`);
      assertStatus(res, 400, 'invalid_request', qs);
      assert.deepEqual(res.body.details, { field, reason }, qs);
    }
    // Several problems: the filters first (level before from), then cursor, then buckets.
    assert.equal((await h(app.admin.token, `${p}&buckets=0&cursor=x&from=x&level=x`)).body.details.field, 'level');
    assert.equal((await h(app.admin.token, `${p}&buckets=0&cursor=x&from=x`)).body.details.field, 'from');
    assert.equal((await h(app.admin.token, `${p}&buckets=0&limit=2`)).body.details.field, 'limit');
    assert.equal((await h(app.admin.token, `${p}&buckets=0&from=2030-01-01T00:00:00Z`)).body.details.field, 'buckets');
    assertStatus(await h(app.admin.token, `${p}&buckets=1`), 200);
    assertStatus(await h(app.admin.token, `${p}&buckets=500`), 200);
  });

  it('reads through global, group and project grants exactly as GET /v1/logs does', async () => {
    const groupReader = await createActor(app.url, app.admin.token, `h-group-reader-${backend}`, {
      grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }],
    });
    const projectReader = await createActor(app.url, app.admin.token, `h-project-reader-${backend}`, {
      grants: [{ role: 'user', scope_type: 'project', scope_id: projectA }],
    });
    const globalReader = await createActor(app.url, app.admin.token, `h-global-reader-${backend}`, { grants: [{ role: 'user', scope_type: 'global' }] });
    assertStatus(await histogram(app.url, groupReader.token, `project_id=${projectA}`), 200);
    assertStatus(await histogram(app.url, groupReader.token, `group_id=${groupG}`), 200);
    assertStatus(await histogram(app.url, groupReader.token, `project_id=${projectC}`), 403, 'forbidden');
    assertStatus(await histogram(app.url, groupReader.token, `group_id=${groupH}`), 403, 'forbidden');
    assertStatus(await histogram(app.url, projectReader.token, `project_id=${projectA}`), 200);
    assertStatus(await histogram(app.url, projectReader.token, `project_id=${projectB}`), 403, 'forbidden');
    assertStatus(await histogram(app.url, projectReader.token, `group_id=${groupG}`), 403, 'forbidden');
    assertStatus(await histogram(app.url, globalReader.token, `group_id=${groupH}`), 200);
    assertStatus(await histogram(app.url, null as unknown as string, `project_id=${projectA}`), 401, 'unauthorized');
    assertStatus(await histogram(app.url, keyA, `project_id=${projectA}`), 401, 'unauthorized');
  });

  it('covers the last 24 hours by default, in 30-minute buckets aligned on the half hour, zeros included', async () => {
    const res = await histogram(app.url, app.admin.token, `project_id=${projectA}`);
    assertStatus(res, 200);
    const step = 1_800_000;
    const first = Math.floor((NOW - 86_400_000) / step) * step;
    const last = Math.floor(NOW / step) * step;
    assert.equal(res.body.bucket_seconds, 1800);
    assert.equal(res.body.from, iso(first));
    assert.equal(res.body.to, iso(last + step));
    assert.equal(res.body.buckets.length, (last - first) / step + 1);
    res.body.buckets.forEach((b: any, i: number) => {
      assert.equal(b.start, iso(first + i * step));
      assert.deepEqual(b.counts, zero());
    });
    // Only `to`: the day before it.
    const onlyTo = await histogram(app.url, app.admin.token, `project_id=${projectA}&to=2025-03-01T12:00:00Z&buckets=24`);
    assert.equal(onlyTo.body.from, '2025-02-28T12:00:00.000Z');
    assert.equal(onlyTo.body.to, '2025-03-01T14:00:00.000Z');
    assert.equal(onlyTo.body.bucket_seconds, 7200);
    assert.equal(onlyTo.body.buckets.length, 13);
  });

  it('picks the smallest nice step that fits, aligned down, and widens to whole days for long ranges', async () => {
    const grid = async (from: string, to: string, buckets?: number) => {
      const res = await histogram(
        app.url,
        app.admin.token,
        `project_id=${projectC}&from=${from}&to=${to}${buckets === undefined ? '' : `&buckets=${buckets}`}`,
      );
      assertStatus(res, 200, undefined, `${from} ${to} ${buckets}`);
      return { from: res.body.from, to: res.body.to, step: res.body.bucket_seconds, count: res.body.buckets.length };
    };
    // 60 minutes and 1 second from half past: 61 one-minute buckets, too many; two minutes fit.
    assert.deepEqual(await grid('2025-03-01T00:00:30Z', '2025-03-01T01:00:30Z'), {
      from: '2025-03-01T00:00:00.000Z',
      to: '2025-03-01T01:02:00.000Z',
      step: 120,
      count: 31,
    });
    assert.deepEqual(await grid('2025-03-01T00:00:00Z', '2025-03-01T00:59:59.999Z'), {
      from: '2025-03-01T00:00:00.000Z',
      to: '2025-03-01T01:00:00.000Z',
      step: 60,
      count: 60,
    });
    // One instant: one bucket of one second.
    assert.deepEqual(await grid('2025-03-01T00:00:07.250Z', '2025-03-01T00:00:07.250Z'), {
      from: '2025-03-01T00:00:07.000Z',
      to: '2025-03-01T00:00:08.000Z',
      step: 1,
      count: 1,
    });
    assert.deepEqual(await grid('2025-03-01T00:00:00Z', '2025-03-01T00:00:09Z', 2), {
      from: '2025-03-01T00:00:00.000Z',
      to: '2025-03-01T00:00:10.000Z',
      step: 5,
      count: 2,
    });
    assert.deepEqual(await grid('2025-03-01T00:00:00Z', '2025-03-01T23:59:59Z', 1), {
      from: '2025-03-01T00:00:00.000Z',
      to: '2025-03-02T00:00:00.000Z',
      step: 86400,
      count: 1,
    });
    // A year in 12 buckets: whole days (31 fit 366 days in 12; 30 would need 13).
    const year = await grid('2024-01-01T00:00:00Z', '2024-12-31T23:59:59Z', 12);
    assert.equal(year.step % 86400, 0);
    assert.ok(year.count <= 12);
    assert.ok(Date.parse(year.from) <= Date.parse('2024-01-01T00:00:00Z'));
    assert.ok(Date.parse(year.to) > Date.parse('2024-12-31T23:59:59Z'));
    const smaller = year.step - 86400;
    const first = Math.floor(Date.parse('2024-01-01T00:00:00Z') / (smaller * 1000));
    assert.ok(Math.floor(Date.parse('2024-12-31T23:59:59Z') / (smaller * 1000)) - first + 1 > 12, 'a day less would not fit');
  });

  it('answers every grid around the epoch and at the far ends of time at once, one bucket over 1970-01-01 with a 400 naming buckets, and stays up', async () => {
    // Once a hang: one bucket over a range holding the epoch searched for a whole-day step for ever.
    const hang = await histogram(app.url, app.admin.token, `project_id=${projectC}&to=1970-01-01T00:00:00.000Z&buckets=1`);
    assertStatus(hang, 400);
    assert.deepEqual(hang.body.details, { field: 'buckets', reason: 'invalid' });
    for (const [from, to, buckets] of [
      ['1969-12-31T00:00:00Z', '1970-01-01T00:00:00Z', 2],
      ['1969-12-31T00:00:00Z', '1969-12-31T23:59:59.999Z', 1],
      ['1900-01-01T00:00:00Z', '1969-12-31T23:59:59.999Z', 1],
      ['1970-01-01T00:00:00Z', '2069-01-01T00:00:00Z', 1],
      ['0001-01-01T00:00:00Z', '0050-01-01T00:00:00Z', 1],
      ['9950-01-01T00:00:00Z', '9999-01-01T00:00:00Z', 1],
      ['1920-01-01T00:00:00Z', '2019-01-01T00:00:00Z', 2],
      ['1920-01-01T00:00:00Z', '2019-01-01T00:00:00Z', 500],
    ] as const) {
      const res = await histogram(app.url, app.admin.token, `project_id=${projectC}&from=${from}&to=${to}&buckets=${buckets}`);
      assertStatus(res, 200, undefined, `${from} ${to} ${buckets}`);
      assert.ok(res.body.buckets.length <= buckets);
      assert.ok(Date.parse(res.body.from) <= Date.parse(from) && Date.parse(res.body.to) > Date.parse(to));
    }
    const health = await api(app.url, 'GET', '/healthz');
    assertStatus(health, 200);
  });

  it('counts an entry on a bucket edge in the bucket it starts, and only entries inside from..to (both inclusive)', async () => {
    const project = await createProject(app.url, app.admin.token, groupH, `edges-${backend}`);
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    const at = (timestamp: string, level: string) => ({ level, event: 'edge', timestamp });
    await ingestAll(app.url, key, [
      at('2025-04-01T09:59:59.999Z', 'info'),
      at('2025-04-01T10:00:00.000Z', 'info'),
      at('2025-04-01T10:00:59.999Z', 'error'),
      at('2025-04-01T11:01:00.000+01:00', 'debug'),
      at('2025-04-01T10:02:00.000Z', 'critical'),
      at('2025-04-01T10:02:00.001Z', 'critical'),
    ]);
    const res = await histogram(app.url, app.admin.token, `project_id=${project}&from=2025-04-01T10:00:00Z&to=2025-04-01T10:02:00Z&buckets=3`);
    assertStatus(res, 200);
    assert.deepEqual(res.body, {
      from: '2025-04-01T10:00:00.000Z',
      to: '2025-04-01T10:03:00.000Z',
      bucket_seconds: 60,
      buckets: [
        { start: '2025-04-01T10:00:00.000Z', counts: { ...zero(), info: 1, error: 1 } },
        { start: '2025-04-01T10:01:00.000Z', counts: { ...zero(), debug: 1 } },
        { start: '2025-04-01T10:02:00.000Z', counts: { ...zero(), critical: 1 } },
      ],
    });
    // A range that starts inside a bucket counts only from there.
    const inside = await histogram(app.url, app.admin.token, `project_id=${project}&from=2025-04-01T10:00:00.001Z&to=2025-04-01T10:02:00.001Z&buckets=3`);
    assert.deepEqual(
      inside.body.buckets.map((b: any) => b.counts),
      [
        { ...zero(), error: 1 },
        { ...zero(), debug: 1 },
        { ...zero(), critical: 2 },
      ],
    );
    // The same with a text filter (counted entry by entry).
    const text = await histogram(app.url, app.admin.token, `project_id=${project}&from=2025-04-01T10:00:00Z&to=2025-04-01T10:02:00Z&buckets=3&q=edge`);
    assert.deepEqual(text.body, res.body);
    const none = await histogram(app.url, app.admin.token, `project_id=${project}&from=2025-04-01T10:00:00Z&to=2025-04-01T10:02:00Z&buckets=3&q=nothing`);
    assert.deepEqual(
      none.body.buckets.map((b: any) => b.counts),
      [zero(), zero(), zero()],
    );
  });

  it('counts whole hours, whole minutes and the partial minutes at either end exactly: sub-minute buckets, many batches into one minute, a level filter', async () => {
    const project = await createProject(app.url, app.admin.token, groupH, `minutes-${backend}`);
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    const base = Date.UTC(2025, 4, 1, 10, 0);
    let s = 5;
    const rnd = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const entry = (ts: number, i: number) => ({ level: LEVELS[Math.floor(rnd() * LEVELS.length)]!, event: `minute ${i}`, timestamp: iso(ts) });
    // Twelve minutes at scattered milliseconds in one batch, then forty batches into minute 3 alone.
    const entries = Array.from({ length: 300 }, (_, i) => entry(base + Math.floor(rnd() * 12 * 60_000), i));
    await ingestAll(app.url, key, entries);
    for (let b = 0; b < 40; b++) {
      const batch = Array.from({ length: 3 }, (_, i) => entry(base + 3 * 60_000 + Math.floor(rnd() * 60_000), 1000 + 3 * b + i));
      await ingestAll(app.url, key, batch);
      entries.push(...batch);
    }
    const at = (minute: number, ms = 0) => iso(base + minute * 60_000 + ms);
    const cases: [from: string, to: string, buckets: number, level: (typeof LEVELS)[number] | null][] = [
      [at(0, 30_500), at(7, 15_250), 7, null], // partial minutes at both ends of every bucket
      [at(0), at(11, 59_999), 12, null], // whole minutes only
      [at(-1), at(13), 1, null], // one bucket
      [at(2, 10_000), at(4, 50_000), 60, null], // 5-second buckets
      [at(3), at(3, 59_999), 500, null], // 1-second buckets inside the minute of many batches
      [at(0, 1), at(12), 5, 'warning'],
      [at(0), at(11, 59_999), 500, 'error'],
      [at(3, 59_999), at(4), 3, null], // two instants across a minute's edge
      [at(-30), at(70), 2, null], // two-hour buckets: the whole hour from 10:00, minutes before it
      [at(-30, 500), at(70), 2, 'info'],
    ];
    let counted = 0;
    for (const [from, to, buckets, level] of cases) {
      const params: [string, string][] = [
        ['project_id', String(project)],
        ['from', from],
        ['to', to],
        ['buckets', String(buckets)],
        ...(level ? [['level', level] as [string, string]] : []),
      ];
      const res = await histogram(app.url, app.admin.token, params);
      assertStatus(res, 200);
      const stepMs = res.body.bucket_seconds * 1000;
      const origin = Date.parse(res.body.from);
      const expected = res.body.buckets.map(() => zero());
      const minLevel = level === null ? 0 : LEVELS.indexOf(level);
      for (const e of entries) {
        const ts = Date.parse(e.timestamp);
        if (ts < Date.parse(from) || ts > Date.parse(to) || LEVELS.indexOf(e.level) < minLevel) continue;
        expected[Math.floor((ts - origin) / stepMs)][e.level] += 1;
        counted += 1;
      }
      assert.deepEqual(
        res.body.buckets.map((b: any) => b.counts),
        expected,
        new URLSearchParams(params).toString(),
      );
    }
    assert.ok(counted > 500, `only ${counted} entries counted`);
  });

  it('answers zeros for every bucket of an empty range, of an empty project and of a group whose projects are all blocked', async () => {
    const empty = await histogram(app.url, app.admin.token, `project_id=${projectA}&from=2020-01-01T00:00:00Z&to=2020-01-01T00:59:59Z&buckets=4`);
    assert.equal(empty.body.bucket_seconds, 900);
    assert.deepEqual(
      empty.body.buckets.map((b: any) => b.counts),
      [zero(), zero(), zero(), zero()],
    );
    const lonely = await createGroup(app.url, app.admin.token, `lonely-${backend}`);
    const only = await createProject(app.url, app.admin.token, lonely, 'only');
    await ingestAll(app.url, (await createKey(app.url, app.admin.token, only)).secret, mixedEntries(10, 3));
    assertStatus(await api(app.url, 'POST', `/v1/projects/${only}/block`, { token: app.admin.token }), 200);
    const res = await histogram(app.url, app.admin.token, [['group_id', String(lonely)], ...WHOLE, ['buckets', '3']]);
    assertStatus(res, 200);
    assert.deepEqual(
      res.body.buckets.map((b: any) => b.counts),
      [zero(), zero(), zero()],
    );
    const noEntries = await histogram(app.url, app.admin.token, [['group_id', String(groupH)], ...WHOLE]);
    assert.ok(noEntries.body.buckets.every((b: any) => LEVELS.every((l) => b.counts[l] === 0)));
  });

  it('counts every filter alone and combined exactly as the reference matcher and GET /v1/logs do', async () => {
    let nonEmpty = 0;
    for (const params of fixtureQueries()) {
      const total = await checkAgainstReference(app.url, app.admin.token, projectA, fixture, params);
      if (total > 0) nonEmpty += 1;
    }
    assert.ok(nonEmpty > 40, `only ${nonEmpty} queries counted anything`);
  });

  it('counts exactly over a range too large to read entry by entry, where text filters go through the search index', async () => {
    const project = await createProject(app.url, app.admin.token, groupH, `large-${backend}`);
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    // More entries in the range than the list reads one by one (4,000), in two batches.
    const large = mixedEntries(4400, 23);
    await ingestAll(app.url, key, large.slice(0, 2200));
    await ingestAll(app.url, key, large.slice(2200));
    const range: [string, string][] = [
      ['from', '2025-02-28T23:00:00Z'],
      ['to', '2025-03-04T02:00:00Z'],
    ];
    const textual = fixtureQueries().filter((params) => params.some(([k]) => k !== 'level' && k !== 'from' && k !== 'to'));
    assert.ok(textual.length > 30);
    let nonEmpty = 0;
    for (const params of textual) {
      const ranged = params.some(([k]) => k === 'from' || k === 'to') ? params : [...params, ...range];
      if ((await checkAgainstReference(app.url, app.admin.token, project, large, ranged)) > 0) nonEmpty += 1;
    }
    assert.ok(nonEmpty > 25, `only ${nonEmpty} queries counted anything`);
  });

  it('counts a group over its unblocked projects only', async () => {
    const group = await histogram(app.url, app.admin.token, [['group_id', String(groupG)], ...WHOLE, ['buckets', '3']]);
    const a = await histogram(app.url, app.admin.token, [['project_id', String(projectA)], ...WHOLE, ['buckets', '3']]);
    const b = await histogram(app.url, app.admin.token, [['project_id', String(projectB)], ...WHOLE, ['buckets', '3']]);
    const sum = a.body.buckets.map((bucket: any, i: number) => Object.fromEntries(LEVELS.map((l) => [l, bucket.counts[l] + b.body.buckets[i].counts[l]])));
    assert.deepEqual(
      group.body.buckets.map((x: any) => x.counts),
      sum,
    );
    assert.ok(sum.some((c: any) => c.info > 0));
    await ingestAll(app.url, keyC, mixedEntries(5, 99));
  });
});

/**
 * The project's histogram for the filters (WHOLE when they give no range),
 * checked bucket by bucket against the reference matcher and in total
 * against `GET /v1/logs`; returns how many entries it counted.
 */
async function checkAgainstReference(
  url: string,
  token: string,
  projectId: number,
  entries: Record<string, unknown>[],
  params: [string, string][],
): Promise<number> {
  const ranged = params.some(([k]) => k === 'from' || k === 'to') ? params : [...params, ...WHOLE];
  const query: [string, string][] = [['project_id', String(projectId)], ...ranged, ['buckets', '7']];
  const label = new URLSearchParams(query).toString();
  const res = await histogram(url, token, query);
  assertStatus(res, 200, undefined, label);
  const stepMs = res.body.bucket_seconds * 1000;
  const origin = Date.parse(res.body.from);
  assert.equal(Date.parse(res.body.to), origin + stepMs * res.body.buckets.length);
  const expected = res.body.buckets.map(() => zero());
  // The range the service used: a bound left out defaults to now (to) or the day before `to` (from).
  const given = new Map(ranged.filter(([k]) => k === 'from' || k === 'to'));
  const to = given.has('to') ? Date.parse(given.get('to')!) : NOW;
  const from = given.has('from') ? Date.parse(given.get('from')!) : to - 86_400_000;
  const effective: [string, string][] = [...ranged.filter(([k]) => k !== 'from' && k !== 'to'), ['from', iso(from)], ['to', iso(to)]];
  for (const entry of entries) {
    if (!referenceMatches(entry, effective)) continue;
    const i = Math.floor((Date.parse(entry.timestamp as string) - origin) / stepMs);
    expected[i][entry.level as keyof ReturnType<typeof zero>] += 1;
  }
  assert.deepEqual(
    res.body.buckets.map((b: any) => b.counts),
    expected,
    label,
  );
  const total = expected.reduce((n: number, c: any) => n + LEVELS.reduce((m, l) => m + c[l], 0), 0);
  // The list with the same filters and range returns exactly as many entries.
  const listed = await queryAllPages(url, token, [['project_id', String(projectId)], ...effective], 200);
  assert.equal(listed.items.length, total, label);
  return total;
}
