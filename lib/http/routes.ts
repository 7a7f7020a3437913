/**
 * THE route table: every path the service answers, in one list, top to
 * bottom, the health check and the console included. Anything not listed
 * answers 404 `not_found` (CORS preflights are answered before it). The first row that
 * matches a request wins, which is why `/v1/users/me` comes before
 * `/v1/users/:id`. A row's `auth` decides what its function receives (see
 * `route.ts`); `envelope` is `general` unless the row says `oauth`.
 */
import { route, type Route } from './route.js';
import { deleteToken, postChangePassword, postToken } from './auth-handlers.js';
import { deleteMe, deleteUser, getUsers, patchUser, postUserBlock, postUsers, postUserUnblock } from './user-handlers.js';
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
} from './org-handlers.js';
import { deleteRoleAssignment, getRoleAssignments, postRoleAssignments } from './role-handlers.js';
import { getAuditLog } from './audit-handlers.js';
import { getLogs, getLogsHistogram, postLogs } from './log-handlers.js';
import { streamLogs } from './stream-handlers.js';
import { postOtlpLogs } from './otlp-handlers.js';
import { getOpenApiDocument } from './openapi-handlers.js';
import { getMetrics } from './metrics-handlers.js';
import { getConsoleFile, getHealthz, getRoot } from './site-handlers.js';
import {
  deleteUserIdentity,
  getAuthMethods,
  getOidcCallback,
  getOidcStart,
  getSsoGroupTeams,
  getUserIdentities,
  postSsoGroupTeams,
  postUserIdentity,
} from './sso-handlers.js';
import { deleteAccessKey, getAccessKeys, postAccessKeys } from './access-key-handlers.js';
import { deleteAlertRuleRoute, getAlertNotifications, getAlertRule, getAlertRules, patchAlertRule, postAlertRules } from './alert-rule-handlers.js';
import { deleteSavedSearchRoute, getSavedSearch, getSavedSearches, patchSavedSearch, postSavedSearches } from './saved-search-handlers.js';

export const ROUTES: readonly Route[] = [
  // Health check: no credentials, no database
  route({ method: 'GET', path: '/healthz', auth: 'none', handle: getHealthz }),

  // Tokens and passwords
  route({ method: 'POST', path: '/v1/auth/token', auth: 'none', envelope: 'oauth', rateLimited: true, noStore: true, handle: postToken }),
  route({ method: 'DELETE', path: '/v1/auth/token', auth: 'none', envelope: 'oauth', rateLimited: true, noStore: true, handle: deleteToken }),
  route({ method: 'POST', path: '/v1/auth/change-password', auth: 'user', allowDuringPasswordChange: true, rateLimited: true, handle: postChangePassword }),

  // Single sign-on (OpenID Connect): 404 on the sign-in routes unless an issuer is configured
  route({ method: 'GET', path: '/v1/auth/methods', auth: 'none', noStore: true, handle: getAuthMethods }),
  route({ method: 'GET', path: '/v1/auth/oidc/start', auth: 'none', rateLimited: true, noStore: true, handle: getOidcStart }),
  route({ method: 'GET', path: '/v1/auth/oidc/callback', auth: 'none', rateLimited: true, noStore: true, handle: getOidcCallback }),
  route({ method: 'GET', path: '/v1/sso/group-teams', auth: 'user', handle: getSsoGroupTeams }),
  route({ method: 'POST', path: '/v1/sso/group-teams', auth: 'user', handle: postSsoGroupTeams }),

  // Users
  route({ method: 'DELETE', path: '/v1/users/me', auth: 'user', allowDuringPasswordChange: true, rateLimited: true, handle: deleteMe }),
  route({ method: 'POST', path: '/v1/users', auth: 'user', handle: postUsers }),
  route({ method: 'GET', path: '/v1/users', auth: 'user', handle: getUsers }),
  route({ method: 'PATCH', path: '/v1/users/:id', auth: 'user', handle: patchUser }),
  route({ method: 'POST', path: '/v1/users/:id/block', auth: 'user', handle: postUserBlock }),
  route({ method: 'POST', path: '/v1/users/:id/unblock', auth: 'user', handle: postUserUnblock }),
  route({ method: 'DELETE', path: '/v1/users/:id', auth: 'user', handle: deleteUser }),
  route({ method: 'GET', path: '/v1/users/:id/identities', auth: 'user', handle: getUserIdentities }),
  route({ method: 'POST', path: '/v1/users/:id/identities', auth: 'user', handle: postUserIdentity }),
  route({ method: 'DELETE', path: '/v1/users/:id/identities/:identityId', auth: 'user', handle: deleteUserIdentity }),

  // Groups and teams
  route({ method: 'POST', path: '/v1/groups', auth: 'user', handle: postGroups }),
  route({ method: 'GET', path: '/v1/groups', auth: 'user', handle: getGroups }),
  route({ method: 'POST', path: '/v1/groups/:groupId/teams', auth: 'user', handle: postGroupTeams }),
  route({ method: 'GET', path: '/v1/groups/:groupId/teams', auth: 'user', handle: getGroupTeams }),
  route({ method: 'GET', path: '/v1/teams/:teamId/members', auth: 'user', handle: getTeamMembers }),
  route({ method: 'POST', path: '/v1/teams/:teamId/members', auth: 'user', handle: postTeamMembers }),
  route({ method: 'DELETE', path: '/v1/teams/:teamId/members/:userId', auth: 'user', handle: deleteTeamMember }),

  // Projects and their secret keys
  route({ method: 'GET', path: '/v1/projects', auth: 'user', accessKey: 'read', handle: getProjects }),
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

  // People's access keys (an access token only: a key never makes or revokes keys)
  route({ method: 'POST', path: '/v1/access-keys', auth: 'user', handle: postAccessKeys }),
  route({ method: 'GET', path: '/v1/access-keys', auth: 'user', handle: getAccessKeys }),
  route({ method: 'DELETE', path: '/v1/access-keys/:id', auth: 'user', handle: deleteAccessKey }),

  // Audit log
  route({ method: 'GET', path: '/v1/audit-log', auth: 'user', handle: getAuditLog }),

  // Logs: ingestion with a project's secret key, query and live stream with an access token;
  // each also with a person's access key carrying the named permission
  route({ method: 'POST', path: '/v1/logs', auth: 'project-key', bodyLimit: 'ingest', accessKey: 'ingest', handle: postLogs }),
  route({ method: 'GET', path: '/v1/logs', auth: 'user', accessKey: 'read', handle: getLogs }),
  route({ method: 'GET', path: '/v1/logs/stream', auth: 'user', accessKey: 'tail', handle: streamLogs }),
  route({ method: 'GET', path: '/v1/logs/histogram', auth: 'user', accessKey: 'read', handle: getLogsHistogram }),

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
  route({ method: 'POST', path: '/v1/otlp/v1/logs', auth: 'project-key', bodyLimit: 'ingest', accessKey: 'ingest', handle: postOtlpLogs }),

  // This API's own description
  route({ method: 'GET', path: '/v1/openapi.json', auth: 'none', handle: getOpenApiDocument }),

  // Prometheus metrics: 404 unless --metrics-enabled
  route({ method: 'GET', path: '/metrics', auth: 'none', handle: getMetrics }),

  // The web console: 404 when --console-enabled is off or it was never built
  route({ method: 'GET', path: '/', auth: 'none', handle: getRoot }),
  route({ method: 'ANY', path: '/console/*', auth: 'none', handle: getConsoleFile }),
];

/** The table, for callers that take it from a function. */
export function allRoutes(): readonly Route[] {
  return ROUTES;
}
