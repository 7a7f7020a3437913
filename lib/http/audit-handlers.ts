/**
 * `GET /v1/audit-log` (admin only, not owner; refused with 403 before the
 * query is read): filters, pages newest first, and the retention policy in
 * force.
 */
import type { AuditFilter } from '../storage/types-org.js';
import { requireAdmin } from '../admin/org-access.js';
import { auditRetention, listAuditEntries } from '../admin/audit-log.js';
import { readPageRequest, rowsToFetch, toPage, type PageRequest } from '../core/pagination.js';
import { queryId, queryInstant, queryText } from './query-params.js';
import { actorOf } from './org-request.js';
import { presentAuditEntry } from './present-org.js';
import type { Reply, UserContext } from './route.js';

/** Reads the filters (400 naming the parameter on a bad value; an unknown `action` is refused by the listing with reason `unknown`). */
function auditFilterFrom(query: URLSearchParams, page: PageRequest): AuditFilter {
  const filter: AuditFilter = rowsToFetch(page);
  const actorUserId = queryId(query, 'actor_user_id');
  if (actorUserId !== undefined) filter.actorUserId = actorUserId;
  const action = queryText(query, 'action');
  if (action !== undefined) filter.action = action;
  const targetType = queryText(query, 'target_type');
  if (targetType !== undefined) filter.targetType = targetType;
  const targetId = queryId(query, 'target_id');
  if (targetId !== undefined) filter.targetId = targetId;
  const from = queryInstant(query, 'from');
  if (from !== undefined) filter.from = from;
  const to = queryInstant(query, 'to');
  if (to !== undefined) filter.to = to;
  return filter;
}

export async function getAuditLog(ctx: UserContext): Promise<Reply> {
  requireAdmin(actorOf(ctx));
  const page = readPageRequest(ctx.query, 'audit', ctx.deps.cursors);
  const rows = await listAuditEntries(ctx.deps.storage, auditFilterFrom(ctx.query, page));
  return {
    status: 200,
    body: { ...toPage(rows, page, 'audit', ctx.deps.cursors, presentAuditEntry), ...auditRetention(ctx.deps.config) },
  };
}
