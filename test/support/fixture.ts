/**
 * The setup most HTTP suites share, written once: called inside a
 * `describeEachBackend` body, it starts a service on a throwaway database
 * before the first test, signs the bootstrap admin in, optionally creates a
 * group, and after the last test stops the service and drops the database.
 *
 *   const app = serviceWithAdmin(backend, { group: 'ingest', settings: { … } });
 *   it('…', async () => {
 *     const { project, secret } = await app.newProject('p');
 *     await api(app.url, 'GET', '/v1/logs', { token: app.admin.token });
 *   });
 *
 * The fields are filled in by the `before` hook it registers, so read them
 * inside hooks and tests, not in the describe body itself. Hooks run in the
 * order they are registered: a suite's own `before` placed after this call
 * sees the fields, and an `after` that must run while the service is still up
 * (closing streams or a second connection) is registered before this call.
 */
import { after, before } from 'node:test';
import type { BackendName } from './backends.js';
import { startService, type RunningService, type StartOptions } from './service.js';
import { createGroup, createKey, createProject, signInAdmin, type TestActor } from './actors.js';

export interface ServiceWithAdminOptions extends StartOptions {
  /** The name of a group the admin creates; its id is then `groupId`. */
  group?: string;
}

/** A project created by the admin in the fixture's group, with one secret key. */
export interface NewProject {
  project: number;
  secret: string;
  keyId: number;
}

export interface ServiceWithAdmin {
  readonly svc: RunningService;
  /** The service's base URL (`svc.url`). */
  readonly url: string;
  /** The bootstrap admin, past its forced password change, with a fresh token. */
  readonly admin: TestActor;
  /** The group named by the `group` option (an error without it). */
  readonly groupId: number;
  /** Creates a project in `groupId` (retention 30 days unless `extra` says otherwise) and a secret key for it. */
  newProject(name: string, extra?: Parameters<typeof createProject>[4]): Promise<NewProject>;
}

export function serviceWithAdmin(backend: BackendName, options: ServiceWithAdminOptions = {}): ServiceWithAdmin {
  const { group, ...startOptions } = options;
  let svc: RunningService | undefined;
  let admin: TestActor | undefined;
  let groupId: number | undefined;
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`serviceWithAdmin: ${what} is read before the suite's before hook ran`);
    return value;
  };
  before(async () => {
    svc = await startService(backend, startOptions);
    admin = await signInAdmin(svc.url);
    if (group !== undefined) groupId = await createGroup(svc.url, admin.token, group);
  });
  after(async () => {
    await svc?.stop({ dropDatabase: true });
  });
  const fixture: ServiceWithAdmin = {
    get svc() {
      return ready(svc, 'svc');
    },
    get url() {
      return ready(svc, 'svc').url;
    },
    get admin() {
      return ready(admin, 'admin');
    },
    get groupId() {
      if (group === undefined) throw new Error('serviceWithAdmin: no group was asked for (pass the `group` option)');
      return ready(groupId, 'groupId');
    },
    async newProject(name, extra = {}) {
      const url = ready(svc, 'svc').url;
      const token = ready(admin, 'admin').token;
      const project = await createProject(url, token, fixture.groupId, name, extra);
      const key = await createKey(url, token, project);
      return { project, secret: key.secret, keyId: key.id };
    },
  };
  return fixture;
}
