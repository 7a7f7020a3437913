/**
 * The console's audit rows in words: the console knows exactly the
 * service's actions, and every action reads as a sentence naming its actor
 * and target, with "user #12" where a name is unknown.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AUDIT_ACTIONS as SERVICE_ACTIONS } from '../../lib/audit/audit.js';
import {
  ACTION_LABELS,
  AUDIT_ACTIONS,
  auditSentence,
  describeAudit,
  retentionInWords,
  type AuditEntry,
  type NameLookup,
  type RefKind,
} from '../../console/src/audit-words.js';

const NAMES: Record<RefKind, Record<number, string>> = {
  user: { 1: 'admin', 2: 'alice', 3: 'bob' },
  group: { 5: 'acme' },
  project: { 7: 'payments' },
  team: { 9: 'oncall' },
};
const names: NameLookup = (kind, id) => NAMES[kind][id];
const nobody: NameLookup = () => undefined;

function row(action: string, fields: Partial<AuditEntry> = {}): AuditEntry {
  return { id: 1, actor_user_id: 1, action, target_type: 'user', target_id: 2, metadata: {}, created_at: '2026-01-01T00:00:00.000Z', ...fields };
}

/** One example row per action, as the service writes it, and the sentence it must read as. */
const EXAMPLES: Record<string, [AuditEntry, string]> = {
  'user.created': [row('user.created', { metadata: { username: 'alice' } }), 'admin created user alice'],
  'user.updated': [row('user.updated', { metadata: { changed_fields: ['display_name', 'email'] } }), 'admin changed the display name and email of user alice'],
  'user.blocked': [row('user.blocked'), 'admin blocked user alice'],
  'user.unblocked': [row('user.unblocked'), 'admin unblocked user alice'],
  'user.deleted': [row('user.deleted'), 'admin deleted user alice'],
  'user.password_changed': [row('user.password_changed', { actor_user_id: 2 }), 'alice changed their password'],
  'user.identity_linked': [
    row('user.identity_linked', { metadata: { issuer: 'https://idp', subject: 'a-1' } }),
    'admin linked a-1 at the provider to user alice',
  ],
  'user.identity_unlinked': [
    row('user.identity_unlinked', { metadata: { issuer: 'https://idp', subject: 'a-1' } }),
    'admin unlinked a-1 at the provider from user alice',
  ],
  'sso.group_teams_set': [
    row('sso.group_teams_set', { target_type: 'sso', target_id: null, metadata: { pairs: [] } }),
    'admin changed which provider groups feed which teams',
  ],
  'group.created': [row('group.created', { target_type: 'group', target_id: 5, metadata: { name: 'acme' } }), 'admin created group acme'],
  'team.created': [
    row('team.created', { target_type: 'team', target_id: 9, metadata: { name: 'oncall', group_id: 5 } }),
    'admin created team oncall in group acme',
  ],
  'team.member_added': [row('team.member_added', { target_type: 'team', target_id: 9, metadata: { user_id: 3 } }), 'admin added bob to team oncall'],
  'team.member_removed': [row('team.member_removed', { target_type: 'team', target_id: 9, metadata: { user_id: 3 } }), 'admin removed bob from team oncall'],
  'project.created': [
    row('project.created', { target_type: 'project', target_id: 7, metadata: { name: 'payments', group_id: 5, retention_days: 30 } }),
    'admin created project payments in group acme (entries kept 30 days)',
  ],
  'project.quota_updated': [
    row('project.quota_updated', {
      target_type: 'project',
      target_id: 7,
      metadata: { before: { retention_days: 30, max_entries: null, max_bytes: null }, after: { retention_days: 14, max_entries: 1000, max_bytes: null } },
    }),
    'admin changed the retention or quotas of project payments: retention 30 days → 14 days, entry quota none → 1,000',
  ],
  'project.blocked': [row('project.blocked', { target_type: 'project', target_id: 7 }), 'admin blocked project payments'],
  'project.unblocked': [row('project.unblocked', { target_type: 'project', target_id: 7 }), 'admin unblocked project payments'],
  'secret_key.created': [
    row('secret_key.created', { target_type: 'secret_key', target_id: 4, metadata: { project_id: 7, label: 'ci runner' } }),
    'admin created key #4 "ci runner" in project payments',
  ],
  'secret_key.revoked': [
    row('secret_key.revoked', { target_type: 'secret_key', target_id: 4, metadata: { project_id: 7, label: null } }),
    'admin revoked key #4 of project payments',
  ],
  'access_key.created': [
    row('access_key.created', {
      target_type: 'access_key',
      target_id: 6,
      metadata: { user_id: 2, label: 'ci', scope: {}, expires_at: '2027-01-01T00:00:00.000Z' },
    }),
    'admin created access key #6 "ci" for alice',
  ],
  'access_key.revoked': [
    row('access_key.revoked', { target_type: 'access_key', target_id: 6, metadata: { user_id: 3, label: null } }),
    'admin revoked access key #6 of bob',
  ],
  'role_assignment.created': [
    row('role_assignment.created', {
      target_type: 'role_assignment',
      target_id: 11,
      metadata: { role: 'owner', scope_type: 'group', scope_id: 5, subject_type: 'user', subject_id: 2 },
    }),
    'admin granted owner on group acme to alice',
  ],
  'role_assignment.revoked': [
    row('role_assignment.revoked', {
      target_type: 'role_assignment',
      target_id: 11,
      metadata: { role: 'user', scope_type: 'global', scope_id: null, subject_type: 'team', subject_id: 9 },
    }),
    'admin revoked user on everything from team oncall',
  ],
  'auth.login_succeeded': [row('auth.login_succeeded', { actor_user_id: 2, metadata: { client_ip: '127.0.0.1', user_agent: 'curl' } }), 'alice signed in'],
  'auth.login_failed': [
    row('auth.login_failed', { actor_user_id: 3, target_id: 3, metadata: { reason: 'invalid_password', client_ip: '127.0.0.1' } }),
    'login failed for bob (wrong password)',
  ],
  'auth.logged_out': [row('auth.logged_out', { actor_user_id: 2 }), 'alice signed out'],
  'auth.throttled': [
    row('auth.throttled', {
      actor_user_id: null,
      target_type: 'auth',
      target_id: null,
      metadata: { key_kind: 'ip', path: '/v1/auth/token', client_ip: '10.0.0.1' },
    }),
    'sign-in attempts throttled from one address (10.0.0.1) on /v1/auth/token',
  ],
  'audit.purged': [
    row('audit.purged', {
      actor_user_id: null,
      target_type: 'audit',
      target_id: null,
      metadata: { scope: 'auth', deleted_count: 12, older_than: '2025-12-01T00:00:00.000Z' },
    }),
    'retention deleted 12 sign-in audit rows older than 2025-12-01T00:00:00.000Z',
  ],
  'saved_search.created': [
    row('saved_search.created', {
      target_type: 'saved_search',
      target_id: 4,
      metadata: { name: 'Disk errors', project_id: 7, group_id: null, query: 'q=disk' },
    }),
    'admin saved the search "Disk errors" on project payments',
  ],
  'saved_search.updated': [
    row('saved_search.updated', { target_type: 'saved_search', target_id: 4, metadata: { changed_fields: ['name', 'query'] } }),
    'admin changed the name and filters of saved search #4',
  ],
  'saved_search.deleted': [
    row('saved_search.deleted', { target_type: 'saved_search', target_id: 4, metadata: { name: 'Disk errors' } }),
    'admin deleted the saved search "Disk errors"',
  ],
  'alert_rule.created': [
    row('alert_rule.created', { target_type: 'alert_rule', target_id: 8, metadata: { name: 'Page me', saved_search_id: 4, kind: 'threshold' } }),
    'admin created the threshold alert rule "Page me" on saved search #4',
  ],
  'alert_rule.updated': [
    row('alert_rule.updated', { target_type: 'alert_rule', target_id: 8, metadata: { changed_fields: ['enabled', 'window_seconds'] } }),
    'admin changed the enabled and window seconds of alert rule #8',
  ],
  'alert_rule.deleted': [
    row('alert_rule.deleted', { target_type: 'alert_rule', target_id: 8, metadata: { name: 'Page me' } }),
    'admin deleted the alert rule "Page me"',
  ],
};

describe('audit rows in words', () => {
  it('knows exactly the actions the service writes, each with a label and an example', () => {
    assert.deepEqual([...AUDIT_ACTIONS], [...SERVICE_ACTIONS]);
    assert.deepEqual(Object.keys(ACTION_LABELS).sort(), [...SERVICE_ACTIONS].sort());
    assert.deepEqual(Object.keys(EXAMPLES).sort(), [...SERVICE_ACTIONS].sort());
  });

  for (const action of SERVICE_ACTIONS) {
    it(`reads ${action} as a sentence`, () => {
      const [entry, sentence] = EXAMPLES[action]!;
      assert.equal(auditSentence(entry, names), sentence);
    });
  }

  it('names unknown or deleted people and things by kind and id, and marks them as unknown', () => {
    assert.equal(auditSentence(EXAMPLES['project.blocked']![0], nobody), 'user #1 blocked project #7');
    const parts = describeAudit(EXAMPLES['project.blocked']![0], nobody);
    assert.deepEqual(parts[0], { kind: 'user', id: 1, name: 'user #1', known: false });
    // A name carried by the row itself is used when no lookup knows it.
    assert.equal(auditSentence(EXAMPLES['user.created']![0], nobody), 'user #1 created user alice');
    assert.equal(auditSentence(EXAMPLES['group.created']![0], nobody), 'user #1 created group acme');
  });

  it('links the actor and target as references', () => {
    const parts = describeAudit(EXAMPLES['project.blocked']![0], names);
    assert.deepEqual(
      parts.filter((p) => typeof p !== 'string'),
      [
        { kind: 'user', id: 1, name: 'admin', known: true },
        { kind: 'project', id: 7, name: 'payments', known: true },
      ],
    );
  });

  it('tells the variants of a failed login, a password reset and a self-deletion apart', () => {
    assert.equal(
      auditSentence(row('auth.login_failed', { actor_user_id: null, target_id: null, metadata: { unknown_user: true } }), names),
      'login failed for an unknown username',
    );
    assert.equal(
      auditSentence(row('auth.login_failed', { actor_user_id: 3, target_id: 3, metadata: { reason: 'blocked' } }), names),
      'login failed for bob (the account is blocked)',
    );
    assert.equal(
      auditSentence(row('user.updated', { metadata: { changed_fields: ['password'] } }), names),
      'admin set a new temporary password for user alice',
    );
    assert.equal(auditSentence(row('user.deleted', { actor_user_id: 2 }), names), 'alice deleted their own account');
    assert.equal(auditSentence(row('user.password_changed'), names), 'admin changed the password of alice');
  });

  it('says the retention policy in words', () => {
    assert.equal(
      retentionInWords(365, 30),
      'Administration rows are deleted after 365 days; sign-in rows (signed in, failed, signed out, throttled) are deleted after 30 days.',
    );
    assert.equal(
      retentionInWords(null, 1),
      'Administration rows are kept forever; sign-in rows (signed in, failed, signed out, throttled) are deleted after 1 day.',
    );
  });
});
