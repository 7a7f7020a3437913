/**
 * A property-based fuzz over every row of the route table, on both backends
 * over a real socket: hostile JSON, forms, query strings, headers and path
 * ids from anonymous callers, the admin, a plain user and a project key.
 * Whatever arrives, the service answers below 500, with an error code on
 * every 4xx, and never with a stack trace, a file path or a database
 * message. Each ingestion route also gets hostile bodies
 * (support/fuzz-ingest.ts): what one stores, the answer it gets and how
 * long it holds the event loop stay within their documented bounds. The table is read from `allRoutes()`, so a new route is fuzzed
 * without touching this file.
 *
 * Run as one file per backend (`fuzz-routes-file.test.ts`,
 * `fuzz-routes-server.test.ts`), so each has the per-file time limit.
 *
 * FUZZ_RUNS (requests per route, default 100) and FUZZ_SEED replay or deepen
 * a run; fast-check prints the seed and the shrunk request on failure.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { allRoutes } from '../../lib/http/routes.js';
import type { Route } from '../../lib/http/route.js';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import {
  ADMIN_FINAL_PASSWORD,
  createActor,
  createGroup,
  createKey,
  createProject,
  createTeam,
  addMember,
  grant,
  signIn,
  signInAdmin,
  type TestActor,
} from '../support/actors.js';
import { wireResponseProblem } from '../support/openapi.js';
import { MAX_INGESTION_ANSWER_BYTES } from '../../lib/ingest/ingest-request.js';
import { storedBytesBudget } from '../../lib/ingest/otlp/otlp-request.js';
import { PLAIN_STORED_BYTES_PER_BODY_BYTE } from '../../lib/ingest/plain-body.js';
import { ingestBodyFor, type IngestFuzzBody } from '../support/fuzz-ingest.js';
import {
  ALLOWED_ORIGIN,
  describeRequest,
  problemWith,
  requestFor,
  send,
  strayRequest,
  type Credentials,
  type FuzzRequest,
  type FuzzWorld,
} from '../support/fuzz.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
/** Hostile bodies per ingestion route: each is up to 1 MiB decoded, so fewer than the other routes' requests. */
const INGEST_RUNS = Math.max(1, Math.round(RUNS / 8));
/** Far above what preparing in slices costs (tens of ms), far below the seconds a body used to hold the loop. */
const MAX_LOOP_DELAY_MS = 1000;
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

export function fuzzRoutesSuite(only: BackendName): void {
  describeEachBackend(
    'fuzz over every route',
    (backend) => {
      let svc: RunningService;
      let agent: Agent;
      let world: FuzzWorld;
      let user: TestActor;
      let keySecret: string;
      let keyProjectId: number;

      before(async () => {
        // One trusted proxy hop and one allowed origin: X-Forwarded-For and CORS are read, so they are fuzzed too.
        svc = await startService(backend, { settings: { trustedProxyHops: 1, corsAllowedOrigins: [ALLOWED_ORIGIN] } });
        agent = new Agent({ keepAlive: true, maxSockets: 4 });
        const admin = await signInAdmin(svc.url);
        const groupA = await createGroup(svc.url, admin.token, 'fuzz group a');
        const groupB = await createGroup(svc.url, admin.token, 'fuzz group b');
        const keyProject = await createProject(svc.url, admin.token, groupA, 'fuzz project keyed');
        const otherProject = await createProject(svc.url, admin.token, groupA, 'fuzz project other');
        const team = await createTeam(svc.url, admin.token, groupA, 'fuzz team');
        const key = await createKey(svc.url, admin.token, keyProject, 'fuzz key');
        const otherKey = await createKey(svc.url, admin.token, otherProject, 'victim key');
        user = await createActor(svc.url, admin.token, 'fuzz-user', { grants: [{ role: 'user', scope_type: 'project', scope_id: keyProject }] });
        keySecret = key.secret;
        keyProjectId = keyProject;

        // A victim: a user with a team and a grant the fuzz may block, delete or revoke.
        const victim = await api(svc.url, 'POST', '/v1/users', { token: admin.token, json: { username: 'fuzz-victim', password: 'victim-password-1' } });
        assert.equal(victim.status, 201, victim.text);
        await addMember(svc.url, admin.token, team, victim.body.id);
        const victimGrant = await grant(svc.url, admin.token, { type: 'user', id: victim.body.id }, { role: 'owner', scope_type: 'group', scope_id: groupB });

        const entries = [1, 2, 3].map((i) => ({
          level: 'info',
          event: `seed entry ${i}`,
          timestamp: '2024-05-01T12:00:00Z',
          context: { a: 'b c', user: { id: i } },
        }));
        const ingested = await api(svc.url, 'POST', '/v1/logs', { token: key.secret, json: entries });
        assert.equal(ingested.status, 202, ingested.text);

        const fresh = await signIn(svc.url, 'admin', ADMIN_FINAL_PASSWORD);
        const callerGrants: string[] = [];
        for (const id of [admin.id, user.id]) {
          const res = await api(svc.url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${id}`, { token: fresh.token });
          assert.equal(res.status, 200, res.text);
          callerGrants.push(...res.body.items.map((row: { id: number }) => String(row.id)));
        }
        const cursors: string[] = [];
        for (const path of ['/v1/groups?limit=1', '/v1/users?limit=1', `/v1/logs?project_id=${keyProject}&limit=1`]) {
          const res = await api(svc.url, 'GET', path, { token: fresh.token });
          if (res.status === 200 && typeof res.body?.next_cursor === 'string') cursors.push(res.body.next_cursor);
        }

        const callerUsers = [String(admin.id), String(user.id)];
        world = {
          ids: [...new Set([admin.id, user.id, victim.body.id, groupA, groupB, keyProject, otherProject, team, key.id, otherKey.id, victimGrant])],
          usernames: ['admin', 'fuzz-user', 'fuzz-victim'],
          cursors,
          // The fuzz may do anything to the victims, but must not lock its own callers out.
          spared(route: Route, param: string) {
            if (route.method === 'GET') return [];
            if (route.path.startsWith('/v1/users/') || param === 'userId') return callerUsers;
            if (route.path.startsWith('/v1/role-assignments/')) return callerGrants;
            if (route.path.startsWith('/v1/projects/:id') && param === 'id') return [String(keyProject)];
            if (param === 'keyId') return [String(key.id)];
            return [];
          },
        };
      });

      after(async () => {
        agent.destroy();
        await svc.stop({ dropDatabase: true });
      });

      /** Fresh tokens: a grant the fuzz made may have moved a caller's token_version. */
      async function credentials(): Promise<Credentials> {
        const admin = await signIn(svc.url, 'admin', ADMIN_FINAL_PASSWORD);
        const plain = await signIn(svc.url, user.username, user.password);
        return { admin: admin.token, user: plain.token, key: keySecret };
      }

      async function fuzz(requests: () => fc.Arbitrary<FuzzRequest>): Promise<void> {
        let creds = await credentials();
        await fc.assert(
          fc.asyncProperty(requests(), async (r) => {
            let res = await send(svc.url, agent, r, creds);
            // An earlier grant or team join may have retired a real caller's token: sign in again and resend.
            if (res.status === 401 && 'caller' in r.auth && r.auth.caller !== 'anonymous' && r.auth.caller !== 'key') {
              creds = await credentials();
              res = await send(svc.url, agent, r, creds);
            }
            const problem = problemWith(r.method, res) ?? wireResponseProblem(r.method, r.path, res);
            assert.equal(problem, null, `${describeRequest(r)}\n  → ${problem}`);
          }),
          { numRuns: RUNS, includeErrorInReport: true, ...(SEED === undefined ? {} : { seed: SEED }) },
        );
      }

      for (const route of allRoutes()) {
        it(`${route.method} ${route.path}: hostile requests never answer 5xx or show internals`, () => fuzz(() => requestFor(route, world)));
      }

      /** The bytes of entries the key's project holds now (what quotas count). */
      async function storedBytes(): Promise<number> {
        const res = await api(svc.url, 'GET', `/v1/projects/${keyProjectId}`, { token: (await credentials()).admin });
        assert.equal(res.status, 200, res.text);
        return res.body.total_bytes;
      }

      /** Sends one body with the service's event-loop delay measured (the service runs in this process). */
      async function sendMeasured(b: IngestFuzzBody): Promise<{ status: number; text: string; maxDelayMs: number }> {
        const headers: Record<string, string> = { 'content-type': b.contentType };
        if (b.gzip) headers['content-encoding'] = 'gzip';
        const delay = monitorEventLoopDelay({ resolution: 10 });
        delay.enable();
        try {
          const res = await api(svc.url, 'POST', b.path, { token: keySecret, raw: b.gzip ? gzipSync(b.decoded) : b.decoded, headers });
          return { status: res.status, text: res.text, maxDelayMs: delay.max / 1e6 };
        } finally {
          delay.disable();
        }
      }

      for (const route of allRoutes().filter((r) => r.bodyLimit === 'ingest')) {
        it(`${route.method} ${route.path}: hostile bodies stay within their bounds of stored bytes, answer size and event-loop delay`, async () => {
          await fc.assert(
            fc.asyncProperty(ingestBodyFor(route.path), async (b) => {
              const before = await storedBytes();
              const res = await sendMeasured(b);
              const stored = (await storedBytes()) - before;
              const bound = route.path === '/v1/logs' ? PLAIN_STORED_BYTES_PER_BODY_BYTE * b.decoded.length : storedBytesBudget(b.decoded.length);
              const context = `${b.what} (${b.decoded.length} bytes decoded) → ${res.status}`;
              assert.ok([200, 202, 400].includes(res.status), `${context}: ${res.text.slice(0, 300)}`);
              assert.ok(Buffer.byteLength(res.text) <= MAX_INGESTION_ANSWER_BYTES, `${context}: a ${Buffer.byteLength(res.text)}-byte answer`);
              assert.ok(stored <= bound, `${context}: stored ${stored} bytes, over the bound of ${bound}`);
              assert.ok(res.maxDelayMs < MAX_LOOP_DELAY_MS, `${context}: the event loop was held ${Math.round(res.maxDelayMs)} ms`);
            }),
            { numRuns: INGEST_RUNS, includeErrorInReport: true, ...(SEED === undefined ? {} : { seed: SEED }) },
          );
        });
      }

      it('paths and methods outside the table never answer 5xx or show internals', () => fuzz(() => strayRequest(allRoutes(), world)));
    },
    [only],
  );
}
