/**
 * The saved-search table, the same in both backends (their type names
 * differ; see `SchemaDialect`). A search's scope is a project or a group,
 * exactly one; `owner_group_id` is the group that owns the scope (the group
 * itself, or the project's group, which never changes), so who may change a
 * search and who may see it are answered from the row alone. Deleting a
 * search deletes what is built on it; projects and groups are never deleted.
 */
import type { SchemaDialect } from './schema-v1.js';

export function savedSearchTables(d: SchemaDialect): string {
  const { id, int64 } = d;
  return `
CREATE TABLE saved_searches (
  id ${id},
  name TEXT NOT NULL,
  project_id ${int64} NULL REFERENCES projects (id),
  group_id ${int64} NULL REFERENCES org_groups (id),
  owner_group_id ${int64} NOT NULL REFERENCES org_groups (id),
  query TEXT NOT NULL,
  author_user_id ${int64} NOT NULL REFERENCES users (id),
  created_at ${int64} NOT NULL,
  updated_at ${int64} NOT NULL,
  CHECK ((project_id IS NULL) <> (group_id IS NULL))
);
CREATE INDEX saved_searches_project ON saved_searches (project_id, id);
CREATE INDEX saved_searches_group ON saved_searches (group_id, id);
CREATE INDEX saved_searches_owner_group ON saved_searches (owner_group_id, id);

-- Alert rules on a saved search, with where each stands (state, the
-- any-match quiet period and what matched during it), changed by the
-- evaluation under the rule's row lock.
CREATE TABLE alert_rules (
  id ${id},
  saved_search_id ${int64} NOT NULL REFERENCES saved_searches (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('any_match', 'threshold')),
  quiet_seconds ${int64} NULL,
  window_seconds ${int64} NULL,
  threshold ${int64} NULL,
  enabled ${d.flag('enabled', true)},
  author_user_id ${int64} NOT NULL REFERENCES users (id),
  created_at ${int64} NOT NULL,
  updated_at ${int64} NOT NULL,
  state TEXT NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'firing')),
  state_since ${int64} NOT NULL,
  quiet_until ${int64} NOT NULL DEFAULT 0,
  pending_count ${int64} NOT NULL DEFAULT 0,
  pending_first_id ${int64} NULL,
  paused_reason TEXT NULL,
  -- Where notifications go: the kind, what answers show of it, and its
  -- settings sealed with a key derived from the service's secret.
  destination_type TEXT NULL CHECK (destination_type IN ('webhook', 'slack', 'email')),
  destination_label TEXT NULL,
  destination_sealed TEXT NULL
);
CREATE INDEX alert_rules_search ON alert_rules (saved_search_id, id);

-- A threshold rule's matches per second of receipt, inside its window.
CREATE TABLE alert_counts (
  rule_id ${int64} NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
  at_second ${int64} NOT NULL,
  n ${int64} NOT NULL,
  first_id ${int64} NOT NULL,
  PRIMARY KEY (rule_id, at_second)
);

-- Each notification once: one row per rule, kind and window.
CREATE TABLE alert_notifications (
  id ${id},
  rule_id ${int64} NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('fired', 'repeated', 'resolved')),
  window_start ${int64} NOT NULL,
  window_end ${int64} NOT NULL,
  match_count ${int64} NOT NULL,
  entries TEXT NOT NULL,
  created_at ${int64} NOT NULL,
  -- Delivery: 'none' without a destination; 'pending' until it is
  -- delivered or given up ('failed'). One process at a time holds it
  -- (lease_until) while sending.
  delivery_state TEXT NOT NULL CHECK (delivery_state IN ('none', 'pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at ${int64} NOT NULL DEFAULT 0,
  lease_until ${int64} NOT NULL DEFAULT 0,
  last_error TEXT NULL,
  delivered_at ${int64} NULL,
  ${d.named('alert_notifications_window_key')}UNIQUE (rule_id, kind, window_start)
);
CREATE INDEX alert_notifications_rule ON alert_notifications (rule_id, id);
CREATE INDEX alert_notifications_pending ON alert_notifications (delivery_state, next_attempt_at);
`;
}
