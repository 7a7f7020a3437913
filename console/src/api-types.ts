// Generated from docs/openapi.yaml by scripts/build-api-types.mjs (npm run build or npm run typecheck):
// edit the YAML, not this file. To regenerate alone: node scripts/build-api-types.mjs
/** The schemas of the HTTP API (`components.schemas` of the OpenAPI document), as TypeScript types. */

export type Id = number;

/** A server time, UTC with exactly three fraction digits. */
export type Timestamp = string;

/**
 * A date-time as log entries and the `from`/`to` filters accept it:
 * `YYYY-MM-DD[T ]HH:MM[:SS[.fraction]]` followed by `Z`, `±HH:MM` or
 * nothing (meaning UTC). Impossible dates and times are refused;
 * fractions beyond milliseconds are truncated.
 */
export type EntryTimestamp = string;

export type InstantParameter = EntryTimestamp;

export type Level = 'debug' | 'info' | 'warning' | 'error' | 'critical';

export type Role = 'admin' | 'owner' | 'user';

export type SubjectType = 'user' | 'team';

export type ScopeType = 'global' | 'group' | 'project';

export type Page<T = unknown> = {
  items: T[];
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
};

/**
 * Every machine code the service answers with, and its status:
 *
 * | code | status | meaning |
 * |---|---|---|
 * | invalid_request | 400 | A malformed request: body, query, path id or form. |
 * | unsupported_grant_type | 400 | `grant_type` is not `password`, `refresh_token` or `authorization_code`. |
 * | invalid_grant | 400, 401 | 400: wrong credentials or a dead refresh token at the token endpoint. 401: the password confirming a change of your own account is wrong. |
 * | self_deletion_requires_me | 400 | An administrator deleting themself by id. |
 * | unauthorized | 401 | No valid credential of the kind the route takes. |
 * | forbidden | 403 | The caller's roles do not allow this. |
 * | project_blocked | 403 | The project is blocked. |
 * | cannot_delete_primary_admin | 403 | The primary administrator cannot be deleted. |
 * | must_change_password | 403 | The caller must change their password first. |
 * | not_found | 404 | No such resource (or one the caller may not see), or no such route. |
 * | request_timeout | 408 | The request stopped arriving. |
 * | username_taken | 409 | The username belongs to another account. |
 * | email_taken | 409 | The email belongs to another account. |
 * | sole_group_owner | 409 | A group would be left without an owner. |
 * | deleted_account | 409 | The account is deleted. |
 * | identity_taken | 409 | The provider's subject is linked to an account already. |
 * | payload_too_large | 413 | The body is over the limit. |
 * | unsupported_media_type | 415 | The body's Content-Encoding is not one the service decodes. |
 * | too_many_requests | 429 | Rate limited, or too many live streams. |
 * | internal_error | 500 | An unexpected failure. |
 * | temporarily_unavailable | 503 | Password hashing is saturated. |
 *
 * `x-status-by-code` gives the same statuses as data: a number, or a
 * list when a code has more than one status (the usual one first).
 */
export type ErrorCode = 'invalid_request' | 'unsupported_grant_type' | 'invalid_grant' | 'self_deletion_requires_me' | 'unauthorized' | 'forbidden' | 'project_blocked' | 'cannot_delete_primary_admin' | 'must_change_password' | 'not_found' | 'request_timeout' | 'username_taken' | 'email_taken' | 'sole_group_owner' | 'deleted_account' | 'identity_taken' | 'payload_too_large' | 'unsupported_media_type' | 'too_many_requests' | 'internal_error' | 'temporarily_unavailable';

/** The general error envelope. */
export type Error = {
  error: ErrorCode;
  /** Human-readable text; do not parse it. */
  message: string;
  details?: Record<string, unknown>;
};

/** Which field is at fault, and why. */
export type FieldDetails = {
  /** A body field (dotted for nested ones), query parameter, path parameter or header name. */
  field: string;
  reason: 'required' | 'invalid' | 'too_short' | 'too_long' | 'unknown';
  /** With `too_short`, the least number of characters. */
  min_length?: number;
  /** With `too_long`, the most characters. */
  max_length?: number;
  /** With `too_long` on a password, the most UTF-8 bytes. */
  max_bytes?: number;
};

export type InvalidRequestError = Error & {
  error?: 'invalid_request';
  details?: FieldDetails;
};

export type ErrorBadRequestOrSelfDeletion = Error & {
  error?: 'invalid_request' | 'self_deletion_requires_me';
};

export type ErrorUnauthorized = Error & {
  error?: 'unauthorized';
};

export type ErrorUnauthorizedOrWrongPassword = Error & {
  error?: 'unauthorized' | 'invalid_grant';
};

export type ErrorForbidden = Error & {
  error?: 'forbidden' | 'must_change_password';
};

export type ErrorMustChangePassword = Error & {
  error?: 'must_change_password';
};

export type ErrorMustChangePasswordOrAccessKey = Error & {
  error?: 'must_change_password' | 'forbidden';
};

export type ErrorForbiddenOrPrimaryAdmin = Error & {
  error?: 'forbidden' | 'must_change_password' | 'cannot_delete_primary_admin';
};

export type ErrorCannotDeletePrimaryAdmin = Error & {
  error?: 'cannot_delete_primary_admin';
};

export type ErrorLogScopeForbidden = Error & {
  error?: 'forbidden' | 'project_blocked' | 'must_change_password';
};

export type ErrorProjectBlocked = Error & {
  error?: 'project_blocked';
};

export type ErrorNotFound = Error & {
  error?: 'not_found';
};

export type ErrorRequestTimeout = Error & {
  error?: 'request_timeout';
};

export type ErrorTaken = Error & {
  error?: 'username_taken' | 'email_taken';
};

export type ErrorIdentityTaken = Error & {
  error?: 'identity_taken';
};

/** A user's link to a subject of the OpenID provider. */
export type Identity = {
  id: Id;
  user_id: Id;
  issuer: string;
  subject: string;
  created_at: Timestamp;
  last_login_at: Timestamp | null;
  /** The provider groups of the last sign-in; null before it. */
  groups: string[] | null;
};

export type GroupTeamPair = {
  provider_group: string;
  team_id: Id;
};

export type GroupTeamMapping = {
  /** The operator's pairs (`--oidc-group-teams`), read-only here. */
  configured: GroupTeamPair[];
  /** The pairs administrators set. */
  items: GroupTeamPair[];
};

export type ErrorDeletedAccount = Error & {
  error?: 'deleted_account';
};

export type ErrorSoleGroupOwner = Error & {
  error?: 'sole_group_owner';
  details: {
    blocking_groups: {
      id: Id;
      name: string;
    }[];
  };
};

export type ErrorPayloadTooLarge = Error & {
  error?: 'payload_too_large';
};

export type ErrorUnsupportedMediaType = Error & {
  error?: 'unsupported_media_type';
};

export type ErrorTooManyRequests = Error & {
  error?: 'too_many_requests';
};

export type ErrorTemporarilyUnavailable = Error & {
  error?: 'temporarily_unavailable';
};

export type ErrorInternal = Error & {
  error?: 'internal_error';
};

/** The token endpoint's error envelope (RFC 6749 §5.2). */
export type OAuthError = {
  error: 'invalid_request' | 'unsupported_grant_type' | 'invalid_grant' | 'payload_too_large' | 'temporarily_unavailable';
  error_description: string;
};

export type TokenRequest = {
  grant_type: 'password' | 'refresh_token' | 'authorization_code';
  /** With `authorization_code`; the one-time code single sign-on handed the console. */
  code?: string;
  /** With `password`. A username over 200 characters never matches. */
  username?: string;
  /** With `password`. */
  password?: string;
  /** With `refresh_token`. */
  refresh_token?: string;
};

export type RevokeRequest = {
  refresh_token: string;
};

export type TokenResponse = {
  /** A JWT with the claims `iss`, `sub` (the user id), `iat`, `exp`, `jti`, `preferred_username`, `tv` and `roles` (the caller's effective grants). */
  access_token: string;
  /** Opaque; single use (each refresh rotates it). */
  refresh_token: string;
  token_type: 'Bearer';
  /** Seconds until the access token expires (900). */
  expires_in: number;
  /** Seconds until the refresh token expires (2592000). */
  refresh_expires_in: number;
};

/** At least 8 characters and at most 72 bytes in UTF-8 (checked when a password is chosen, never at login). */
export type Password = string;

export type ChangePasswordRequest = {
  current_password: string;
  new_password: Password;
};

export type DeleteOwnAccountRequest = {
  password: string;
};

export type User = {
  id: Id;
  /** Unique, the login identifier; stays taken after deletion. */
  username: string;
  display_name: string | null;
  /** A contact, never a login identifier; unique, stays taken after deletion. */
  email: string | null;
  /** Always null without an email; reset when an administrator changes the email. */
  email_verified_at: Timestamp | null;
  /** True whenever someone other than the owner set the password. */
  must_change_password: boolean;
  /** False while blocked (and once deleted). */
  is_active: boolean;
  deleted_at: Timestamp | null;
  /** True on at most one user, ever. */
  is_primary_admin: boolean;
  created_at: Timestamp;
};

export type UserPage = Page<User>;

export type NewUser = {
  /** 1 to 128 characters, no control characters. */
  username: string;
  password: Password;
  display_name?: string | null;
  /** Something of the shape `a@b`, at most 254 characters. */
  email?: string | null;
};

export type UserPatch = {
  email?: string | null;
  display_name?: string | null;
  password?: Password;
};

/** 1 to 200 characters. */
export type Name = string;

export type NameRequest = {
  name: Name;
};

export type Group = {
  id: Id;
  name: string;
  created_at: Timestamp;
};

export type GroupPage = Page<Group>;

export type Team = {
  id: Id;
  group_id: Id;
  name: string;
  created_at: Timestamp;
};

export type TeamList = {
  items: Team[];
};

export type TeamMember = {
  user_id: Id;
  username: string;
};

export type TeamMemberList = {
  items: TeamMember[];
};

export type NewTeamMember = {
  user_id: Id;
};

/** Days entries are kept, counted from when the service received them. */
export type RetentionDays = number;

/** A ceiling, or null for none. */
export type Quota = number | null;

/** What every answer about a project holds. */
export type ProjectFields = {
  id: Id;
  group_id: Id;
  name: string;
  retention_days: RetentionDays;
  max_entries: Quota;
  max_bytes: Quota;
  is_blocked: boolean;
  created_at: Timestamp;
};

/** A project, without usage counters (every answer but `GET /v1/projects/{id}`). */
export type Project = ProjectFields;

export type ProjectWithUsage = ProjectFields & {
  /** Entries stored now. */
  entry_count: number;
  /** Their size, each counted as the UTF-8 length of its compact JSON. */
  total_bytes: number;
};

export type ProjectPage = Page<Project>;

/**
 * Filters of `GET /v1/logs` as a query string (`level`, `from`, `to`,
 * `q`, `category`, `logger`, the correlation ids, `context.<path>`),
 * at most 4,096 characters; `''` matches every entry of the scope.
 */
export type SavedQuery = string;

export type SavedSearch = {
  id: Id;
  name: string;
  /** The project searched, or null for a group's search. */
  project_id: Id | null;
  /** The group searched (every unblocked project of it), or null for a project's search. */
  group_id: Id | null;
  query: SavedQuery;
  author_user_id: Id;
  /** Whether you may rename, change or delete it (its author, owners of its project or group, administrators). */
  can_change: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type SavedSearchPage = Page<SavedSearch>;

/** Seconds, 60 to 86,400. */
export type AlertPeriod = number;

export type AlertRule = {
  id: Id;
  saved_search_id: Id;
  name: string;
  kind: 'any_match' | 'threshold';
  /** any_match only (null otherwise). */
  quiet_seconds: AlertPeriod | null;
  /** threshold only (null otherwise). */
  window_seconds: AlertPeriod | null;
  /** threshold only (null otherwise); 1 to 1,000,000. */
  threshold: number | null;
  enabled: boolean;
  author_user_id: Id;
  /**
   * `firing` from a notification until the rule is quiet again (any_match:
   * a quiet period without matches; threshold: resolved); `ok` otherwise.
   */
  state: 'ok' | 'firing';
  state_since: Timestamp;
  /**
   * Why an enabled rule cannot notify now, or null: `project_blocked`
   * (its project is blocked) or `author_lost_access` (its author is
   * blocked, deleted or may no longer read the search's scope).
   */
  paused_reason: 'project_blocked' | 'author_lost_access' | null;
  /** Where notifications go, or null (they are only recorded). */
  destination: AlertDestination | null;
  /** Whether you may change or delete it (owners of the group, administrators). */
  can_change: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type AlertRulePage = Page<AlertRule>;

export type NewAlertRule = {
  saved_search_id: Id;
  name: Name;
  kind: 'any_match' | 'threshold';
  /** Required for any_match, refused for threshold. */
  quiet_seconds?: AlertPeriod | null;
  /** Required for threshold, refused for any_match. */
  window_seconds?: AlertPeriod | null;
  /** Required for threshold, refused for any_match. */
  threshold?: number | null;
  enabled?: boolean;
  /** Where notifications go; null or absent, they are only recorded. In a PATCH, replaces the destination (a webhook gets a new secret). */
  destination?: NewAlertDestination | null;
};

export type AlertRulePatch = {
  name?: Name;
  quiet_seconds?: AlertPeriod | null;
  window_seconds?: AlertPeriod | null;
  threshold?: number | null;
  enabled?: boolean;
  /** Where notifications go; null or absent, they are only recorded. In a PATCH, replaces the destination (a webhook gets a new secret). */
  destination?: NewAlertDestination | null;
};

export type AlertDestination = {
  type: 'webhook' | 'slack' | 'email';
  /** A webhook's URL without its query, a Slack URL's origin only (the URL is its credential), or the e-mail addresses. */
  label: string;
  /**
   * A webhook's signing secret (`whsec_…`), only in the answer that
   * set the destination: it is never shown again. Each delivery
   * carries `X-Logkeep-Signature: t=<unix seconds>,v1=<hex
   * HMAC-SHA256 of "<t>.<body>" keyed with it>`.
   */
  secret?: string;
};

/**
 * `webhook` (JSON, signed) and `slack` (an incoming-webhook URL) take
 * `url`, http or https without credentials; a host that is, or
 * resolves to, a loopback, private, link-local or metadata address is
 * refused unless the operator allows it. `email` takes `to`, 1 to 10
 * addresses, and needs an SMTP server configured.
 */
export type NewAlertDestination = {
  type: 'webhook' | 'slack' | 'email';
  url?: string;
  to?: string[];
};

export type AlertNotification = {
  id: Id;
  rule_id: Id;
  /**
   * `fired`: the first match (any_match) or the threshold reached;
   * `repeated`: the matches of a quiet period after a notification
   * (any_match); `resolved`: the count fell back below the threshold.
   */
  kind: 'fired' | 'repeated' | 'resolved';
  window_start: Timestamp;
  window_end: Timestamp;
  /** Entries that matched in the window (threshold), or since the last notification (any_match). */
  count: number;
  /** The first 10 matching entries, as `GET /v1/logs` answers them (none for `resolved`). */
  entries: LogEntry[];
  created_at: Timestamp;
  delivery: AlertDelivery;
};

/**
 * `none`: the rule had no destination. `pending`: not delivered yet
 * (retried with doubling waits from 5 seconds). `delivered`. `failed`:
 * given up an hour after the notification, or at once when the
 * destination can no longer be read.
 */
export type AlertDelivery = {
  state: 'none' | 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** When a pending delivery is tried again, or null. */
  next_attempt_at: Timestamp | null;
  /** The last failure in words (never a URL or secret), or null. */
  last_error: string | null;
  delivered_at: Timestamp | null;
};

export type AlertNotificationPage = Page<AlertNotification>;

/** Exactly one of `project_id` and `group_id`. */
export type NewSavedSearch = {
  name: Name;
  project_id?: Id | null;
  group_id?: Id | null;
  query?: SavedQuery;
};

export type SavedSearchPatch = {
  name?: Name;
  query?: SavedQuery;
};

export type NewProject = {
  name: Name;
  retention_days: RetentionDays;
  max_entries?: Quota;
  max_bytes?: Quota;
};

export type ProjectPatch = {
  retention_days?: RetentionDays;
  max_entries?: Quota;
  max_bytes?: Quota;
};

/** What every answer about a secret key holds. */
export type SecretKeyFields = {
  id: Id;
  project_id: Id;
  label: string | null;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
};

/** A key's metadata; never the key itself, nor its hash. */
export type SecretKey = SecretKeyFields;

export type CreatedSecretKey = SecretKeyFields & {
  /** The key itself, shown this once. */
  secret: string;
};

export type SecretKeyList = {
  items: SecretKey[];
};

/**
 * `read`: `GET /v1/logs`, `GET /v1/logs/histogram` and
 * `GET /v1/projects` (what the key covers); `tail`:
 * `GET /v1/logs/stream`; `ingest`: `POST /v1/logs` and the OTLP export.
 */
export type AccessKeyPermission = 'read' | 'tail' | 'ingest';

/**
 * What a key is narrowed to: its permissions, and the projects and
 * groups it covers (a group covers the group itself and every
 * project in it). Within them the key may do what its person may do
 * at the moment of each request.
 */
export type AccessKeyScope = {
  permissions: AccessKeyPermission[];
  project_ids: Id[];
  group_ids: Id[];
};

/** What every answer about an access key holds. */
export type AccessKeyFields = {
  id: Id;
  /** Whose key it is. */
  user_id: Id;
  label: string;
  scope: AccessKeyScope;
  /** Who made it (the person, or an administrator). */
  created_by: Id;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** When it last authenticated a request, to the minute (written at most once a minute). */
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
};

/** A key's metadata; never the key itself, nor its hash. */
export type AccessKey = AccessKeyFields;

export type CreatedAccessKey = AccessKeyFields & {
  /** The key itself, shown this once. */
  secret: string;
};

export type AccessKeyList = {
  items: AccessKey[];
};

export type NewAccessKey = {
  label: string;
  /** When the key stops working; required, in the future, at most `--access-key-max-days` ahead. */
  expires_at: string;
  scope: {
    permissions: AccessKeyPermission[];
    project_ids?: Id[];
    group_ids?: Id[];
  };
  /** Whose key; the caller's own when absent (another person's for administrators only). */
  user_id?: Id;
};

export type NewSecretKey = {
  label?: string | null;
};

export type RoleAssignment = {
  id: Id;
  subject_type: SubjectType;
  subject_id: Id;
  role: Role;
  scope_type: ScopeType;
  /** Null exactly when `scope_type` is `global`. */
  scope_id: Id | null;
  created_at: Timestamp;
};

export type RoleAssignmentList = {
  items: RoleAssignment[];
};

export type NewRoleAssignment = {
  subject_type: SubjectType;
  subject_id: Id;
  role: Role;
  scope_type: ScopeType;
  /** Required unless `scope_type` is `global`; then absent or null. */
  scope_id?: Id | null;
};

/**
 * The closed set of audited actions, with the metadata each carries:
 * `user.created` {username} · `user.updated` {changed_fields} (only
 * when something changed; never a password) · `user.blocked`,
 * `user.unblocked`, `user.deleted`, `user.password_changed` {} ·
 * `user.identity_linked`, `user.identity_unlinked` {issuer, subject} ·
 * `sso.group_teams_set` {pairs} ·
 * `group.created` {name} · `team.created` {name, group_id} ·
 * `team.member_added`, `team.member_removed` {user_id; `source: oidc`
 * and no actor when the single sign-on group sync did it} ·
 * `project.created` {name, group_id, retention_days} ·
 * `project.quota_updated` {before, after}, each {retention_days,
 * max_entries, max_bytes} · `project.blocked`, `project.unblocked` {} ·
 * `secret_key.created`, `secret_key.revoked` {project_id, label} ·
 * `access_key.created`, `access_key.revoked` {user_id, label, scope,
 * expires_at} ·
 * `role_assignment.created`, `role_assignment.revoked` {role,
 * scope_type, scope_id, subject_type, subject_id} ·
 * `auth.login_succeeded` {client_ip, user_agent; `method: oidc` after
 * a single sign-on} · `auth.login_failed`
 * {reason: invalid_password, blocked or deleted, client_ip, user_agent},
 * or {unknown_user: true, client_ip, user_agent} with no actor or target
 * (the submitted username is not stored; a single sign-on adds `method:
 * oidc`, the reason `password_login_disabled` exists too, and an
 * unlinked provider subject is kept as `oidc_subject`) · `auth.logged_out`
 * {client_ip, user_agent} (only when a live refresh token was revoked) ·
 * `auth.throttled` {key_kind: ip or subject, path, client_ip}, once per
 * throttling episode · `audit.purged` {scope: admin or auth,
 * deleted_count, older_than} · `saved_search.created` {name,
 * project_id, group_id, query} · `saved_search.updated`
 * {changed_fields} · `saved_search.deleted` {name} ·
 * `alert_rule.created` {name, saved_search_id, kind, destination_type} ·
 * `alert_rule.updated` {changed_fields} · `alert_rule.deleted` {name}.
 *
 * A change and its audit row are committed together; a refused request
 * writes none, and neither does a refresh.
 */
export type AuditAction = 'user.created' | 'user.updated' | 'user.blocked' | 'user.unblocked' | 'user.deleted' | 'user.password_changed' | 'user.identity_linked' | 'user.identity_unlinked' | 'group.created' | 'team.created' | 'team.member_added' | 'team.member_removed' | 'project.created' | 'project.quota_updated' | 'project.blocked' | 'project.unblocked' | 'secret_key.created' | 'secret_key.revoked' | 'access_key.created' | 'access_key.revoked' | 'role_assignment.created' | 'role_assignment.revoked' | 'sso.group_teams_set' | 'auth.login_succeeded' | 'auth.login_failed' | 'auth.logged_out' | 'auth.throttled' | 'audit.purged' | 'saved_search.created' | 'saved_search.updated' | 'saved_search.deleted' | 'alert_rule.created' | 'alert_rule.updated' | 'alert_rule.deleted';

export type AuditLogEntry = {
  id: Id;
  /** Null when no signed-in person acted (failed or throttled logins under an unknown username, purges). */
  actor_user_id: Id | null;
  action: AuditAction;
  /** For example `user`, `project`, `role_assignment`, `auth`, `audit`. */
  target_type: string;
  target_id: Id | null;
  /** Depends on the action (see `AuditAction`). */
  metadata: Record<string, unknown>;
  created_at: Timestamp;
};

export type AuditLogPage = Page<AuditLogEntry> & {
  /** Days administrative entries are kept; null keeps them forever. */
  audit_retention_days: number | null;
  /** Days `auth.*` entries are kept; null keeps them forever. */
  auth_event_retention_days: number | null;
};

export type CorrelationValue = string | null;

/**
 * One submitted entry: any JSON object with at least `level`, `event`
 * and `timestamp`, and without the server's own keys. Every other key
 * is kept and returned exactly as sent, in its order (U+0000
 * included). See `POST /v1/logs` for the rules and their order.
 */
export type LogEntryInput = {
  id?: never;
  project_id?: never;
  received_at?: never;
  level: Level;
  event: string;
  timestamp: EntryTimestamp;
  category?: CorrelationValue;
  logger?: CorrelationValue;
  session_id?: CorrelationValue;
  request_id?: CorrelationValue;
  connection_generation?: string | number | null;
  tool_call_id?: CorrelationValue;
  message_id?: CorrelationValue;
  operation_id?: CorrelationValue;
  [key: string]: unknown;
};

/**
 * A JSON array of entries: the whole body. Elements are judged one by
 * one, so an element that breaks the entry rules is reported in
 * `rejected`, never a reason to refuse the request; only a body that is
 * not a JSON array is.
 */
export type LogBatch = LogEntryInput[];

/**
 * A stored entry: `id`, `project_id` and `received_at`, then the
 * submitted keys in their submitted order, then whichever of
 * `category`, `logger` and the six correlation fields the entry did not
 * submit, as null.
 */
export type LogEntry = {
  /** Assigned by the server; the order and cursor key. */
  id: Id;
  /** The project of the key that sent it. */
  project_id: Id;
  /** When the service received it (retention counts from here). */
  received_at: Timestamp;
  level: Level;
  event: string;
  /** As submitted. */
  timestamp: EntryTimestamp;
  category: CorrelationValue;
  logger: CorrelationValue;
  session_id: CorrelationValue;
  request_id: CorrelationValue;
  connection_generation: string | number | null;
  tool_call_id: CorrelationValue;
  message_id: CorrelationValue;
  operation_id: CorrelationValue;
  [key: string]: unknown;
};

export type LogPage = Page<LogEntry>;

export type LogHistogram = {
  /** The start of the first bucket. */
  from: Timestamp;
  /** The end of the last bucket (exclusive). */
  to: Timestamp;
  /** Every bucket's width. */
  bucket_seconds: number;
  buckets: {
    start: Timestamp;
    counts: {
      debug: number;
      info: number;
      warning: number;
      error: number;
      critical: number;
    };
  }[];
};

export type Rejection = {
  /** The entry's 0-based position in the submitted array. */
  index: number;
  error: 'validation_error' | 'quota_exceeded';
  /** The first rule the entry broke, as text. */
  message: string;
};

export type IngestionResponse = {
  /** Entries stored (and committed). */
  accepted: number;
  /**
   * The refused entries in index order, at most the first 1,000 of
   * them (`rejected_count` counts them all), so an answer stays under
   * about 150 KB whatever the body.
   */
  rejected: Rejection[];
  /**
   * Every entry refused, listed in `rejected` or not:
   * `accepted + rejected_count` is the number of elements sent.
   */
  rejected_count: number;
};
