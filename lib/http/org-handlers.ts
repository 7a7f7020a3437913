/**
 * Handlers for groups, teams, members, projects and secret keys. Each
 * checks first what decides whether the caller may act at all: admin rights
 * on admin-only routes, otherwise the path resource (404 when it does not
 * exist or is not visible, 403 when it is visible but not manageable); only
 * then is the body read and the change made.
 */
import { optional, type } from 'superstruct';
import { requireAdmin, requireExistingProject, requireGroup, requireProject, requireTeam } from '../admin/org-access.js';
import { createGroup, listVisibleGroups } from '../admin/groups.js';
import { addTeamMember, createTeam, listTeamMembers, listTeams, removeTeamMember, requireTeamMembershipRights } from '../admin/teams.js';
import { createProject, listVisibleProjects, setProjectBlocked, updateProjectSettings } from '../admin/projects.js';
import { createSecretKey, listSecretKeys, revokeSecretKey } from '../admin/secret-keys.js';
import { accessKeyVisibility } from '../admin/access-keys.js';
import { readPageRequest, rowsToFetch, toPage } from '../core/pagination.js';
import { queryId, queryText } from './query-params.js';
import { BodyId, Name, OptionalLabel, Quota, RetentionDays, actorOf, optionalJson } from './org-request.js';
import { presentGroup, presentProject, presentProjectWithUsage, presentSecretKey, presentTeam, presentTeamMember } from './present-org.js';
import type { Reply, UserContext } from './route.js';

const NameBody = type({ name: Name });
const MemberBody = type({ user_id: BodyId });
const NewProjectBody = type({ name: Name, retention_days: RetentionDays, max_entries: optional(Quota), max_bytes: optional(Quota) });
const ProjectPatchBody = type({ retention_days: optional(RetentionDays), max_entries: optional(Quota), max_bytes: optional(Quota) });
const NewKeyBody = type({ label: OptionalLabel });

/** The `name` query parameter of a listing, as a case-insensitive substring filter. */
function nameFilter(query: URLSearchParams): { nameContains?: string } {
  const name = queryText(query, 'name');
  return name === undefined ? {} : { nameContains: name };
}

/** The project settings a body gives, under the storage's names; absent fields stay absent. */
function projectSettings(body: { retention_days?: number; max_entries?: number | null; max_bytes?: number | null }): {
  retentionDays?: number;
  maxEntries?: number | null;
  maxBytes?: number | null;
} {
  return {
    ...(body.retention_days === undefined ? {} : { retentionDays: body.retention_days }),
    ...(body.max_entries === undefined ? {} : { maxEntries: body.max_entries }),
    ...(body.max_bytes === undefined ? {} : { maxBytes: body.max_bytes }),
  };
}

export async function postGroups(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  requireAdmin(actor);
  const body = await ctx.json(NameBody);
  const group = await createGroup(ctx.deps.storage, actor, body.name, ctx.deps.now());
  return { status: 201, body: presentGroup(group) };
}

export async function getGroups(ctx: UserContext): Promise<Reply> {
  const page = readPageRequest(ctx.query, 'groups', ctx.deps.cursors);
  const rows = await listVisibleGroups(ctx.deps.storage, actorOf(ctx), { ...rowsToFetch(page), ...nameFilter(ctx.query) });
  return { status: 200, body: toPage(rows, page, 'groups', ctx.deps.cursors, presentGroup) };
}

export async function postGroupTeams(ctx: UserContext<'groupId'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const group = await requireGroup(ctx.deps.storage, actor, ctx.params.groupId, 'manage');
  const body = await ctx.json(NameBody);
  const team = await createTeam(ctx.deps.storage, actor, group.id, body.name, ctx.deps.now());
  return { status: 201, body: presentTeam(team) };
}

export async function getGroupTeams(ctx: UserContext<'groupId'>): Promise<Reply> {
  const group = await requireGroup(ctx.deps.storage, actorOf(ctx), ctx.params.groupId, 'see');
  return { status: 200, body: { items: (await listTeams(ctx.deps.storage, group.id)).map(presentTeam) } };
}

export async function getTeamMembers(ctx: UserContext<'teamId'>): Promise<Reply> {
  const team = await requireTeam(ctx.deps.storage, actorOf(ctx), ctx.params.teamId, 'see');
  return { status: 200, body: { items: (await listTeamMembers(ctx.deps.storage, team.id)).map(presentTeamMember) } };
}

export async function postTeamMembers(ctx: UserContext<'teamId'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const team = await requireTeam(ctx.deps.storage, actor, ctx.params.teamId, 'manage');
  // 403 before the body is read; asked again inside the change's transaction.
  await requireTeamMembershipRights(ctx.deps.storage, actor, team);
  const body = await ctx.json(MemberBody);
  await addTeamMember(ctx.deps.storage, actor, team, body.user_id, ctx.deps.now());
  return { status: 204 };
}

export async function deleteTeamMember(ctx: UserContext<'teamId' | 'userId'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const team = await requireTeam(ctx.deps.storage, actor, ctx.params.teamId, 'manage');
  await removeTeamMember(ctx.deps.storage, actor, team, ctx.params.userId, ctx.deps.now());
  // The team's roles no longer count for the person: their streams are re-checked now.
  ctx.deps.liveStreams.credentialsRevoked();
  return { status: 204 };
}

export async function getProjects(ctx: UserContext): Promise<Reply> {
  const page = readPageRequest(ctx.query, 'projects', ctx.deps.cursors);
  const groupId = queryId(ctx.query, 'group_id');
  const key = ctx.principal.accessKey;
  // An access key lists only what its scope names and its person may see.
  const narrowed = key ? await accessKeyVisibility(ctx.deps.storage, ctx.principal.grants, key.scope) : undefined;
  const rows = await listVisibleProjects(
    ctx.deps.storage,
    actorOf(ctx),
    { ...rowsToFetch(page), ...(groupId === undefined ? {} : { groupId }), ...nameFilter(ctx.query) },
    narrowed,
  );
  return { status: 200, body: toPage(rows, page, 'projects', ctx.deps.cursors, presentProject) };
}

export async function postGroupProjects(ctx: UserContext<'groupId'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const group = await requireGroup(ctx.deps.storage, actor, ctx.params.groupId, 'manage');
  const body = await ctx.json(NewProjectBody);
  const settings = { retentionDays: body.retention_days, maxEntries: null, maxBytes: null, ...projectSettings(body) };
  const project = await createProject(ctx.deps.storage, actor, group.id, { name: body.name, ...settings }, ctx.deps.now());
  return { status: 201, body: presentProject(project) };
}

export async function getProject(ctx: UserContext<'id'>): Promise<Reply> {
  const project = await requireProject(ctx.deps.storage, actorOf(ctx), ctx.params.id, 'see');
  return { status: 200, body: presentProjectWithUsage(project) };
}

export async function patchProject(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const project = await requireProject(ctx.deps.storage, actor, ctx.params.id, 'manage');
  const body = await ctx.json(ProjectPatchBody);
  const updated = await updateProjectSettings(ctx.deps.storage, actor, project.id, projectSettings(body), ctx.deps.now());
  return { status: 200, body: presentProject(updated) };
}

export function postProjectBlock(ctx: UserContext<'id'>): Promise<Reply> {
  return setBlocked(ctx, true);
}

export function postProjectUnblock(ctx: UserContext<'id'>): Promise<Reply> {
  return setBlocked(ctx, false);
}

/** Block and unblock: admin only, refused before any lookup; no body. */
async function setBlocked(ctx: UserContext<'id'>, blocked: boolean): Promise<Reply> {
  const actor = actorOf(ctx);
  requireAdmin(actor);
  const project = await requireExistingProject(ctx.deps.storage, ctx.params.id);
  const updated = await setProjectBlocked(ctx.deps.storage, actor, project.id, blocked, ctx.deps.now());
  // A blocked project's open streams end now, here and in other processes.
  if (blocked) ctx.deps.liveStreams.projectBlocked(project.id);
  return { status: 200, body: presentProject(updated) };
}

export async function postSecretKeys(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const project = await requireProject(ctx.deps.storage, actor, ctx.params.id, 'manage');
  const body = await optionalJson(ctx, NewKeyBody);
  const { key, secret } = await createSecretKey(ctx.deps.storage, actor, project, body.label ?? null, ctx.deps.now());
  return { status: 201, body: presentSecretKey(key, secret) };
}

export async function getSecretKeys(ctx: UserContext<'id'>): Promise<Reply> {
  const project = await requireProject(ctx.deps.storage, actorOf(ctx), ctx.params.id, 'see');
  return { status: 200, body: { items: (await listSecretKeys(ctx.deps.storage, project)).map((k) => presentSecretKey(k)) } };
}

export async function deleteSecretKey(ctx: UserContext<'id' | 'keyId'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const project = await requireProject(ctx.deps.storage, actor, ctx.params.id, 'manage');
  await revokeSecretKey(ctx.deps.storage, actor, project, ctx.params.keyId, ctx.deps.now());
  return { status: 204 };
}
