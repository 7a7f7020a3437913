/**
 * The single-sign-on tables (version 4), the same in both backends but for
 * their type names (see `SchemaDialect`). `user_identities` links a user to
 * an OpenID provider's subject (never to an e-mail); `sso_login_codes` holds
 * the one-time codes the console exchanges for tokens, by hash;
 * `sso_group_teams` is the group-to-team mapping administrators set;
 * `sso_team_members` the memberships the sync made; `break_glass_accounts`
 * lists the accounts made outside the API, which keep their passwords when
 * password sign-in is off (each backend fills it in its own SQL).
 */
import type { SchemaDialect } from './schema-v1.js';

export function ssoTables(d: SchemaDialect): string {
  const { id, int64 } = d;
  return `
CREATE TABLE user_identities (
  id ${id},
  user_id ${int64} NOT NULL REFERENCES users (id),
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  created_at ${int64} NOT NULL,
  last_login_at ${int64} NULL,
  groups_json TEXT NULL,
  admin_grant_id ${int64} NULL,
  ${d.named('user_identities_issuer_subject_key')}UNIQUE (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);
CREATE TABLE sso_login_codes (
  code_hash TEXT PRIMARY KEY,
  user_id ${int64} NOT NULL REFERENCES users (id),
  created_at ${int64} NOT NULL,
  expires_at ${int64} NOT NULL
);
CREATE INDEX sso_login_codes_expires ON sso_login_codes (expires_at);
CREATE TABLE sso_group_teams (
  provider_group TEXT NOT NULL,
  team_id ${int64} NOT NULL REFERENCES teams (id),
  PRIMARY KEY (provider_group, team_id)
);
-- Memberships single sign-on made, so a team that leaves the mapping loses them too.
CREATE TABLE sso_team_members (
  team_id ${int64} NOT NULL REFERENCES teams (id),
  user_id ${int64} NOT NULL REFERENCES users (id),
  PRIMARY KEY (user_id, team_id)
);
CREATE TABLE break_glass_accounts (
  user_id ${int64} PRIMARY KEY REFERENCES users (id)
);
`;
}
