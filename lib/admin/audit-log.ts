/**
 * Reading the audit log (`GET /v1/audit-log`, admin only): filters on
 * actor, action (the closed set in `audit/audit.ts`; anything else is 400
 * with reason `unknown`), target, and an inclusive `from`/`to` range on
 * `created_at`; newest first; the retention policy in force is reported
 * alongside. Query-string parsing is the route's (`http/audit-handlers.ts`).
 */
import { invalidRequest } from '../core/errors.js';
import type { LogServiceConfig } from '../core/config.js';
import type { AuditFilter, AuditRow } from '../storage/types-org.js';
import type { Storage } from '../storage/storage.js';
import { isAuditAction } from '../audit/audit.js';

/** 400 `{field: action, reason: unknown}` for an action outside the closed set. */
export function checkAuditActionFilter(action: string): void {
  if (!isAuditAction(action)) throw invalidRequest(`'${action}' is not an audit action.`, 'action', 'unknown');
}

/** Rows matching the filter, newest first (ask for limit + 1 to learn whether more exist). */
export function listAuditEntries(storage: Storage, filter: AuditFilter): Promise<AuditRow[]> {
  if (filter.action !== undefined) checkAuditActionFilter(filter.action);
  return storage.listAudit(filter);
}

/** The two retention settings in force (days, or null = kept indefinitely). */
export function auditRetention(config: Pick<LogServiceConfig, 'auditRetentionDays' | 'authEventRetentionDays'>): {
  audit_retention_days: number | null;
  auth_event_retention_days: number | null;
} {
  return { audit_retention_days: config.auditRetentionDays, auth_event_retention_days: config.authEventRetentionDays };
}
