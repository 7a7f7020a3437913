/**
 * Visibility with many grants, on both backends: a user holding 5,000
 * grants (direct and through a team; group and project scope) lists exactly
 * the groups and projects it may see. The rows are inserted through the
 * storage verbs (the HTTP path would take minutes); the listing goes
 * through HTTP, where visibility is one bound parameter of one query per
 * page.
 *
 * The access token carries every grant (roles come from the claims),
 * so 5,000 grants make a ~330 KB bearer token, far over Node's default
 * 16 KiB header limit and logkeep's default 64 KiB: a deployment with such
 * users raises `httpMaxHeaderBytes`, as this one does.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { createActor, signInAdmin, signIn, type TestActor } from '../support/actors.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { silentLogger } from '../../lib/core/logger.js';
import type { NewRoleAssignment } from '../../lib/storage/types-org.js';

const GROUPS = 5000;
const TEAM_GROUP_GRANTS = 1000;

describeEachBackend('visibility with 5,000 grants', (backend) => {
  let svc: RunningService;
  let defaultHeaders: Server;
  let defaultUrl: string;
  let viewer: TestActor;
  const expectedGroups = new Set<number>();
  const expectedProjects = new Set<number>();

  before(async () => {
    svc = await startService(backend, { settings: { httpMaxHeaderBytes: 1024 * 1024 } });
    const admin = await signInAdmin(svc.url);
    const shell = await createActor(svc.url, admin.token, 'many-grants');
    const storage = await openStorage(svc.database.config, { logger: silentLogger });
    try {
      await storage.write(async (tx) => {
        const now = Date.now();
        const team = await tx.insertTeam((await tx.insertGroup('team-home', now)).id, 'many', now);
        await tx.addTeamMember(team.id, shell.id);
        const grants: NewRoleAssignment[] = [];
        const add = (subjectType: 'user' | 'team', subjectId: number, scopeType: 'group' | 'project', scopeId: number) =>
          grants.push({ subjectType, subjectId, role: 'user', scopeType, scopeId, createdAt: now });
        let oddProjectsGranted = 0;
        let redundantProjectGrants = 0;
        for (let i = 0; i < GROUPS; i++) {
          const group = await tx.insertGroup(`scale-${i}`, now);
          const project = await tx.insertProject({
            groupId: group.id,
            name: `scale-p-${i}`,
            retentionDays: 1,
            maxEntries: null,
            maxBytes: null,
            createdAt: now,
          });
          if (i % 2 === 0) {
            // 2,500 group grants, 1,000 of them held through the team.
            add(expectedGroups.size < TEAM_GROUP_GRANTS ? 'team' : 'user', expectedGroups.size < TEAM_GROUP_GRANTS ? team.id : shell.id, 'group', group.id);
            expectedGroups.add(group.id);
            expectedProjects.add(project.id);
            if (redundantProjectGrants < 1000) {
              add('user', shell.id, 'project', project.id);
              redundantProjectGrants++;
            }
          } else if (oddProjectsGranted < 1500) {
            // 1,500 project grants that reveal the project but never its group.
            add('user', shell.id, 'project', project.id);
            expectedProjects.add(project.id);
            oddProjectsGranted++;
          }
        }
        assert.equal(grants.length, 5000);
        for (const row of grants) await tx.insertRoleAssignment(row);
      });
      assert.equal((await storage.effectiveGrants(shell.id)).length, 5000);
    } finally {
      await storage.close();
    }
    viewer = await signIn(svc.url, shell.username, shell.password);
    // The same handler behind Node's default 16 KiB header limit, as a careless embedder would mount it.
    defaultHeaders = createServer(svc.service.handler);
    await new Promise<void>((resolve) => defaultHeaders.listen(0, '127.0.0.1', resolve));
    defaultUrl = `http://127.0.0.1:${(defaultHeaders.address() as AddressInfo).port}`;
  });
  after(async () => {
    defaultHeaders?.closeAllConnections();
    await new Promise<void>((resolve) => (defaultHeaders ? defaultHeaders.close(() => resolve()) : resolve()));
    await svc.stop({ dropDatabase: true });
  });

  async function listAll(path: string): Promise<{ ids: number[]; pages: number; ms: number }> {
    const ids: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    const started = performance.now();
    do {
      const res: any = await api(svc.url, 'GET', `${path}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: viewer.token });
      assert.equal(res.status, 200, res.text.slice(0, 200));
      // Every page is full until the last: visibility is inside the query, not a filter after it.
      if (res.body.next_cursor) assert.equal(res.body.items.length, 200);
      ids.push(...res.body.items.map((x: { id: number }) => x.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    return { ids, pages, ms: performance.now() - started };
  }

  it('the access token carries all 5,000 grants: too large for default header limits, fine with a raised httpMaxHeaderBytes', async () => {
    assert.ok(viewer.token.length > 16 * 1024, `token is ${viewer.token.length} bytes`);
    const refused = await fetch(`${defaultUrl}/v1/groups`, { headers: { authorization: `Bearer ${viewer.token}` } });
    assert.equal(refused.status, 431);
  });

  it('GET /v1/groups lists exactly the 2,500 groups granted (directly or through the team), none revealed by project grants', async (t) => {
    const { ids, pages, ms } = await listAll('/v1/groups');
    t.diagnostic(`${ids.length} groups in ${pages} pages, ${ms.toFixed(0)} ms`);
    assert.equal(ids.length, expectedGroups.size);
    assert.deepEqual(new Set(ids), expectedGroups);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
  });

  it('GET /v1/projects lists exactly the 4,000 projects of visible groups plus directly granted ones', async (t) => {
    const { ids, pages, ms } = await listAll('/v1/projects');
    t.diagnostic(`${ids.length} projects in ${pages} pages, ${ms.toFixed(0)} ms`);
    assert.equal(ids.length, expectedProjects.size);
    assert.deepEqual(new Set(ids), expectedProjects);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
  });
});
