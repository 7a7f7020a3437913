/**
 * Single sign-on against a real OpenID provider in-process (oidc-provider),
 * on both backends: the authorization-code flow end to end, the one-time
 * code's exchange, each refused or tampered flow (nothing created), account
 * linking and auto-creation, the admin claim, provider groups kept in step
 * with teams, and password sign-in switched off.
 *
 * Run as one file per backend (`sso-file.test.ts`, `sso-server.test.ts`),
 * so each has the per-file time limit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { api, freePort, startService, type RunningService } from '../support/service.js';
import { auditRows, claimsOf, createUser, openDatabase, refresh, signInAdmin, type SignedIn } from '../support/identity.js';
import {
  CookieJar,
  followUntil,
  startTestProvider,
  step,
  TEST_CLIENT_ID,
  TEST_CLIENT_SECRET,
  type TestAccount,
  type TestProvider,
} from '../support/oidc-provider.js';
import type { Storage } from '../../lib/storage/storage.js';

const CALLBACK = '/v1/auth/oidc/callback';

interface FlowEdits {
  /** Changes the provider's authorization address before the browser goes there. */
  authorization?: (url: URL) => void;
  /** Changes the callback address before the browser comes back with it. */
  callback?: (url: URL) => void;
}

/** What the console's sign-in callback page receives in its fragment. */
async function ssoFlow(
  svc: RunningService,
  edits: FlowEdits = {},
  jar = new CookieJar(),
): Promise<{ result: URLSearchParams; callbackUrl: string; jar: CookieJar }> {
  const start = await step(jar, `${svc.url}/v1/auth/oidc/start`);
  assert.equal(start.status, 302);
  assert.match(start.response.headers.get('set-cookie') ?? '', /HttpOnly; SameSite=Lax/);
  const authorization = new URL(start.location as string);
  edits.authorization?.(authorization);
  const callback = new URL(await followUntil(jar, authorization.href, (u) => u.startsWith(`${svc.url}${CALLBACK}`)));
  edits.callback?.(callback);
  const back = await step(jar, callback.href);
  assert.equal(back.status, 302);
  const location = new URL(back.location as string);
  assert.equal(location.pathname, '/console/');
  assert.equal(location.search, '', 'nothing of the sign-in travels in a query string');
  assert.match(location.hash, /^#\/sso\?/);
  return { result: new URLSearchParams(location.hash.slice('#/sso?'.length)), callbackUrl: callback.href, jar };
}

function exchange(svc: RunningService, code: string) {
  return api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'authorization_code', code } });
}

/** A full sign-in as the provider's `subject`: the tokens the console ends up with. */
async function signInWithSso(svc: RunningService, provider: TestProvider, subject: string, account: TestAccount = {}) {
  provider.signInAs(subject, account);
  const { result } = await ssoFlow(svc);
  const code = result.get('code');
  assert.ok(code, `signed in: ${result.toString()}`);
  const tokens = await exchange(svc, code);
  assert.equal(tokens.status, 200, tokens.text);
  return tokens.body as { access_token: string; refresh_token: string };
}

export function ssoSuite(only: BackendName): void {
  describeEachBackend(
    'single sign-on',
    (backend) => {
      let provider: TestProvider;
      /** Auto-create on, the admin claim, password sign-in off. */
      let open: RunningService;
      /** Auto-create off: only linked people get in. */
      let closed: RunningService;
      let openDb: Storage;
      let closedDb: Storage;
      let openAdmin: SignedIn;
      let closedAdmin: SignedIn;

      before(async () => {
        provider = await startTestProvider();
        const common = {
          oidcIssuer: provider.issuer,
          oidcClientId: TEST_CLIENT_ID,
          oidcClientSecret: TEST_CLIENT_SECRET,
          oidcScopes: ['openid', 'profile', 'email', 'groups'],
        };
        const openPort = await freePort();
        open = await startService(backend, {
          port: openPort,
          settings: {
            ...common,
            publicUrl: `http://127.0.0.1:${openPort}`,
            oidcAutoCreate: true,
            oidcAdminClaim: 'logkeep-admins',
            passwordLoginEnabled: false,
          },
        });
        const closedPort = await freePort();
        // The operator's own pair: the first team this fresh database makes is team 1.
        closed = await startService(backend, {
          port: closedPort,
          settings: { ...common, publicUrl: `http://127.0.0.1:${closedPort}`, oidcGroupTeams: ['idp-config=1'] },
        });
        await provider.registerClient([`${open.url}${CALLBACK}`, `${closed.url}${CALLBACK}`]);
        openDb = await openDatabase(open);
        closedDb = await openDatabase(closed);
        // The first administrator was made outside the API: it keeps its password with password sign-in off.
        openAdmin = await signInAdmin(open);
        closedAdmin = await signInAdmin(closed);
      });
      after(async () => {
        await openDb?.close();
        await closedDb?.close();
        await open?.stop({ dropDatabase: true });
        await closed?.stop({ dropDatabase: true });
        await provider?.stop();
      });

      it('answers how people may sign in', async () => {
        const methods = await api(open.url, 'GET', '/v1/auth/methods');
        assert.equal(methods.status, 200);
        assert.deepEqual(methods.body, { password: false, sso: { provider_name: 'single sign-on', start_url: `${open.url}/v1/auth/oidc/start` } });
      });

      it('signs a new person in end to end and gives the console the same tokens a password sign-in gives', async () => {
        const tokens = await signInWithSso(open, provider, 'alice-sub', { preferred_username: 'alice', name: 'Alice A.' });
        const claims = claimsOf(tokens.access_token);
        assert.equal(claims.preferred_username, 'alice');
        const user = await openDb.getUserById(Number(claims.sub));
        assert.equal(user?.displayName, 'Alice A.');
        assert.equal(user?.email, null);
        assert.equal(user?.mustChangePassword, false);
        // The access token works, and the refresh token rotates like any other.
        const me = await api(open.url, 'GET', '/v1/projects', { token: tokens.access_token });
        assert.equal(me.status, 200);
        const rotated = await refresh(open, tokens.refresh_token);
        assert.equal(rotated.status, 200);
        const [login] = (await auditRows(openDb, 'auth.login_succeeded')).filter((r) => r.targetId === user?.id);
        assert.equal(login?.metadata.method, 'oidc');
        const [linked] = (await auditRows(openDb, 'user.identity_linked')).filter((r) => r.targetId === user?.id);
        assert.equal(linked?.metadata.subject, 'alice-sub');
        // The same person again: the same account, no second one.
        const again = await signInWithSso(open, provider, 'alice-sub', { preferred_username: 'alice' });
        assert.equal(claimsOf(again.access_token).sub, claims.sub);
      });

      it('takes a one-time code once', async () => {
        provider.signInAs('once-sub', { preferred_username: 'once' });
        const { result } = await ssoFlow(open);
        const code = result.get('code') as string;
        assert.equal((await exchange(open, code)).status, 200);
        const second = await exchange(open, code);
        assert.equal(second.status, 400);
        assert.equal(second.body.error, 'invalid_grant');
        const unknown = await exchange(open, 'not-a-code');
        assert.equal(unknown.body.error, 'invalid_grant');
      });

      describe('refused and tampered flows create nothing', () => {
        async function refused(expected: string, run: () => Promise<URLSearchParams>) {
          const users = await openDb.countUsers();
          const codes = (await auditRows(openDb, 'auth.login_succeeded')).length;
          const result = await run();
          assert.equal(result.get('error'), expected, result.toString());
          assert.equal(result.get('code'), null);
          assert.equal(await openDb.countUsers(), users, 'no account was created');
          assert.equal((await auditRows(openDb, 'auth.login_succeeded')).length, codes);
        }

        it("refuses a callback whose state is not the flow's", async () => {
          provider.signInAs('mallory-1', { preferred_username: 'mallory1' });
          await refused('state_mismatch', async () => (await ssoFlow(open, { callback: (u) => u.searchParams.set('state', 'forged') })).result);
          assert.equal(await openDb.findIdentity(provider.issuer, 'mallory-1'), null);
        });

        it('refuses a callback without the flow cookie (another browser)', async () => {
          provider.signInAs('mallory-2', { preferred_username: 'mallory2' });
          await refused('flow_missing', async () => {
            const jar = new CookieJar();
            const start = await step(jar, `${open.url}/v1/auth/oidc/start`);
            const callback = await followUntil(jar, start.location as string, (u) => u.startsWith(`${open.url}${CALLBACK}`));
            const back = await step(new CookieJar(), callback);
            return new URLSearchParams(new URL(back.location as string).hash.slice('#/sso?'.length));
          });
        });

        it('refuses a replayed code', async () => {
          provider.signInAs('replay-sub', { preferred_username: 'replay' });
          const jar = new CookieJar();
          const start = await step(jar, `${open.url}/v1/auth/oidc/start`);
          const callback = await followUntil(jar, start.location as string, (u) => u.startsWith(`${open.url}${CALLBACK}`));
          // The attacker copied the flow cookie and the callback address.
          const stolen = jar.get(open.url, 'logkeep_oidc_flow') as string;
          const first = await step(jar, callback);
          assert.match(first.location as string, /code=/);
          assert.equal(jar.get(open.url, 'logkeep_oidc_flow'), undefined, 'the callback cleared the flow cookie');
          await refused('provider_error', async () => {
            const replay = new CookieJar();
            replay.set(open.url, 'logkeep_oidc_flow', stolen);
            const back = await step(replay, callback);
            return new URLSearchParams(new URL(back.location as string).hash.slice('#/sso?'.length));
          });
        });

        it('refuses an ID token with the wrong nonce', async () => {
          provider.signInAs('nonce-sub', { preferred_username: 'nonce' });
          await refused('token_rejected', async () => (await ssoFlow(open, { authorization: (u) => u.searchParams.set('nonce', 'not-the-flows') })).result);
        });

        it('refuses an expired ID token', async () => {
          provider.signInAs('expired-sub', { preferred_username: 'expired' });
          provider.tamperIdToken((c) => ({ ...c, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }));
          try {
            await refused('token_rejected', async () => (await ssoFlow(open)).result);
          } finally {
            provider.tamperIdToken(null);
          }
        });

        it('refuses an ID token signed by another key', async () => {
          provider.signInAs('forged-sub', { preferred_username: 'forged' });
          provider.tamperIdToken((c) => c, { foreignKey: true });
          try {
            await refused('token_rejected', async () => (await ssoFlow(open)).result);
          } finally {
            provider.tamperIdToken(null);
          }
        });

        it('refuses an ID token for another audience', async () => {
          provider.signInAs('aud-sub', { preferred_username: 'aud' });
          provider.tamperIdToken((c) => ({ ...c, aud: 'another-client' }));
          try {
            await refused('token_rejected', async () => (await ssoFlow(open)).result);
          } finally {
            provider.tamperIdToken(null);
          }
        });

        it('refuses an issuer mix-up (an answer naming another issuer)', async () => {
          provider.signInAs('mixup-sub', { preferred_username: 'mixup' });
          await refused('token_rejected', async () => (await ssoFlow(open, { callback: (u) => u.searchParams.set('iss', 'https://evil.example') })).result);
          provider.signInAs('mixup-sub-2', { preferred_username: 'mixup2' });
          provider.tamperIdToken((c) => ({ ...c, iss: 'https://evil.example' }));
          try {
            await refused('token_rejected', async () => (await ssoFlow(open)).result);
          } finally {
            provider.tamperIdToken(null);
          }
        });

        it("shows the provider's refusal in its own words", async () => {
          await refused('provider_error', async () => {
            const jar = new CookieJar();
            const start = await step(jar, `${open.url}/v1/auth/oidc/start`);
            const state = new URL(start.location as string).searchParams.get('state') as string;
            const back = await step(jar, `${open.url}${CALLBACK}?error=access_denied&state=${state}`);
            const result = new URLSearchParams(new URL(back.location as string).hash.slice('#/sso?'.length));
            assert.equal(result.get('provider_error'), 'access_denied');
            return result;
          });
        });
      });

      it('never matches an account by e-mail: the same address at the provider makes a new account (auto-create) or none', async () => {
        const local = await createUser(open, openAdmin.access_token, 'carol', { email: 'carol@example.com' });
        const tokens = await signInWithSso(open, provider, 'carol-at-idp', { preferred_username: 'carol', email: 'carol@example.com', email_verified: true });
        const sub = Number(claimsOf(tokens.access_token).sub);
        assert.notEqual(sub, local.id);
        assert.notEqual(claimsOf(tokens.access_token).preferred_username, 'carol');
        assert.deepEqual(await openDb.listIdentitiesOfUser(local.id), []);

        const closedLocal = await createUser(closed, closedAdmin.access_token, 'carol', { email: 'carol@example.com' });
        const users = await closedDb.countUsers();
        provider.signInAs('carol-at-idp', { preferred_username: 'carol', email: 'carol@example.com', email_verified: true });
        const { result } = await ssoFlow(closed);
        assert.equal(result.get('error'), 'not_linked');
        assert.equal(await closedDb.countUsers(), users);
        assert.deepEqual(await closedDb.listIdentitiesOfUser(closedLocal.id), []);
        const [failed] = await auditRows(closedDb, 'auth.login_failed');
        assert.equal(failed?.metadata.oidc_subject, 'carol-at-idp');
      });

      it('lets an admin link an existing account, then that person signs in to it', async () => {
        const dave = await createUser(closed, closedAdmin.access_token, 'dave');
        const linked = await api(closed.url, 'POST', `/v1/users/${dave.id}/identities`, { token: closedAdmin.access_token, json: { subject: 'dave-sub' } });
        assert.equal(linked.status, 201, linked.text);
        assert.equal(linked.body.issuer, provider.issuer);
        const listed = await api(closed.url, 'GET', `/v1/users/${dave.id}/identities`, { token: closedAdmin.access_token });
        assert.deepEqual(
          listed.body.items.map((i: any) => i.subject),
          ['dave-sub'],
        );
        const taken = await api(closed.url, 'POST', `/v1/users/${closedAdmin.id}/identities`, {
          token: closedAdmin.access_token,
          json: { subject: 'dave-sub' },
        });
        assert.equal(taken.status, 409);
        assert.equal(taken.body.error, 'identity_taken');
        const tokens = await signInWithSso(closed, provider, 'dave-sub', { preferred_username: 'someone-else' });
        assert.equal(Number(claimsOf(tokens.access_token).sub), dave.id);
        // Unlinked, the same person is refused again.
        const removed = await api(closed.url, 'DELETE', `/v1/users/${dave.id}/identities/${linked.body.id}`, { token: closedAdmin.access_token });
        assert.equal(removed.status, 204);
        provider.signInAs('dave-sub');
        assert.equal((await ssoFlow(closed)).result.get('error'), 'not_linked');
      });

      it("keeps the operator's configured pairs too, and never removes a group's last owner", async () => {
        const group = await api(closed.url, 'POST', '/v1/groups', { token: closedAdmin.access_token, json: { name: 'configured' } });
        const team = await api(closed.url, 'POST', `/v1/groups/${group.body.id}/teams`, { token: closedAdmin.access_token, json: { name: 'owners' } });
        assert.equal(team.body.id, 1, 'the configuration names team 1');
        const granted = await api(closed.url, 'POST', '/v1/role-assignments', {
          token: closedAdmin.access_token,
          json: { subject_type: 'team', subject_id: team.body.id, role: 'owner', scope_type: 'group', scope_id: group.body.id },
        });
        assert.equal(granted.status, 201, granted.text);
        const mapping = await api(closed.url, 'GET', '/v1/sso/group-teams', { token: closedAdmin.access_token });
        assert.deepEqual(mapping.body.configured, [{ provider_group: 'idp-config', team_id: 1 }]);

        const heidi = await createUser(closed, closedAdmin.access_token, 'heidi');
        await api(closed.url, 'POST', `/v1/users/${heidi.id}/identities`, { token: closedAdmin.access_token, json: { subject: 'heidi-sub' } });
        const first = await signInWithSso(closed, provider, 'heidi-sub', { groups: ['idp-config'] });
        assert.deepEqual(await closedDb.teamIdsOfUser(heidi.id), [team.body.id]);
        // The temporary password the administrator set is retired, and with it the forced change.
        assert.equal((await api(closed.url, 'GET', '/v1/projects', { token: first.access_token })).status, 200);
        const temporary = await api(closed.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'heidi', password: 'temporary-pass' } });
        assert.equal(temporary.status, 400);
        // Heidi is the group's only owner (through the team): leaving the provider group does not orphan the group.
        await signInWithSso(closed, provider, 'heidi-sub', { groups: [] });
        assert.deepEqual(await closedDb.teamIdsOfUser(heidi.id), [team.body.id]);
        assert.equal((await auditRows(closedDb, 'team.member_removed')).filter((r) => r.metadata.user_id === heidi.id).length, 0);
      });

      it('refuses a blocked account', async () => {
        const tokens = await signInWithSso(open, provider, 'blocked-sub', { preferred_username: 'blockme' });
        const id = Number(claimsOf(tokens.access_token).sub);
        assert.equal((await api(open.url, 'POST', `/v1/users/${id}/block`, { token: openAdmin.access_token })).status, 200);
        provider.signInAs('blocked-sub');
        assert.equal((await ssoFlow(open)).result.get('error'), 'account_disabled');
      });

      it('makes holders of the admin claim administrators, and no longer once they lose it', async () => {
        const boss = await signInWithSso(open, provider, 'boss-sub', { preferred_username: 'boss', groups: ['logkeep-admins'] });
        assert.ok(claimsOf(boss.access_token).roles.some((r: any) => r.role === 'admin' && r.scope_type === 'global'));
        assert.equal((await api(open.url, 'GET', '/v1/users', { token: boss.access_token })).status, 200);
        const demoted = await signInWithSso(open, provider, 'boss-sub', { preferred_username: 'boss', groups: [] });
        assert.equal(claimsOf(demoted.access_token).roles.length, 0);
        assert.equal((await api(open.url, 'GET', '/v1/users', { token: boss.access_token })).status, 401, 'the old access token died with the grant');
      });

      it('switches password sign-in off for everyone but accounts made outside the API', async () => {
        await createUser(open, openAdmin.access_token, 'erin');
        const refusedLogin = await api(open.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'erin', password: 'temporary-pass' } });
        assert.equal(refusedLogin.status, 400);
        assert.equal(refusedLogin.body.error, 'invalid_grant');
        assert.match(refusedLogin.body.error_description, /single sign-on/);
        const wrong = await api(open.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'erin', password: 'wrong-password' } });
        assert.doesNotMatch(wrong.body.error_description, /single sign-on/, 'a wrong password learns nothing');
        const [row] = await auditRows(openDb, 'auth.login_failed');
        assert.ok(row);
        const admin = await api(open.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: openAdmin.password } });
        assert.equal(admin.status, 200);
      });

      it('keeps mapped teams in step with provider groups, both ways, at sign-in and refresh', async () => {
        const group = await api(open.url, 'POST', '/v1/groups', { token: openAdmin.access_token, json: { name: 'engineering' } });
        const eng = await api(open.url, 'POST', `/v1/groups/${group.body.id}/teams`, { token: openAdmin.access_token, json: { name: 'eng' } });
        const ops = await api(open.url, 'POST', `/v1/groups/${group.body.id}/teams`, { token: openAdmin.access_token, json: { name: 'ops' } });
        const admins = await api(open.url, 'POST', `/v1/groups/${group.body.id}/teams`, { token: openAdmin.access_token, json: { name: 'root' } });
        await api(open.url, 'POST', '/v1/role-assignments', {
          token: openAdmin.access_token,
          json: { subject_type: 'team', subject_id: admins.body.id, role: 'admin', scope_type: 'global' },
        });
        const refusedMapping = await api(open.url, 'POST', '/v1/sso/group-teams', {
          token: openAdmin.access_token,
          json: { items: [{ provider_group: 'idp-root', team_id: admins.body.id }] },
        });
        assert.equal(refusedMapping.status, 400, 'a team with a global role is never fed by a provider group');
        const mapped = await api(open.url, 'POST', '/v1/sso/group-teams', {
          token: openAdmin.access_token,
          json: { items: [{ provider_group: 'idp-eng', team_id: eng.body.id }] },
        });
        assert.equal(mapped.status, 200, mapped.text);
        assert.deepEqual(mapped.body.items, [{ provider_group: 'idp-eng', team_id: eng.body.id }]);

        const first = await signInWithSso(open, provider, 'frank-sub', { preferred_username: 'frank', groups: ['idp-eng'] });
        const frank = Number(claimsOf(first.access_token).sub);
        assert.deepEqual(await openDb.teamIdsOfUser(frank), [eng.body.id]);
        const added = (await auditRows(openDb, 'team.member_added')).find((r) => r.metadata.user_id === frank);
        assert.equal(added?.metadata.source, 'oidc');
        assert.equal(added?.actorUserId, null);

        // The mapping changes: the next refresh applies the groups of the last sign-in to it, both ways.
        await api(open.url, 'POST', '/v1/sso/group-teams', {
          token: openAdmin.access_token,
          json: {
            items: [
              { provider_group: 'idp-eng', team_id: ops.body.id },
              { provider_group: 'idp-platform', team_id: eng.body.id },
            ],
          },
        });
        const refreshed = await refresh(open, first.refresh_token);
        assert.equal(refreshed.status, 200);
        assert.deepEqual(await openDb.teamIdsOfUser(frank), [ops.body.id]);
        assert.equal((await api(open.url, 'GET', '/v1/projects', { token: first.access_token })).status, 401, 'membership changes move token_version');

        // The team leaves the mapping: the membership the sync made goes with it at the next refresh.
        const second = await signInWithSso(open, provider, 'frank-sub', { preferred_username: 'frank', groups: ['idp-eng', 'idp-platform'] });
        assert.deepEqual(await openDb.teamIdsOfUser(frank), [eng.body.id, ops.body.id]);
        await api(open.url, 'POST', '/v1/sso/group-teams', {
          token: openAdmin.access_token,
          json: { items: [{ provider_group: 'idp-eng', team_id: ops.body.id }] },
        });
        assert.equal((await refresh(open, second.refresh_token)).status, 200);
        assert.deepEqual(await openDb.teamIdsOfUser(frank), [ops.body.id]);

        // Left the provider group: removed at the next sign-in.
        await signInWithSso(open, provider, 'frank-sub', { preferred_username: 'frank', groups: [] });
        assert.deepEqual(await openDb.teamIdsOfUser(frank), []);
        const removed = (await auditRows(openDb, 'team.member_removed')).find((r) => r.metadata.user_id === frank);
        assert.equal(removed?.metadata.source, 'oidc');
      });

      it('answers 404 on the sign-in routes when no provider is configured, and 403 to non-admins on the admin routes', async () => {
        const plain = await startService(backend);
        try {
          assert.equal((await step(new CookieJar(), `${plain.url}/v1/auth/oidc/start`)).status, 404);
          const methods = await api(plain.url, 'GET', '/v1/auth/methods');
          assert.deepEqual(methods.body, { password: true, sso: null });
        } finally {
          await plain.stop({ dropDatabase: true });
        }
        // A provider that cannot be reached: back to the console with the reason, nothing kept.
        const deadPort = await freePort();
        const unreachable = await startService(backend, {
          settings: { oidcIssuer: `http://127.0.0.1:${deadPort}`, oidcClientId: TEST_CLIENT_ID, publicUrl: 'http://127.0.0.1:1' },
        });
        try {
          const start = await step(new CookieJar(), `${unreachable.url}/v1/auth/oidc/start`);
          assert.equal(start.status, 302);
          assert.equal(start.location, 'http://127.0.0.1:1/console/#/sso?error=provider_unreachable');
          assert.equal(start.response.headers.get('set-cookie'), null);
        } finally {
          await unreachable.stop({ dropDatabase: true });
        }
        const someone = await signInWithSso(open, provider, 'nobody-sub', { preferred_username: 'nobody' });
        assert.equal((await api(open.url, 'GET', '/v1/sso/group-teams', { token: someone.access_token })).status, 403);
      });
    },
    [only],
  );
}
