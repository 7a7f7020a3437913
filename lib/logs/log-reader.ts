/**
 * Reads log entries for a scope: one project, or every project of a group
 * that is not blocked at the time of the read (a group query silently
 * leaves blocked projects out; a group stream includes projects created
 * later). Shared by `GET /v1/logs` and the live stream.
 */
import type { LogFilter } from '../search/log-filter.js';
import type { LogRow, LogSelection } from '../storage/types-logs.js';
import type { Page } from '../storage/types-org.js';
import type { ReadOps } from '../storage/storage.js';
import { filterIsEmpty, type LogScope } from './log-query-params.js';

/** The selection a scope stands for now, or null when it can match nothing. */
export async function selectionOf(storage: ReadOps, scope: LogScope, filter: LogFilter): Promise<LogSelection | null> {
  if (filterIsEmpty(filter)) return null;
  if (scope.kind === 'project') return { ...filter, projectIds: [scope.projectId] };
  const projects = await storage.projectIdsOfGroup(scope.groupId);
  const projectIds = projects.filter((p) => !p.isBlocked).map((p) => p.id);
  return projectIds.length === 0 ? null : { ...filter, projectIds };
}

/** Newest first, strictly below `page.beforeId`, at most `page.limit`. */
export async function readLogsPage(storage: ReadOps, scope: LogScope, filter: LogFilter, page: Page): Promise<LogRow[]> {
  const selection = await selectionOf(storage, scope, filter);
  return selection === null ? [] : storage.queryLogs(selection, page);
}
