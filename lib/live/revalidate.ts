/**
 * Re-validation of open streams, run at every heartbeat: the caller's
 * token_version unchanged, the user active and not deleted, a grant (read
 * fresh from storage: the token's `roles` are only a snapshot) still
 * covering the scope, and a direct project not blocked. Access-token expiry
 * alone does not end a stream; a stream opened with an access key ends
 * when the key is revoked or expires (the key's scope cannot change, so it
 * needs no second look).
 *
 * Cost does not grow with the number of streams: one user lookup and one
 * grant resolution per distinct user, one project lookup per distinct
 * directly streamed project.
 */
import { canSeeGroup, canSeeProject } from '../auth/rbac.js';
import { accessKeyLive } from '../auth/access-keys.js';
import type { ReadOps } from '../storage/storage.js';
import type { RoleGrant, UserRow } from '../storage/types-org.js';
import type { StreamEndReason } from './sse.js';
import type { LiveScope } from './live-scope.js';
import type { Subscription } from './subscription.js';

/** The reads re-validation needs. */
export type RevalidationReads = Pick<ReadOps, 'getUserById' | 'effectiveGrants' | 'getProject' | 'getAccessKey'>;

/** The streams that must end now, each with its reason. */
export async function findInvalidStreams(
  db: RevalidationReads,
  subs: Iterable<Subscription>,
  now: number = Date.now(),
): Promise<Map<Subscription, StreamEndReason>> {
  const live = [...subs].filter((s) => !s.ended);
  const userIds = new Set(live.map((s) => s.caller.userId));
  const projectIds = new Set(live.flatMap((s) => (s.scope.kind === 'project' ? [s.scope.projectId] : [])));
  const keyIds = new Set(live.flatMap((s) => (s.caller.accessKeyId == null ? [] : [s.caller.accessKeyId])));

  const [users, blocked, keys] = await Promise.all([
    Promise.all([...userIds].map(async (id) => [id, await userStanding(db, id)] as const)),
    Promise.all([...projectIds].map(async (id) => [id, (await db.getProject(id))?.isBlocked ?? true] as const)),
    Promise.all([...keyIds].map(async (id) => [id, await db.getAccessKey(id)] as const)),
  ]);
  const standing = new Map(users);
  const projectBlocked = new Map(blocked);
  const keyLive = new Map(keys.map(([id, row]) => [id, row !== null && accessKeyLive(row, now)]));

  const verdicts = new Map<Subscription, StreamEndReason>();
  for (const sub of live) {
    const user = standing.get(sub.caller.userId);
    const { tokenVersion, accessKeyId } = sub.caller;
    const credentialValid = accessKeyId == null ? true : keyLive.get(accessKeyId) === true;
    if (!user || !credentialValid || !tokenStillValid(user.row, tokenVersion) || !grantsCover(user.grants, sub.scope)) {
      verdicts.set(sub, 'token_revoked');
    } else if (sub.scope.kind === 'project' && projectBlocked.get(sub.scope.projectId) === true) {
      verdicts.set(sub, 'project_blocked');
    }
  }
  return verdicts;
}

interface UserStanding {
  row: UserRow;
  grants: RoleGrant[];
}

async function userStanding(db: RevalidationReads, userId: number): Promise<UserStanding | null> {
  const [row, grants] = await Promise.all([db.getUserById(userId), db.effectiveGrants(userId)]);
  return row ? { row, grants } : null;
}

/** The checks every authenticated request makes on the token's user, minus expiry (no token_version for an access key's stream: null). */
export function tokenStillValid(user: UserRow, tokenVersion: number | null): boolean {
  return (tokenVersion === null || user.tokenVersion === tokenVersion) && user.isActive && user.deletedAt === null;
}

/** The scope check of `GET /v1/logs`, on fresh grants. */
export function grantsCover(grants: readonly RoleGrant[], scope: LiveScope): boolean {
  return scope.kind === 'project' ? canSeeProject(grants, { id: scope.projectId, groupId: scope.groupId }) : canSeeGroup(grants, scope.groupId);
}
