/**
 * GET /v1/logs over HTTP on both backends: the check order and its 403
 * versus 404 rule, every filter alone and combined checked against a
 * reference matcher written from the filter rules, group queries leaving blocked
 * projects out, and cursor paging to the end while entries keep arriving.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject } from '../support/actors.js';
import { fixtureQueries, ingestAll, mixedEntries, queryAllPages, queryLogs, referenceMatches } from '../support/logs.js';

const FIXTURE_SIZE = 160;

describeEachBackend('GET /v1/logs', (backend) => {
  let groupG: number;
  let groupH: number;
  let projectA: number;
  let projectB: number;
  let projectC: number;
  let keyA: string;
  let keyB: string;
  let keyC: string;
  /** Fixture entries of project A and their ids, oldest first. */
  const fixture = mixedEntries(FIXTURE_SIZE, 7);
  let fixtureIds: number[] = [];

  const app = serviceWithAdmin(backend);
  before(async () => {
    groupG = await createGroup(app.url, app.admin.token, 'G');
    groupH = await createGroup(app.url, app.admin.token, 'H');
    projectA = await createProject(app.url, app.admin.token, groupG, 'A');
    projectB = await createProject(app.url, app.admin.token, groupG, 'B');
    projectC = await createProject(app.url, app.admin.token, groupH, 'C');
    keyA = (await createKey(app.url, app.admin.token, projectA)).secret;
    keyB = (await createKey(app.url, app.admin.token, projectB)).secret;
    keyC = (await createKey(app.url, app.admin.token, projectC)).secret;
    await ingestAll(app.url, keyA, fixture);
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(projectA)]], 200);
    fixtureIds = items.map((i) => i.id as number).sort((a, b) => a - b);
    assert.equal(fixtureIds.length, FIXTURE_SIZE);
  });

  it('checks both-or-neither scope first, then 404, 403 forbidden, 403 project_blocked, then the parameters', async () => {
    const outsider = await createActor(app.url, app.admin.token, `outsider-${backend}`, { grants: [{ role: 'user', scope_type: 'group', scope_id: groupH }] });
    const q = (token: string, qs: string) => queryLogs(app.url, token, qs);
    for (const qs of ['', 'level=info', 'project_id=1&group_id=1', 'project_id=999999&group_id=999999']) {
      const res = await q(outsider.token, qs);
      assertStatus(res, 400, 'invalid_request', qs);
      assert.deepEqual(res.body.details, { field: 'project_id', reason: 'invalid' });
    }
    assertStatus(await q(outsider.token, 'project_id=abc'), 400, 'invalid_request');
    assertStatus(await q(outsider.token, 'project_id=999999&level=bogus'), 404, 'not_found');
    assertStatus(await q(outsider.token, 'group_id=999999&level=bogus'), 404, 'not_found');
    // An existing scope without a grant is 403 here, not 404, and comes before parameter errors.
    assertStatus(await q(outsider.token, `project_id=${projectA}&level=bogus`), 403, 'forbidden');
    assertStatus(await q(outsider.token, `group_id=${groupG}&limit=0`), 403, 'forbidden');
    assertStatus(await q(outsider.token, `project_id=${projectC}`), 200);

    const blocked = await createProject(app.url, app.admin.token, groupG, 'blocked-scope');
    assertStatus(await api(app.url, 'POST', `/v1/projects/${blocked}/block`, { token: app.admin.token }), 200);
    assertStatus(await q(app.admin.token, `project_id=${blocked}&level=bogus&cursor=x`), 403, 'project_blocked');
    assertStatus(await q(outsider.token, `project_id=${blocked}`), 403, 'forbidden');

    const fields: [string, string][] = [
      ['level=fatal', 'level'],
      ['from=yesterday', 'from'],
      ['to=2025-02-30T00:00:00Z', 'to'],
      ['context.a..b=1', 'context.a..b'],
      ['context.=1', 'context.'],
      ['q=%2A%2A', 'q'],
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['cursor=forged', 'cursor'],
    ];
    for (const [qs, field] of fields) {
      const res = await q(app.admin.token, `project_id=${projectA}&${qs}`);
      assertStatus(res, 400, 'invalid_request', qs);
      assert.deepEqual(res.body.details, { field, reason: 'invalid' }, qs);
    }
    // Several problems: level is reported before from, from before the cursor.
    assert.equal((await q(app.admin.token, `project_id=${projectA}&cursor=x&from=x&level=x`)).body.details.field, 'level');
    assert.equal((await q(app.admin.token, `project_id=${projectA}&cursor=x&from=x`)).body.details.field, 'from');
    // A larger limit is served as 200, not refused.
    assert.equal((await q(app.admin.token, `project_id=${projectA}&limit=1000`)).body.items.length, Math.min(FIXTURE_SIZE, 200));
  });

  it('reads through global, group and project grants; a project grant does not open its group', async () => {
    const groupReader = await createActor(app.url, app.admin.token, `group-reader-${backend}`, {
      grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }],
    });
    const projectReader = await createActor(app.url, app.admin.token, `project-reader-${backend}`, {
      grants: [{ role: 'user', scope_type: 'project', scope_id: projectA }],
    });
    const globalReader = await createActor(app.url, app.admin.token, `global-reader-${backend}`, { grants: [{ role: 'user', scope_type: 'global' }] });
    assertStatus(await queryLogs(app.url, groupReader.token, `project_id=${projectA}`), 200);
    assertStatus(await queryLogs(app.url, groupReader.token, `group_id=${groupG}`), 200);
    assertStatus(await queryLogs(app.url, groupReader.token, `project_id=${projectC}`), 403, 'forbidden');
    assertStatus(await queryLogs(app.url, projectReader.token, `project_id=${projectA}`), 200);
    assertStatus(await queryLogs(app.url, projectReader.token, `project_id=${projectB}`), 403, 'forbidden');
    assertStatus(await queryLogs(app.url, projectReader.token, `group_id=${groupG}`), 403, 'forbidden');
    assertStatus(await queryLogs(app.url, globalReader.token, `group_id=${groupH}`), 200);
    assertStatus(await queryLogs(app.url, null as unknown as string, `project_id=${projectA}`), 401, 'unauthorized');
    assertStatus(await queryLogs(app.url, keyA, `project_id=${projectA}`), 401, 'unauthorized');
  });

  it('answers every filter alone and combined exactly as the reference matcher does, newest first, paged to the end', async () => {
    const queries = fixtureQueries();
    assert.ok(queries.length >= 50);
    let nonEmpty = 0;
    for (const params of queries) {
      const expected = fixture
        .map((entry, i) => [entry, fixtureIds[i]!] as const)
        .filter(([entry]) => referenceMatches(entry, params))
        .map(([, id]) => id)
        .reverse();
      const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(projectA)], ...params], 17);
      assert.deepEqual(
        items.map((i) => i.id),
        expected,
        `query ${new URLSearchParams(params).toString()}`,
      );
      if (expected.length > 0 && expected.length < FIXTURE_SIZE) nonEmpty += 1;
    }
    // The fixture really exercises the filters: most queries select a proper subset.
    assert.ok(nonEmpty >= 40, `only ${nonEmpty} selective queries`);
  });

  it('serves a group: its projects merged newest first, blocked projects left out silently', async () => {
    const bEntries = mixedEntries(30, 99);
    await ingestAll(app.url, keyB, bEntries);
    await ingestAll(app.url, keyC, mixedEntries(10, 5));
    const all = await queryAllPages(app.url, app.admin.token, [['group_id', String(groupG)]], 50);
    const ids = all.items.map((i) => i.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    assert.deepEqual(new Set(all.items.map((i) => i.project_id)), new Set([projectA, projectB]));
    assert.equal(all.items.length, FIXTURE_SIZE + 30);
    const filtered = await queryAllPages(
      app.url,
      app.admin.token,
      [
        ['group_id', String(groupG)],
        ['q', 'disk'],
        ['level', 'warning'],
      ],
      7,
    );
    const expectedCount =
      fixture.filter((e) =>
        referenceMatches(e, [
          ['q', 'disk'],
          ['level', 'warning'],
        ]),
      ).length +
      bEntries.filter((e) =>
        referenceMatches(e, [
          ['q', 'disk'],
          ['level', 'warning'],
        ]),
      ).length;
    assert.equal(filtered.items.length, expectedCount);

    assertStatus(await api(app.url, 'POST', `/v1/projects/${projectB}/block`, { token: app.admin.token }), 200);
    try {
      const withoutB = await queryAllPages(app.url, app.admin.token, [['group_id', String(groupG)]], 100);
      assert.deepEqual(new Set(withoutB.items.map((i) => i.project_id)), new Set([projectA]));
      assert.equal(withoutB.items.length, FIXTURE_SIZE);
      assertStatus(await queryLogs(app.url, app.admin.token, `project_id=${projectB}`), 403, 'project_blocked');
      // A group whose every project is blocked answers an empty page.
      const lonely = await createGroup(app.url, app.admin.token, 'all-blocked');
      const only = await createProject(app.url, app.admin.token, lonely, 'only');
      await ingestAll(app.url, (await createKey(app.url, app.admin.token, only)).secret, mixedEntries(3));
      assertStatus(await api(app.url, 'POST', `/v1/projects/${only}/block`, { token: app.admin.token }), 200);
      assert.deepEqual((await queryLogs(app.url, app.admin.token, `group_id=${lonely}`)).body, { items: [], next_cursor: null });
    } finally {
      assertStatus(await api(app.url, 'POST', `/v1/projects/${projectB}/unblock`, { token: app.admin.token }), 200);
    }
  });

  it('pages to the end while entries keep arriving: no duplicate, no gap, no shifted page', async () => {
    const project = await createProject(app.url, app.admin.token, groupH, 'paging');
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    await ingestAll(app.url, key, mixedEntries(95, 3));
    const snapshot = await queryAllPages(
      app.url,
      app.admin.token,
      [
        ['project_id', String(project)],
        ['level', 'info'],
      ],
      200,
    );
    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing) await ingestAll(app.url, key, mixedEntries(4, 1000 + n++));
    })();
    try {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await queryLogs(app.url, app.admin.token, [
          ['project_id', String(project)],
          ['level', 'info'],
          ['limit', '9'],
          ...(cursor ? ([['cursor', cursor]] as [string, string][]) : []),
        ]);
        assertStatus(res, 200);
        seen.push(...res.body.items.map((i: any) => i.id));
        cursor = res.body.next_cursor;
        await new Promise((r) => setTimeout(r, 5));
      } while (cursor !== null);
      assert.deepEqual(
        seen,
        [...new Set(seen)].sort((a, b) => b - a),
        'strictly newest first, no duplicate',
      );
      // Everything that existed before paging started is there; newer entries only at the front.
      const before = snapshot.items.map((i) => i.id);
      const firstOld = seen.indexOf(before[0]);
      assert.ok(firstOld >= 0);
      assert.deepEqual(seen.slice(firstOld), before);
    } finally {
      writing = false;
      await writer;
    }
  });

  it('reads an entry back the moment its 202 is sent, through every kind of filter', async () => {
    const project = await createProject(app.url, app.admin.token, groupH, 'read-your-writes');
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    for (let i = 0; i < 5; i++) {
      const marker = `marker${i}x${backend}`;
      await ingestAll(app.url, key, [{ level: 'error', event: `fresh ${marker}`, timestamp: '2025-06-01T00:00:00Z', request_id: marker, ctx: { m: marker } }]);
      for (const qs of [`q=${marker}`, `request_id=${marker}`, `context.ctx.m=${marker}`, `q=${marker.slice(0, 7)}*&level=error`]) {
        const res = await queryLogs(app.url, app.admin.token, `project_id=${project}&${qs}&limit=1`);
        assert.equal(res.body.items[0]?.event, `fresh ${marker}`, qs);
      }
    }
  });
});
