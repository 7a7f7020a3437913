/**
 * The authorization predicates alone: who sees, who manages, who may grant
 * what where, and that list-query visibility agrees with the
 * per-resource predicates for any set of grants.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  canManageGroup,
  canManageProject,
  canSeeGroup,
  canSeeProject,
  isAdmin,
  mayGrant,
  mayGrantAnything,
  mayChangeTeamMembers,
  mayGrantRoleAtScopeType,
  ownedGroupIds,
  roleAssignmentListScope,
  seesNothing,
  visibilityOf,
} from '../../lib/auth/rbac.js';
import type { Role, RoleGrant, ScopeType } from '../../lib/storage/types-org.js';

const g = (role: Role, scope_type: ScopeType, scope_id: number | null = null): RoleGrant => ({ role, scope_type, scope_id });

const ADMIN = [g('admin', 'global')];
const GLOBAL_OWNER = [g('owner', 'global')];
const GLOBAL_USER = [g('user', 'global')];
const OWNER_OF_1 = [g('owner', 'group', 1)];
const USER_OF_1 = [g('user', 'group', 1)];
const USER_OF_P10 = [g('user', 'project', 10)];
const OWNER_OF_P10 = [g('owner', 'project', 10)];
const P10 = { id: 10, groupId: 1 };
const P20 = { id: 20, groupId: 2 };

describe('rbac: seeing', () => {
  it('a global grant of any role sees every group and project', () => {
    for (const grants of [ADMIN, GLOBAL_OWNER, GLOBAL_USER]) {
      assert.equal(canSeeGroup(grants, 7), true);
      assert.equal(canSeeProject(grants, P20), true);
      assert.deepEqual(visibilityOf(grants), { all: true });
    }
  });

  it('a group grant sees the group and its projects, not other groups', () => {
    for (const grants of [OWNER_OF_1, USER_OF_1]) {
      assert.equal(canSeeGroup(grants, 1), true);
      assert.equal(canSeeGroup(grants, 2), false);
      assert.equal(canSeeProject(grants, P10), true);
      assert.equal(canSeeProject(grants, P20), false);
    }
  });

  it('a project grant sees that project only, never its group', () => {
    assert.equal(canSeeProject(USER_OF_P10, P10), true);
    assert.equal(canSeeProject(USER_OF_P10, { id: 11, groupId: 1 }), false);
    assert.equal(canSeeGroup(USER_OF_P10, 1), false);
    assert.deepEqual(visibilityOf(USER_OF_P10), { all: false, groupIds: [], projectIds: [10] });
  });

  it('no grant sees nothing', () => {
    assert.equal(canSeeGroup([], 1), false);
    assert.equal(canSeeProject([], P10), false);
    assert.equal(seesNothing(visibilityOf([])), true);
    assert.equal(seesNothing(visibilityOf(USER_OF_P10)), false);
  });

  it('visibilityOf deduplicates and sorts the ids', () => {
    const v = visibilityOf([g('user', 'group', 3), g('owner', 'group', 1), g('user', 'group', 3), g('user', 'project', 9), g('owner', 'project', 9)]);
    assert.deepEqual(v, { all: false, groupIds: [1, 3], projectIds: [9] });
  });

  it('list visibility agrees with canSeeGroup and canSeeProject for any grants', () => {
    const grant = fc
      .record({
        role: fc.constantFrom<Role>('admin', 'owner', 'user'),
        scope_type: fc.constantFrom<ScopeType>('global', 'group', 'project'),
        id: fc.integer({ min: 1, max: 6 }),
      })
      .map(({ role, scope_type, id }) => g(role, scope_type, scope_type === 'global' ? null : id));
    fc.assert(
      fc.property(fc.array(grant, { maxLength: 6 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), (grants, groupId, projectId) => {
        const v = visibilityOf(grants);
        const project = { id: projectId, groupId };
        const listedGroup = v.all || v.groupIds.includes(groupId);
        const listedProject = v.all || v.groupIds.includes(groupId) || v.projectIds.includes(projectId);
        assert.equal(listedGroup, canSeeGroup(grants, groupId));
        assert.equal(listedProject, canSeeProject(grants, project));
        // Whoever may manage a thing can see it.
        if (canManageGroup(grants, groupId)) assert.equal(canSeeGroup(grants, groupId), true);
        if (canManageProject(grants, project)) assert.equal(canSeeProject(grants, project), true);
      }),
    );
  });
});

describe('rbac: managing', () => {
  it('admin, a global owner and the group owner manage a group; users do not', () => {
    assert.equal(canManageGroup(ADMIN, 1), true);
    assert.equal(canManageGroup(GLOBAL_OWNER, 1), true);
    assert.equal(canManageGroup(OWNER_OF_1, 1), true);
    assert.equal(canManageGroup(OWNER_OF_1, 2), false);
    assert.equal(canManageGroup(GLOBAL_USER, 1), false);
    assert.equal(canManageGroup(USER_OF_1, 1), false);
    assert.equal(canManageGroup(OWNER_OF_P10, 1), false);
  });

  it('a project is managed by its group managers and by an owner of that project', () => {
    assert.equal(canManageProject(OWNER_OF_1, P10), true);
    assert.equal(canManageProject(OWNER_OF_1, P20), false);
    assert.equal(canManageProject(OWNER_OF_P10, P10), true);
    assert.equal(canManageProject(OWNER_OF_P10, { id: 11, groupId: 1 }), false);
    assert.equal(canManageProject(USER_OF_P10, P10), false);
    assert.equal(canManageProject(USER_OF_1, P10), false);
  });

  it('only a global admin grant is admin; a global owner is not', () => {
    assert.equal(isAdmin(ADMIN), true);
    assert.equal(isAdmin(GLOBAL_OWNER), false);
    assert.equal(isAdmin([g('admin', 'group', 1)]), false);
  });
});

describe('rbac: granting (role-assignment rules)', () => {
  const user = { type: 'user' } as const;
  const teamOf = (groupId: number) => ({ type: 'team', groupId }) as const;
  const group1 = { type: 'group', groupId: 1 } as const;
  const project10 = { type: 'project', projectId: 10, groupId: 1 } as const;
  const group2 = { type: 'group', groupId: 2 } as const;
  const global = { type: 'global' } as const;

  it('admin may grant any role at any scope to anyone', () => {
    for (const role of ['admin', 'owner', 'user'] as const) {
      for (const scope of [global, group1, project10, group2]) {
        assert.equal(mayGrant(ADMIN, role, scope, user), true);
        assert.equal(mayGrant(ADMIN, role, scope, teamOf(3)), true);
      }
    }
  });

  it('a group owner grants owner or user inside its group and its projects only', () => {
    assert.equal(mayGrant(OWNER_OF_1, 'owner', group1, user), true);
    assert.equal(mayGrant(OWNER_OF_1, 'user', project10, user), true);
    assert.equal(mayGrant(OWNER_OF_1, 'admin', group1, user), false);
    assert.equal(mayGrant(OWNER_OF_1, 'user', group2, user), false);
    assert.equal(mayGrant(OWNER_OF_1, 'user', global, user), false);
  });

  it('a team subject must belong to the scope group unless the caller is admin', () => {
    assert.equal(mayGrant(OWNER_OF_1, 'user', group1, teamOf(1)), true);
    assert.equal(mayGrant(OWNER_OF_1, 'user', project10, teamOf(1)), true);
    assert.equal(mayGrant(OWNER_OF_1, 'user', group1, teamOf(2)), false);
    assert.equal(mayGrant(GLOBAL_OWNER, 'user', group1, teamOf(2)), false);
  });

  it('a global owner grants owner or user in every group, but nothing at global scope and never admin', () => {
    assert.equal(mayGrant(GLOBAL_OWNER, 'owner', group2, user), true);
    assert.equal(mayGrant(GLOBAL_OWNER, 'user', project10, user), true);
    assert.equal(mayGrant(GLOBAL_OWNER, 'user', global, user), false);
    assert.equal(mayGrant(GLOBAL_OWNER, 'admin', group2, user), false);
  });

  it('users and project owners grant nothing', () => {
    for (const grants of [GLOBAL_USER, USER_OF_1, USER_OF_P10, OWNER_OF_P10, []]) {
      assert.equal(mayGrantAnything(grants), false);
      assert.equal(mayGrant(grants, 'user', project10, user), false);
    }
    assert.equal(mayGrantAnything(OWNER_OF_1), true);
    assert.equal(mayGrantAnything(GLOBAL_OWNER), true);
  });

  it('the role and scope-type rule alone: admin role and global scope are admin-only', () => {
    assert.equal(mayGrantRoleAtScopeType(OWNER_OF_1, 'admin', 'global'), false);
    assert.equal(mayGrantRoleAtScopeType(OWNER_OF_1, 'owner', 'global'), false);
    assert.equal(mayGrantRoleAtScopeType(OWNER_OF_1, 'owner', 'project'), true);
    assert.equal(mayGrantRoleAtScopeType(ADMIN, 'admin', 'global'), true);
  });
});

describe('rbac: listing role assignments', () => {
  it('admin and a global owner list all, group owners their groups, others nothing', () => {
    assert.deepEqual(roleAssignmentListScope(ADMIN), { all: true });
    assert.deepEqual(roleAssignmentListScope(GLOBAL_OWNER), { all: true });
    assert.deepEqual(roleAssignmentListScope([...OWNER_OF_1, g('owner', 'group', 5), g('user', 'group', 7)]), { all: false, groupIds: [1, 5] });
    assert.equal(roleAssignmentListScope(USER_OF_1), null);
    assert.equal(roleAssignmentListScope(OWNER_OF_P10), null);
    assert.equal(roleAssignmentListScope([]), null);
  });

  it('ownedGroupIds lists group-scope owner grants once each', () => {
    assert.deepEqual(ownedGroupIds([g('owner', 'group', 4), g('owner', 'group', 4), g('owner', 'project', 9), g('user', 'group', 2)]), [4]);
  });
});

describe('team members', () => {
  const inGroup1 = { type: 'group' as const, groupId: 1 };
  it('a group owner may change the members of a team holding only what the owner could grant it', () => {
    assert.equal(mayChangeTeamMembers(OWNER_OF_1, 1, []), true);
    assert.equal(
      mayChangeTeamMembers(OWNER_OF_1, 1, [
        { role: 'owner', scope: inGroup1 },
        { role: 'user', scope: { type: 'project', projectId: 5, groupId: 1 } },
      ]),
      true,
    );
  });

  it('but not of a team holding admin, a global grant, a grant elsewhere, or one whose scope is gone', () => {
    const owner = [...OWNER_OF_1, g('owner', 'group', 2)];
    for (const held of [
      { role: 'admin' as const, scope: { type: 'global' as const } },
      { role: 'user' as const, scope: { type: 'global' as const } },
      { role: 'owner' as const, scope: { type: 'group' as const, groupId: 3 } },
      // Group 2 is the caller's too, but a team of group 1 could not be given it.
      { role: 'owner' as const, scope: { type: 'group' as const, groupId: 2 } },
      { role: 'user' as const, scope: { type: 'project' as const, projectId: 7, groupId: 3 } },
      { role: 'user' as const, scope: null },
    ]) {
      assert.equal(mayChangeTeamMembers(owner, 1, [{ role: 'user', scope: inGroup1 }, held]), false, JSON.stringify(held));
      assert.equal(mayChangeTeamMembers(GLOBAL_OWNER, 1, [held]), false, `global owner: ${JSON.stringify(held)}`);
      assert.equal(mayChangeTeamMembers(ADMIN, 1, [held]), true, `admin: ${JSON.stringify(held)}`);
    }
  });
});
