/**
 * THE route table: every route the service serves, in one list, top to
 * bottom. Anything not listed answers 404 `not_found`. The first row that
 * matches a request wins, which is why `/v1/users/me` comes before
 * `/v1/users/:id`. A row's `auth` decides what its function receives (see
 * `route.ts`); `envelope` is `general` unless the row says `oauth`.
 */
import { route, type Route } from './route.js';
import { deleteToken, postChangePassword, postToken } from './routes-auth.js';
import { deleteMe, deleteUser, getUsers, patchUser, postUserBlock, postUsers, postUserUnblock } from './routes-users.js';
import {
  deleteSecretKey,
  deleteTeamMember,
  getGroups,
  getGroupTeams,
  getProject,
  getProjects,
  getSecretKeys,
  getTeamMembers,
  patchProject,
  postGroupProjects,
  postGroups,
  postGroupTeams,
  postProjectBlock,
  postProjectUnblock,
  postSecretKeys,
  postTeamMembers,
} from './routes-org.js';
import { deleteRoleAssignment, getRoleAssignments, postRoleAssignments } from './routes-roles.js';
import { getAuditLog } from './routes-audit.js';
import { deleteAlertRuleRoute, getAlertNotifications, getAlertRule, getAlertRules, patchAlertRule, postAlertRules } from './routes-alert-rules.js';
import { deleteSavedSearchRoute, getSavedSearch, getSavedSearches, patchSavedSearch, postSavedSearches } from './routes-saved-searches.js';
import { getLogs, getLogsHistogram, postLogs } from './routes-logs.js';
import { streamLogs } from './routes-stream.js';
import { postOtlpLogs } from './routes-otlp.js';
import { getOpenApiDocument } from './routes-openapi.js';
import { getMetrics } from './routes-metrics.js';

export const ROUTES: readonly Route[] = [
  // Tokens and passwords
  route({ method: 'POST', path: '/v1/auth/token', auth: 'none', envelope: 'oauth', rateLimited: true, noStore: true, handle: postToken }),
  route({ method: 'DELETE', path: '/v1/auth/token', auth: 'none', envelope: 'oauth', rateLimited: true, noStore: true, handle: deleteToken }),
  route({ method: 'POST', path: '/v1/auth/change-password', auth: 'user', allowDuringPasswordChange: true, rateLimited: true, handle: postChangePassword }),

  // Users
  route({ method: 'DELETE', path: '/v1/users/me', auth: 'user', allowDuringPasswordChange: true, rateLimited: true, handle: deleteMe }),
  route({ method: 'POST', path: '/v1/users', auth: 'user', handle: postUsers }),
  route({ method: 'GET', path: '/v1/users', auth: 'user', handle: getUsers }),
  route({ method: 'PATCH', path: '/v1/users/:id', auth: 'user', handle: patchUser }),
  route({ method: 'POST', path: '/v1/users/:id/block', auth: 'user', handle: postUserBlock }),
  route({ method: 'POST', path: '/v1/users/:id/unblock', auth: 'user', handle: postUserUnblock }),
  route({ method: 'DELETE', path: '/v1/users/:id', auth: 'user', handle: deleteUser }),

  // Groups and teams
  route({ method: 'POST', path: '/v1/groups', auth: 'user', handle: postGroups }),
  route({ method: 'GET', path: '/v1/groups', auth: 'user', handle: getGroups }),
  route({ method: 'POST', path: '/v1/groups/:groupId/teams', auth: 'user', handle: postGroupTeams }),
  route({ method: 'GET', path: '/v1/groups/:groupId/teams', auth: 'user', handle: getGroupTeams }),
  route({ method: 'GET', path: '/v1/teams/:teamId/members', auth: 'user', handle: getTeamMembers }),
  route({ method: 'POST', path: '/v1/teams/:teamId/members', auth: 'user', handle: postTeamMembers }),
  route({ method: 'DELETE', path: '/v1/teams/:teamId/members/:userId', auth: 'user', handle: deleteTeamMember }),

  // Projects and their secret keys
  route({ method: 'GET', path: '/v1/projects', auth: 'user', handle: getProjects }),
  route({ method: 'POST', path: '/v1/groups/:groupId/projects', auth: 'user', handle: postGroupProjects }),
  route({ method: 'GET', path: '/v1/projects/:id', auth: 'user', handle: getProject }),
  route({ method: 'PATCH', path: '/v1/projects/:id', auth: 'user', handle: patchProject }),
  route({ method: 'POST', path: '/v1/projects/:id/block', auth: 'user', handle: postProjectBlock }),
  route({ method: 'POST', path: '/v1/projects/:id/unblock', auth: 'user', handle: postProjectUnblock }),
  route({ method: 'POST', path: '/v1/projects/:id/secret-keys', auth: 'user', handle: postSecretKeys }),
  route({ method: 'GET', path: '/v1/projects/:id/secret-keys', auth: 'user', handle: getSecretKeys }),
  route({ method: 'DELETE', path: '/v1/projects/:id/secret-keys/:keyId', auth: 'user', handle: deleteSecretKey }),

  // Role assignments
  route({ method: 'POST', path: '/v1/role-assignments', auth: 'user', handle: postRoleAssignments }),
  route({ method: 'DELETE', path: '/v1/role-assignments/:id', auth: 'user', handle: deleteRoleAssignment }),
  route({ method: 'GET', path: '/v1/role-assignments', auth: 'user', handle: getRoleAssignments }),

  // Audit log
  route({ method: 'GET', path: '/v1/audit-log', auth: 'user', handle: getAuditLog }),

  // Logs: ingestion with a project's secret key, query and live stream with an access token
  route({ method: 'POST', path: '/v1/logs', auth: 'project-key', bodyLimit: 'ingest', handle: postLogs }),
  route({ method: 'GET', path: '/v1/logs', auth: 'user', handle: getLogs }),
  route({ method: 'GET', path: '/v1/logs/stream', auth: 'user', handle: streamLogs }),
  route({ method: 'GET', path: '/v1/logs/histogram', auth: 'user', handle: getLogsHistogram }),

  // Saved searches
  route({ method: 'POST', path: '/v1/saved-searches', auth: 'user', handle: postSavedSearches }),
  route({ method: 'GET', path: '/v1/saved-searches', auth: 'user', handle: getSavedSearches }),
  route({ method: 'GET', path: '/v1/saved-searches/:id', auth: 'user', handle: getSavedSearch }),
  route({ method: 'PATCH', path: '/v1/saved-searches/:id', auth: 'user', handle: patchSavedSearch }),
  route({ method: 'DELETE', path: '/v1/saved-searches/:id', auth: 'user', handle: deleteSavedSearchRoute }),

  // Alert rules on saved searches, and their notifications
  route({ method: 'POST', path: '/v1/alert-rules', auth: 'user', handle: postAlertRules }),
  route({ method: 'GET', path: '/v1/alert-rules', auth: 'user', handle: getAlertRules }),
  route({ method: 'GET', path: '/v1/alert-rules/:id', auth: 'user', handle: getAlertRule }),
  route({ method: 'PATCH', path: '/v1/alert-rules/:id', auth: 'user', handle: patchAlertRule }),
  route({ method: 'DELETE', path: '/v1/alert-rules/:id', auth: 'user', handle: deleteAlertRuleRoute }),
  route({ method: 'GET', path: '/v1/alert-rules/:id/notifications', auth: 'user', handle: getAlertNotifications }),

  // OTLP/HTTP logs export (OpenTelemetry SDKs and Collectors), with a project's secret key
  route({ method: 'POST', path: '/v1/otlp/v1/logs', auth: 'project-key', bodyLimit: 'ingest', handle: postOtlpLogs }),

  // This API's own description
  route({ method: 'GET', path: '/v1/openapi.json', auth: 'none', handle: getOpenApiDocument }),

  // Prometheus metrics: 404 unless --metrics-enabled
  route({ method: 'GET', path: '/metrics', auth: 'none', handle: getMetrics }),
];

/** The table, for callers that take it from a function. */
export function allRoutes(): readonly Route[] {
  return ROUTES;
}
