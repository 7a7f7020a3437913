/**
 * Audit rows: the closed set of actions and one function that
 * writes a row inside the caller's transaction, so a change and its audit
 * row commit together or not at all.
 */
import type { AuditRow } from '../storage/types-org.js';
import type { WriteOps } from '../storage/storage.js';

export const AUDIT_ACTIONS = [
  'user.created',
  'user.updated',
  'user.blocked',
  'user.unblocked',
  'user.deleted',
  'user.password_changed',
  'user.identity_linked',
  'user.identity_unlinked',
  'group.created',
  'team.created',
  'team.member_added',
  'team.member_removed',
  'project.created',
  'project.quota_updated',
  'project.blocked',
  'project.unblocked',
  'secret_key.created',
  'secret_key.revoked',
  'access_key.created',
  'access_key.revoked',
  'role_assignment.created',
  'role_assignment.revoked',
  'sso.group_teams_set',
  'auth.login_succeeded',
  'auth.login_failed',
  'auth.logged_out',
  'auth.throttled',
  'audit.purged',
  'saved_search.created',
  'saved_search.updated',
  'saved_search.deleted',
  'alert_rule.created',
  'alert_rule.updated',
  'alert_rule.deleted',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The "auth" retention class; every other action is the "admin" class. */
export const AUTH_EVENT_ACTIONS: readonly AuditAction[] = ['auth.login_succeeded', 'auth.login_failed', 'auth.logged_out', 'auth.throttled'];

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

export interface AuditEvent {
  actorUserId: number | null;
  action: AuditAction;
  targetType: string;
  targetId: number | null;
  metadata?: Record<string, unknown>;
}

export function recordAudit(tx: WriteOps, event: AuditEvent, now: number): Promise<AuditRow> {
  return tx.insertAudit({
    actorUserId: event.actorUserId,
    action: event.action,
    targetType: event.targetType,
    targetId: event.targetId,
    metadata: event.metadata ?? {},
    createdAt: now,
  });
}
