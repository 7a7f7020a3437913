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
`;
}
