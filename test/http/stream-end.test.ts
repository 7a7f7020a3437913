/**
 * How live streams end, on both backends:
 * `token_revoked` at the next heartbeat when the user is blocked, loses the
 * grant (revocation, or a grant gone from storage while token_version stayed)
 * or changes password, and at once (access-key streams too) when the block,
 * deletion, role revocation or team removal comes through the API;
 * `project_blocked` at once when a streamed project is
 * blocked; `server_shutdown` when the service stops. Access-token expiry
 * alone does not end an open stream.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, TEST_JWT_SECRET } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject, createTeam, grant, type TestActor } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';
import { createAccessTokenService } from '../../lib/auth/access-tokens.js';
import { CONFIG_DEFAULTS } from '../../lib/core/config.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { silentLogger } from '../../lib/core/logger.js';

const HEARTBEAT_S = 1;

describeEachBackend('live stream: end reasons', (backend) => {
  describe('re-validation at every heartbeat', () => {
    let groupG: number;
    let projectA: number;
    let userCount = 0;
    const open: RawStream[] = [];
    /** The service's clock runs this far ahead of the real one. */
    let clockOffset = 0;

    const stream = async (token: string, query = `group_id=${groupG}`) => {
      const s = assertOpen(await openRawStream(app.url, `/v1/logs/stream?${query}`, { token }));
      open.push(s);
      await s.waitFor((x) => x.text.length > 0, 5_000, 'the opening comment');
      return s;
    };
    const viewer = () =>
      createActor(app.url, app.admin.token, `viewer${++userCount}-${backend}`, { grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }] });
    const assertEnds = async (s: RawStream, reason: string) => {
      await s.waitClosed(HEARTBEAT_S * 1000 * 4);
      assert.equal(s.endReason(), reason);
      assert.match(s.text, new RegExp(`event: end\\ndata: \\{"reason":"${reason}"\\}\\n\\n$`), 'the end frame is the last thing sent');
    };

    after(async () => {
      for (const s of open) s.close();
    });
    const app = serviceWithAdmin(backend, { settings: { sseHeartbeatIntervalSeconds: HEARTBEAT_S }, now: () => Date.now() + clockOffset });
    before(async () => {
      groupG = await createGroup(app.url, app.admin.token, 'G');
      projectA = await createProject(app.url, app.admin.token, groupG, 'A');
    });

    it('ends with token_revoked when the user is blocked', async () => {
      const user = await viewer();
      const s = await stream(user.token);
      assertStatus(await api(app.url, 'POST', `/v1/users/${user.id}/block`, { token: app.admin.token }), 200);
      await assertEnds(s, 'token_revoked');
    });

    it('ends with token_revoked when the grant is revoked', async () => {
      const user = await createActor(app.url, app.admin.token, `granted-${backend}`);
      const assignment = await grant(app.url, app.admin.token, { type: 'user', id: user.id }, { role: 'user', scope_type: 'project', scope_id: projectA });
      const fresh = await signInFresh(app.url, user);
      const s = await stream(fresh, `project_id=${projectA}`);
      assertStatus(await api(app.url, 'DELETE', `/v1/role-assignments/${assignment}`, { token: app.admin.token }), 204);
      await assertEnds(s, 'token_revoked');
    });

    it('ends with token_revoked when the grant is gone from storage even though token_version stayed', async () => {
      const user = await createActor(app.url, app.admin.token, `silent-${backend}`);
      const assignment = await grant(app.url, app.admin.token, { type: 'user', id: user.id }, { role: 'user', scope_type: 'group', scope_id: groupG });
      const fresh = await signInFresh(app.url, user);
      const s = await stream(fresh);
      // Straight in the database: no token_version bump, so only the fresh grant check can notice.
      const db = await openStorage(app.svc.database.config, { logger: silentLogger });
      try {
        await db.write((tx) => tx.deleteRoleAssignment(assignment));
      } finally {
        await db.close();
      }
      await assertEnds(s, 'token_revoked');
    });

    it('ends with token_revoked when the user changes password', async () => {
      const user = await viewer();
      const s = await stream(user.token);
      const changed = await api(app.url, 'POST', '/v1/auth/change-password', {
        token: user.token,
        json: { current_password: user.password, new_password: `${user.password}-next` },
      });
      assertStatus(changed, 200);
      await assertEnds(s, 'token_revoked');
    });

    it('does not end when only the access token expires', async () => {
      const user = await viewer();
      const claims = JSON.parse(Buffer.from(user.token.split('.')[1]!, 'base64url').toString('utf8'));
      // A genuine token of this user, issued long enough ago that it expires two seconds from now.
      const tokens = createAccessTokenService(TEST_JWT_SECRET, CONFIG_DEFAULTS.jwtIssuer);
      const subject = { id: user.id, username: user.username, tokenVersion: claims.tv as number };
      const serviceNow = () => Date.now() + clockOffset;
      const lifetime = (await tokens.issue(subject, claims.roles, serviceNow())).expiresIn;
      const shortLived = await tokens.issue(subject, claims.roles, serviceNow() - (lifetime - 2) * 1000);
      const s = await stream(shortLived.token);
      // The service's clock moves past the token's expiry; the other tokens have minutes left.
      clockOffset += 3_000;
      assertStatus(await api(app.url, 'GET', '/v1/groups', { token: shortLived.token }), 401, 'unauthorized', 'the token has expired');
      const pingsAtExpiry = s.comments.filter((c) => c === 'ping').length;
      await s.waitFor((x) => x.comments.filter((c) => c === 'ping').length > pingsAtExpiry, 10_000, 'a heartbeat after the expiry');
      assert.equal(s.closed, false, 'the stream is still open');
      const key = (await createKey(app.url, app.admin.token, projectA)).secret;
      await ingestAll(app.url, key, [{ level: 'info', event: 'after expiry', timestamp: '2025-01-01T00:00:00Z' }]);
      const [entry] = await s.waitForLogs(1);
      assert.equal(entry.event, 'after expiry');
    });
  });

  describe('immediate ends (heartbeat far away)', () => {
    let groupG: number;
    const open: RawStream[] = [];

    const stream = async (query: string) => {
      const s = assertOpen(await openRawStream(app.url, `/v1/logs/stream?${query}`, { token: app.admin.token }));
      open.push(s);
      await s.waitFor((x) => x.text.length > 0, 5_000, 'the opening comment');
      return s;
    };

    after(async () => {
      for (const s of open) s.close();
    });
    const app = serviceWithAdmin(backend, { settings: { sseHeartbeatIntervalSeconds: 3600 } });
    before(async () => {
      groupG = await createGroup(app.url, app.admin.token, 'G');
    });

    it('ends direct streams of a project with project_blocked as soon as it is blocked', async () => {
      const project = await createProject(app.url, app.admin.token, groupG, 'to-block');
      const other = await createProject(app.url, app.admin.token, groupG, 'stays');
      const direct = [await stream(`project_id=${project}`), await stream(`project_id=${project}&level=error&since_id=0`)];
      const unaffected = [await stream(`project_id=${other}`), await stream(`group_id=${groupG}`)];
      assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/block`, { token: app.admin.token }), 200);
      for (const s of direct) {
        await s.waitClosed(2_000);
        assert.equal(s.endReason(), 'project_blocked');
      }
      await new Promise((r) => setTimeout(r, 200));
      for (const s of unaffected) assert.equal(s.closed, false);
    });

    it('ends a person’s streams, opened with an access key or an access token, at once when they are blocked, deleted, lose the role or leave the team that held it', async () => {
      const project = await createProject(app.url, app.admin.token, groupG, 'rights');
      let people = 0;
      const viewer = async (options: Parameters<typeof createActor>[3]) => {
        const user = await createActor(app.url, app.admin.token, `now${++people}-${backend}`, options);
        const res = await api(app.url, 'POST', '/v1/access-keys', {
          token: user.token,
          json: { label: 'tail', expires_at: new Date(Date.now() + 86_400_000).toISOString(), scope: { permissions: ['tail'], project_ids: [project] } },
        });
        assertStatus(res, 201);
        // One stream with the person's access key, one with their access token.
        const streams = [];
        for (const token of [res.body.secret as string, user.token]) {
          const s = assertOpen(await openRawStream(app.url, `/v1/logs/stream?project_id=${project}`, { token }));
          open.push(s);
          await s.waitFor((x) => x.text.length > 0, 5_000, 'the opening comment');
          streams.push(s);
        }
        return { user, streams };
      };
      const onProject = { role: 'user', scope_type: 'project', scope_id: project } as const;
      const assertEndNow = async (streams: RawStream[], what: string) => {
        for (const s of streams) {
          await s.waitClosed(2_000);
          assert.equal(s.endReason(), 'token_revoked', what);
        }
      };
      const bystander = await viewer({ grants: [onProject] });

      const blocked = await viewer({ grants: [onProject] });
      assertStatus(await api(app.url, 'POST', `/v1/users/${blocked.user.id}/block`, { token: app.admin.token }), 200);
      await assertEndNow(blocked.streams, 'blocked');

      const deleted = await viewer({ grants: [onProject] });
      assertStatus(await api(app.url, 'DELETE', `/v1/users/${deleted.user.id}`, { token: app.admin.token }), 204);
      await assertEndNow(deleted.streams, 'deleted');

      const revoked = await viewer({ grants: [onProject] });
      const [role] = (await api(app.url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${revoked.user.id}`, { token: app.admin.token })).body.items;
      assertStatus(await api(app.url, 'DELETE', `/v1/role-assignments/${role.id}`, { token: app.admin.token }), 204);
      await assertEndNow(revoked.streams, 'role revoked');

      const team = await createTeam(app.url, app.admin.token, groupG, 'readers');
      await grant(app.url, app.admin.token, { type: 'team', id: team }, onProject);
      const member = await viewer({ teams: [team] });
      assertStatus(await api(app.url, 'DELETE', `/v1/teams/${team}/members/${member.user.id}`, { token: app.admin.token }), 204);
      await assertEndNow(member.streams, 'left the team');

      await new Promise((r) => setTimeout(r, 200));
      assert.equal(
        bystander.streams.every((s) => !s.closed),
        true,
        'the others’ streams stay open',
      );
    });

    it('ends every stream with server_shutdown on shutdown, and a stream opened afterwards at once', async () => {
      const project = await createProject(app.url, app.admin.token, groupG, 'shutdown');
      const streams = [await stream(`project_id=${project}`), await stream(`group_id=${groupG}&q=anything`)];
      app.svc.service.beginShutdown();
      for (const s of streams) {
        await s.waitClosed(2_000);
        assert.equal(s.endReason(), 'server_shutdown');
      }
      const late = await stream(`project_id=${project}`);
      await late.waitClosed(2_000);
      assert.equal(late.endReason(), 'server_shutdown');
    });
  });
});

/** Signs in again so the token carries the grants made after the actor was created. */
async function signInFresh(url: string, user: TestActor): Promise<string> {
  const res = await api(url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: user.username, password: user.password } });
  assertStatus(res, 200);
  return res.body.access_token;
}
