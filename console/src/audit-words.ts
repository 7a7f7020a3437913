/**
 * Audit rows in words: "admin blocked project payments", "alice signed in",
 * "login failed for bob". A sentence is a list of parts, plain text or a
 * reference (a user, group, project, team) the page can turn into a link.
 * Pure: names come from a lookup the caller fills, with "user #12" when a
 * name is unknown (deleted, or beyond what the caller could load).
 * No DOM and no imports but types, so the unit tests run it under Node.
 */
import type { AuditAction, AuditLogEntry } from './api-types.js';

export type { AuditAction };

/**
 * Short names for the action filter, one per action the OpenAPI document
 * lists (`AuditAction` is generated from it: a new action fails to compile
 * here until it has a label), in the order the filter offers them.
 */
export const ACTION_LABELS: Record<AuditAction, string> = {
  'user.created': 'User created',
  'user.updated': 'User changed',
  'user.blocked': 'User blocked',
  'user.unblocked': 'User unblocked',
  'user.deleted': 'User deleted',
  'user.password_changed': 'Password changed',
  'user.identity_linked': 'Single sign-on identity linked',
  'user.identity_unlinked': 'Single sign-on identity unlinked',
  'group.created': 'Group created',
  'team.created': 'Team created',
  'team.member_added': 'Team member added',
  'team.member_removed': 'Team member removed',
  'project.created': 'Project created',
  'project.quota_updated': 'Project retention or quotas changed',
  'project.blocked': 'Project blocked',
  'project.unblocked': 'Project unblocked',
  'secret_key.created': 'Secret key created',
  'secret_key.revoked': 'Secret key revoked',
  'access_key.created': 'Access key created',
  'access_key.revoked': 'Access key revoked',
  'role_assignment.created': 'Role granted',
  'role_assignment.revoked': 'Role revoked',
  'sso.group_teams_set': 'Group-to-team mapping changed',
  'auth.login_succeeded': 'Signed in',
  'auth.login_failed': 'Sign-in failed',
  'auth.logged_out': 'Signed out',
  'auth.throttled': 'Sign-in attempts throttled',
  'audit.purged': 'Old audit rows purged',
  'saved_search.created': 'Search saved',
  'saved_search.updated': 'Saved search changed',
  'saved_search.deleted': 'Saved search deleted',
  'alert_rule.created': 'Alert rule created',
  'alert_rule.updated': 'Alert rule changed',
  'alert_rule.deleted': 'Alert rule deleted',
};

/** Every action, for the filter: the keys of the labels. */
export const AUDIT_ACTIONS = Object.keys(ACTION_LABELS) as AuditAction[];

/** Target types the service writes, for the target filter. */
export const TARGET_TYPES = [
  'user',
  'group',
  'team',
  'project',
  'secret_key',
  'access_key',
  'role_assignment',
  'auth',
  'audit',
  'saved_search',
  'alert_rule',
] as const;

/** An audit row as the console reads it: an action it does not know (a newer service) still reads, generically. */
export type AuditEntry = Omit<AuditLogEntry, 'action'> & { action: string };

export type RefKind = 'user' | 'group' | 'project' | 'team';

/** Something named in a sentence; `known` is false when the name is a fallback ("user #12"). */
export interface Ref {
  kind: RefKind;
  id: number;
  name: string;
  known: boolean;
}

export type Part = string | Ref;

/** Names the caller could find; undefined when unknown. */
export type NameLookup = (kind: RefKind, id: number) => string | undefined;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A reference standing alone: "alice", or "user #12" when the name is unknown. */
function ref(kind: RefKind, id: number | null, names: NameLookup, fromRow?: string | null, fallback = `${kind} #${id}`): Part {
  if (id === null) return `an unknown ${kind}`;
  const name = names(kind, id) ?? fromRow ?? undefined;
  return { kind, id, name: name ?? fallback, known: name !== undefined };
}

/** A reference after its kind: "project payments", or "project #7" (not "project project #7"). */
function kindRef(kind: RefKind, id: number | null, names: NameLookup, fromRow?: string | null): Part[] {
  return id === null ? [`an unknown ${kind}`] : [`${kind} `, ref(kind, id, names, fromRow, `#${id}`)];
}

/** "a, b and c". */
function list(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

const FIELD_WORDS: Record<string, string> = {
  display_name: 'display name',
  email: 'email',
  password: 'temporary password',
  retention_days: 'retention',
  max_entries: 'entry quota',
  max_bytes: 'byte quota',
};

function quotaValue(field: string, v: unknown): string {
  if (v === null || v === undefined) return 'none';
  const n = num(v);
  if (n === null) return String(v);
  const text = n.toLocaleString('en-US');
  if (field === 'retention_days') return `${text} ${n === 1 ? 'day' : 'days'}`;
  if (field === 'max_bytes') return `${text} bytes`;
  return text;
}

/** "retention 30 days → 14 days, entry quota none → 1,000". */
function quotaChanges(meta: Record<string, unknown>): string {
  const before = (meta.before ?? {}) as Record<string, unknown>;
  const after = (meta.after ?? {}) as Record<string, unknown>;
  const changes = ['retention_days', 'max_entries', 'max_bytes']
    .filter((f) => before[f] !== after[f])
    .map((f) => `${FIELD_WORDS[f]} ${quotaValue(f, before[f])} → ${quotaValue(f, after[f])}`);
  return changes.length ? `: ${changes.join(', ')}` : '';
}

const LOGIN_FAILURES: Record<string, string> = {
  invalid_password: 'wrong password',
  blocked: 'the account is blocked',
  deleted: 'the account is deleted',
};

function keyName(meta: Record<string, unknown>, id: number | null): string {
  const label = str(meta.label);
  const idText = id === null ? 'key' : `key #${id}`;
  return label ? `${idText} "${label}"` : idText;
}

function roleParts(meta: Record<string, unknown>, names: NameLookup): { role: string; scope: Part[]; subject: Part[] } {
  const role = str(meta.role) ?? 'a role';
  const scopeType = str(meta.scope_type);
  const scopeId = num(meta.scope_id);
  const scope: Part[] = scopeType === 'group' || scopeType === 'project' ? kindRef(scopeType, scopeId, names) : ['everything'];
  const subjectId = num(meta.subject_id);
  const subject = meta.subject_type === 'team' ? kindRef('team', subjectId, names) : [ref('user', subjectId, names)];
  return { role, scope, subject };
}

/** The row as a sentence, in parts (text and references). */
export function describeAudit(e: AuditEntry, names: NameLookup): Part[] {
  const meta = e.metadata ?? {};
  const actor: Part = e.actor_user_id === null ? 'the service' : ref('user', e.actor_user_id, names);
  const self = e.actor_user_id !== null && e.actor_user_id === e.target_id;
  const user = (fromRow?: string | null) => kindRef('user', e.target_id, names, fromRow);
  const bareUser = () => ref('user', e.target_id, names);
  const project = () => kindRef('project', e.target_id, names, str(meta.name));
  const team = () => kindRef('team', e.target_id, names, str(meta.name));
  const group = (id: number | null, fromRow?: string | null) => kindRef('group', id, names, fromRow);
  switch (e.action as AuditAction) {
    case 'user.created':
      return [actor, ' created ', ...user(str(meta.username))];
    case 'user.updated': {
      const fields = Array.isArray(meta.changed_fields) ? meta.changed_fields.map((f) => FIELD_WORDS[String(f)] ?? String(f)) : [];
      if (fields.length === 1 && fields[0] === FIELD_WORDS.password) return [actor, ' set a new temporary password for ', ...user()];
      return [actor, ' changed the ', fields.length ? list(fields) : 'details', ' of ', ...user()];
    }
    case 'user.blocked':
      return [actor, ' blocked ', ...user()];
    case 'user.unblocked':
      return [actor, ' unblocked ', ...user()];
    case 'user.deleted':
      return self ? [actor, ' deleted their own account'] : [actor, ' deleted ', ...user()];
    case 'user.password_changed':
      return self ? [actor, ' changed their password'] : [actor, ' changed the password of ', bareUser()];
    case 'group.created':
      return [actor, ' created ', ...group(e.target_id, str(meta.name))];
    case 'team.created':
      return [actor, ' created ', ...team(), ' in ', ...group(num(meta.group_id))];
    case 'team.member_added':
      return [actor, ' added ', ref('user', num(meta.user_id), names), ' to ', ...team()];
    case 'team.member_removed':
      return [actor, ' removed ', ref('user', num(meta.user_id), names), ' from ', ...team()];
    case 'project.created': {
      const days = num(meta.retention_days);
      const retention = days === null ? '' : ` (entries kept ${quotaValue('retention_days', days)})`;
      return [actor, ' created ', ...project(), ' in ', ...group(num(meta.group_id)), retention];
    }
    case 'project.quota_updated':
      return [actor, ' changed the retention or quotas of ', ...project(), quotaChanges(meta)];
    case 'project.blocked':
      return [actor, ' blocked ', ...project()];
    case 'project.unblocked':
      return [actor, ' unblocked ', ...project()];
    case 'secret_key.created':
      return [actor, ` created ${keyName(meta, e.target_id)} in `, ...kindRef('project', num(meta.project_id), names)];
    case 'secret_key.revoked':
      return [actor, ` revoked ${keyName(meta, e.target_id)} of `, ...kindRef('project', num(meta.project_id), names)];
    case 'access_key.created':
      return [actor, ` created access ${keyName(meta, e.target_id)} for `, ref('user', num(meta.user_id), names)];
    case 'access_key.revoked':
      return [actor, ` revoked access ${keyName(meta, e.target_id)} of `, ref('user', num(meta.user_id), names)];
    case 'role_assignment.created': {
      const r = roleParts(meta, names);
      return [actor, ` granted ${r.role} on `, ...r.scope, ' to ', ...r.subject];
    }
    case 'role_assignment.revoked': {
      const r = roleParts(meta, names);
      return [actor, ` revoked ${r.role} on `, ...r.scope, ' from ', ...r.subject];
    }
    case 'auth.login_succeeded':
      return [bareUser(), ' signed in'];
    case 'auth.login_failed': {
      if (meta.unknown_user === true || e.target_id === null) return ['login failed for an unknown username'];
      const why = LOGIN_FAILURES[str(meta.reason) ?? ''];
      return ['login failed for ', bareUser(), why ? ` (${why})` : ''];
    }
    case 'auth.logged_out':
      return [bareUser(), ' signed out'];
    case 'auth.throttled': {
      const by = meta.key_kind === 'subject' ? 'for one account' : 'from one address';
      const ip = str(meta.client_ip);
      const path = str(meta.path);
      return [`sign-in attempts throttled ${by}${ip ? ` (${ip})` : ''}${path ? ` on ${path}` : ''}`];
    }
    case 'user.identity_linked':
      return [actor, ` linked ${str(meta.subject) ?? 'an identity'} at the provider to `, ...user()];
    case 'user.identity_unlinked':
      return [actor, ` unlinked ${str(meta.subject) ?? 'an identity'} at the provider from `, ...user()];
    case 'sso.group_teams_set':
      return [actor, ' changed which provider groups feed which teams'];
    case 'audit.purged': {
      const count = num(meta.deleted_count) ?? 0;
      const kind = meta.scope === 'auth' ? 'sign-in' : 'administration';
      const older = str(meta.older_than);
      return [`retention deleted ${count.toLocaleString('en-US')} ${kind} audit ${count === 1 ? 'row' : 'rows'}${older ? ` older than ${older}` : ''}`];
    }
    case 'saved_search.created': {
      const name = str(meta.name);
      const projectId = num(meta.project_id);
      const scope = projectId !== null ? kindRef('project', projectId, names) : group(num(meta.group_id));
      return [actor, ` saved the search ${name ? `"${name}"` : `#${e.target_id}`} on `, ...scope];
    }
    case 'saved_search.updated': {
      const fields = Array.isArray(meta.changed_fields) ? meta.changed_fields.map((f) => (f === 'query' ? 'filters' : String(f))) : [];
      return [actor, ` changed the ${fields.length ? list(fields) : 'details'} of saved search #${e.target_id}`];
    }
    case 'saved_search.deleted': {
      const name = str(meta.name);
      return [actor, ` deleted the saved search ${name ? `"${name}"` : `#${e.target_id}`}`];
    }
    case 'alert_rule.created': {
      const name = str(meta.name);
      const kind = meta.kind === 'threshold' ? 'threshold' : 'any-match';
      return [actor, ` created the ${kind} alert rule ${name ? `"${name}"` : `#${e.target_id}`} on saved search #${num(meta.saved_search_id) ?? '?'}`];
    }
    case 'alert_rule.updated': {
      const fields = Array.isArray(meta.changed_fields) ? meta.changed_fields.map((f) => String(f).replace(/_/g, ' ')) : [];
      return [actor, ` changed the ${fields.length ? list(fields) : 'details'} of alert rule #${e.target_id}`];
    }
    case 'alert_rule.deleted': {
      const name = str(meta.name);
      return [actor, ` deleted the alert rule ${name ? `"${name}"` : `#${e.target_id}`}`];
    }
    default:
      return [actor, ` did ${e.action} on ${e.target_type}${e.target_id === null ? '' : ` #${e.target_id}`}`];
  }
}

/** The sentence as plain text (usernames keep their case, so no capital is forced). */
export function auditSentence(e: AuditEntry, names: NameLookup): string {
  return describeAudit(e, names)
    .map((p) => (typeof p === 'string' ? p : p.name))
    .join('');
}

function days(n: number | null, what: string): string {
  return n === null ? `${what} are kept forever` : `${what} are deleted after ${n.toLocaleString('en-US')} ${n === 1 ? 'day' : 'days'}`;
}

/** The retention policy in words. */
export function retentionInWords(auditDays: number | null, authDays: number | null): string {
  return `${days(auditDays, 'Administration rows')}; ${days(authDays, 'sign-in rows (signed in, failed, signed out, throttled)')}.`;
}
