/**
 * Identical answers on both backends (issue 5): the same organisation and
 * the same entries go into a file service and a server service (same clock,
 * same secret, so same ids, timestamps and cursors), then the same queries —
 * every filter alone and combined, project and group scopes, paged to the
 * end — must produce byte-identical JSON pages, and the same histograms.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../support/postgres.js';
import { api, startService, type RunningService } from '../support/service.js';
import { createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { fixtureQueries, ingestAll, mixedEntries, queryAllPages } from '../support/logs.js';

interface Side {
  svc: RunningService;
  token: string;
  projects: number[];
  groups: number[];
}

describe('identical answers on both backends', async () => {
  const why = await postgresSkipReason();
  if (why) {
    it('needs PostgreSQL', { skip: why }, () => {});
    return;
  }

  const clock = Date.now();
  const sides: Side[] = [];

  before(async () => {
    for (const backend of ['file', 'server'] as const) {
      const svc = await startService(backend, { now: () => clock });
      const admin = await signInAdmin(svc.url);
      const g1 = await createGroup(svc.url, admin.token, 'one');
      const g2 = await createGroup(svc.url, admin.token, 'two');
      const projects = [
        await createProject(svc.url, admin.token, g1, 'a'),
        await createProject(svc.url, admin.token, g1, 'b'),
        await createProject(svc.url, admin.token, g2, 'c'),
      ];
      const keys = [];
      for (const p of projects) keys.push((await createKey(svc.url, admin.token, p)).secret);
      // Interleaved batches so a group's pages mix projects.
      for (let round = 0; round < 4; round++) {
        for (let p = 0; p < projects.length; p++) await ingestAll(svc.url, keys[p]!, mixedEntries(25 + p * 5, 100 * round + p + 1));
      }
      sides.push({ svc, token: admin.token, projects, groups: [g1, g2] });
    }
  });
  after(async () => {
    for (const side of sides) await side.svc.stop({ dropDatabase: true });
  });

  it('set up the same ids on both sides', () => {
    assert.deepEqual(sides[0]!.projects, sides[1]!.projects);
    assert.deepEqual(sides[0]!.groups, sides[1]!.groups);
  });

  it('answers at least 50 queries (every filter, combinations, both scopes, paged to the end) with identical JSON', async () => {
    const [file, server] = sides as [Side, Side];
    const scopes: [string, string][] = [
      ['project_id', String(file.projects[0])],
      ['group_id', String(file.groups[0])],
    ];
    let compared = 0;
    let items = 0;
    for (const scope of scopes) {
      for (const params of fixtureQueries()) {
        const query: [string, string][] = [scope, ...params];
        const left = await queryAllPages(file.svc.url, file.token, query, 13);
        const right = await queryAllPages(server.svc.url, server.token, query, 13);
        assert.deepEqual(right.pages, left.pages, `different answers for ${new URLSearchParams(query).toString()}`);
        compared += 1;
        items += left.items.length;
      }
    }
    assert.ok(compared >= 100);
    assert.ok(items > 1000, `the queries returned only ${items} entries in all`);
  });

  it('answers the histogram of every filter, both scopes and several bucket counts with identical JSON', async () => {
    const [file, server] = sides as [Side, Side];
    // On whole minutes, and inside minutes (the partial minutes at either end are counted from the entries, the rest from the rollup).
    const ranges: [string, string][][] = [
      [
        ['from', '2025-02-28T23:59:00Z'],
        ['to', '2025-03-01T01:10:00Z'],
      ],
      [
        ['from', '2025-02-28T23:59:07.250Z'],
        ['to', '2025-03-01T01:09:41.003Z'],
      ],
    ];
    let counted = 0;
    for (const scope of [
      ['project_id', String(file.projects[0])],
      ['group_id', String(file.groups[0])],
    ] as [string, string][]) {
      for (const [n, params] of fixtureQueries().entries()) {
        const ranged = params.some(([k]) => k === 'from' || k === 'to') ? params : [...params, ...ranges[Math.floor(n / 4) % 2]!];
        const query = new URLSearchParams([scope, ...ranged, ['buckets', String([1, 7, 60, 500][n % 4])]]).toString();
        const left = await api(file.svc.url, 'GET', `/v1/logs/histogram?${query}`, { token: file.token });
        const right = await api(server.svc.url, 'GET', `/v1/logs/histogram?${query}`, { token: server.token });
        assert.equal(left.status, 200, `${query}: ${left.text}`);
        assert.equal(right.text, left.text, `different histograms for ${query}`);
        counted += (left.body.buckets as { counts: Record<string, number> }[]).reduce((sum, b) => sum + Object.values(b.counts).reduce((a, c) => a + c, 0), 0);
      }
    }
    assert.ok(counted > 1000, `the histograms counted only ${counted} entries in all`);
  });
});
