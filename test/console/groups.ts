/**
 * Groups, teams and role assignments in a real Chromium, on both backends:
 * an admin creates a group and a team, adds a member found by username,
 * grants and revokes roles (each revoke confirmed by name); a group owner
 * manages only their group and is never offered `admin` or global scope; a
 * plain user sees no administration; the sole-owner refusal names the group.
 * axe-core checks each page on the way.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import type { BackendName } from '../support/backends.js';
import { api } from '../support/service.js';
import { ADMIN_FINAL_PASSWORD, addMember, createActor, createGroup, createProject, createTeam, grant, signInAdmin } from '../support/actors.js';
import { assertAccessible, screenshot } from '../support/browser.js';
import { consoleSuite, inPage, signInAs, type ConsoleEnv } from '../support/console.js';

/** One backend per test file (groups-file, groups-server), as the other console suites do. */
export function groupsSuite(backend: BackendName): void {
  consoleSuite('console groups and roles', backend, groups);
}

const navLinks = (page: Page) => page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
const optionsOf = (select: Locator) => select.locator('option').allTextContents();
/** Waits (up to 5 s) for a select to offer exactly these options: lists fill in after a search answers. */
async function optionsBecome(select: Locator, expected: string[]): Promise<void> {
  for (let tries = 0; ; tries++) {
    const seen = await optionsOf(select);
    if (JSON.stringify(seen) === JSON.stringify(expected)) return;
    if (tries >= 50) assert.deepEqual(seen, expected);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const idInUrl = (page: Page) => Number(new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('id'));

function groups(env: ConsoleEnv): void {
  it('an admin creates a group and a team, adds a member by search, grants roles and revokes one after a question naming it', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const erin = await createActor(env.svc.url, admin.token, 'erin');
      const frank = await createActor(env.svc.url, admin.token, 'frank');
      await page.goto(`${env.svc.url}/console/`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);

      await page.getByRole('link', { name: 'Groups' }).click();
      await page.getByRole('heading', { name: 'Groups' }).waitFor();
      await page.getByText('You see no group.').waitFor();
      await assertAccessible(page, 'groups list');
      await page.getByLabel('Group name').fill('shop');
      await page.getByRole('button', { name: 'Create group' }).click();
      await page.getByRole('heading', { name: 'Group shop' }).waitFor();
      const groupId = idInUrl(page);
      assert.ok(groupId > 0);
      const projectId = await createProject(env.svc.url, admin.token, groupId, 'checkout');
      await page.reload();
      await page.getByRole('link', { name: 'checkout', exact: true }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'Explore checkout' }).getAttribute('href'), `#/explore?project_id=${projectId}`);

      // A team, and a member found by part of the username.
      await page.getByLabel("New team's name").fill('ops');
      await page.getByRole('button', { name: 'Create team' }).click();
      const ops = page.getByRole('region', { name: 'Team ops' });
      await ops.getByText('No members yet.').waitFor();
      await ops.getByLabel('Find user (username contains)').fill('eri');
      await ops.getByRole('button', { name: 'Search', exact: true }).click();
      await optionsBecome(ops.getByLabel('New member of ops'), ['erin']);
      await ops.getByRole('button', { name: 'Add member to ops' }).click();
      await ops.getByRole('listitem').filter({ hasText: 'erin' }).waitFor();
      const members = await api(
        env.svc.url,
        'GET',
        `/v1/teams/${(await api(env.svc.url, 'GET', `/v1/groups/${groupId}/teams`, { token: admin.token })).body.items[0].id}/members`,
        { token: admin.token },
      );
      assert.deepEqual(members.body.items, [{ user_id: erin.id, username: 'erin' }]);

      // Grants: the team reads the project; frank owns the group. Admins are offered admin and global too.
      const form = page.getByRole('region', { name: 'Grant a role' });
      await optionsBecome(form.getByLabel('Role'), ['user (reads logs)', 'owner (manages)', 'admin (everything)']);
      await optionsBecome(form.getByLabel('Scope'), ['Group shop', 'Project checkout', 'Everything (global)']);
      // `admin` exists only at global scope.
      await form.getByLabel('Role').selectOption({ label: 'admin (everything)' });
      await optionsBecome(form.getByLabel('Scope'), ['Everything (global)']);
      await form.getByLabel('Role').selectOption({ label: 'user (reads logs)' });
      await form.getByLabel('Grant to').selectOption({ label: 'A team of this group' });
      await form.getByLabel('Team').selectOption({ label: 'ops' });
      await form.getByLabel('Scope').selectOption({ label: 'Project checkout' });
      await form.getByRole('button', { name: 'Grant' }).click();
      const teamRow = page.getByRole('row', { name: 'team ops user project checkout' });
      await teamRow.waitFor();
      await form.getByLabel('Grant to').selectOption({ label: 'A user' });
      await form.getByLabel('Find user (username contains)').fill('frank');
      await form.getByRole('button', { name: 'Search', exact: true }).click();
      await form.getByLabel('User', { exact: true }).locator('option', { hasText: 'frank' }).waitFor({ state: 'attached' });
      await form.getByLabel('Role').selectOption({ label: 'owner (manages)' });
      await form.getByLabel('Scope').selectOption({ label: 'Group shop' });
      await form.getByRole('button', { name: 'Grant' }).click();
      const frankRow = page.getByRole('row', { name: 'user frank owner group shop' });
      await frankRow.waitFor();
      const listed = await api(env.svc.url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${frank.id}`, { token: admin.token });
      assert.deepEqual(
        listed.body.items.map((g: any) => [g.role, g.scope_type, g.scope_id]),
        [['owner', 'group', groupId]],
      );
      await assertAccessible(page, 'group page with grant form');
      await page.evaluate('window.scrollTo(0, 0)');
      await screenshot(page, 'group', env.shots);

      // Revoking asks first, naming grantee, role and scope.
      await teamRow.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('Revoke user on project checkout from team ops?').waitFor();
      await assertAccessible(page, 'revoke confirmation');
      await page.getByRole('button', { name: 'Yes, revoke' }).click();
      await teamRow.waitFor({ state: 'detached' });
      const left = await api(env.svc.url, 'GET', `/v1/role-assignments?scope_type=project&scope_id=${projectId}`, { token: admin.token });
      assert.deepEqual(left.body.items, []);

      // Frank is the group's only owner: revoking his grant is refused, in words naming the group.
      await frankRow.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('button', { name: 'Yes, revoke' }).click();
      await page.getByRole('alert').filter({ hasText: 'group shop would be left without an owner' }).waitFor();
      await frankRow.waitFor();

      // The project page leads back to its group.
      await page.getByRole('link', { name: 'checkout', exact: true }).click();
      await page.getByRole('heading', { name: 'Project checkout' }).waitFor();
      await page.getByRole('link', { name: 'Group shop' }).click();
      await page.getByRole('heading', { name: 'Group shop' }).waitFor();
    }));

  it('a group owner sees only their group, creates a team and grants owner or user inside it, never admin nor global', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const north = await createGroup(env.svc.url, admin.token, 'north');
      const south = await createGroup(env.svc.url, admin.token, 'south');
      await createProject(env.svc.url, admin.token, north, 'api');
      const devs = await createTeam(env.svc.url, admin.token, north, 'devs');
      const pete = await createActor(env.svc.url, admin.token, 'pete');
      await addMember(env.svc.url, admin.token, devs, pete.id);
      // A team holding a global grant: only an administrator may change its members.
      const core = await createTeam(env.svc.url, admin.token, north, 'core');
      await grant(env.svc.url, admin.token, { type: 'team', id: core }, { role: 'user', scope_type: 'global' });
      const olga = await createActor(env.svc.url, admin.token, 'olga', { grants: [{ role: 'owner', scope_type: 'group', scope_id: north }] });
      await page.goto(`${env.svc.url}/console/`);
      await signInAs(page, 'olga', olga.password);

      const links = await navLinks(page);
      assert.ok(links.includes('Groups') && !links.includes('Users'), links.join(', '));
      await page.getByRole('link', { name: 'Groups' }).click();
      await page.getByRole('link', { name: 'north', exact: true }).waitFor();
      assert.deepEqual(await page.locator('table.groups tbody tr td:first-child').allTextContents(), ['north']);
      assert.equal(await page.getByRole('button', { name: 'Create group' }).count(), 0);

      await page.getByRole('link', { name: 'north', exact: true }).click();
      await page.getByRole('heading', { name: 'Group north' }).waitFor();
      await page.getByRole('region', { name: 'Team devs' }).getByText('pete').waitFor();
      await page.getByLabel("New team's name").fill('oncall');
      await page.getByRole('button', { name: 'Create team' }).click();
      const oncall = page.getByRole('region', { name: 'Team oncall' });
      await oncall.waitFor();
      // No user search for owners: the people the group knows.
      assert.equal(await oncall.getByLabel('Find user (username contains)').count(), 0);
      await oncall.getByLabel('New member of oncall').selectOption({ label: 'pete' });
      await oncall.getByRole('button', { name: 'Add member to oncall' }).click();
      await oncall.getByRole('listitem').filter({ hasText: 'pete' }).waitFor();

      const form = page.getByRole('region', { name: 'Grant a role' });
      await optionsBecome(form.getByLabel('Role'), ['user (reads logs)', 'owner (manages)']);
      await optionsBecome(form.getByLabel('Scope'), ['Group north', 'Project api']);
      await form.getByLabel('User', { exact: true }).selectOption({ label: 'pete' });
      await form.getByLabel('Role').selectOption({ label: 'owner (manages)' });
      await form.getByRole('button', { name: 'Grant' }).click();
      await page.getByRole('row', { name: 'user pete owner group north' }).waitFor();
      await form.getByLabel('Grant to').selectOption({ label: 'A team of this group' });
      await form.getByLabel('Team').selectOption({ label: 'oncall' });
      await form.getByLabel('Role').selectOption({ label: 'user (reads logs)' });
      await form.getByLabel('Scope').selectOption({ label: 'Project api' });
      await form.getByRole('button', { name: 'Grant' }).click();
      await page.getByRole('row', { name: 'team oncall user project api' }).waitFor();
      await page.getByRole('row', { name: 'user olga owner group north' }).waitFor();
      await assertAccessible(page, 'group page as owner');

      // The service refuses what the console cannot foresee; its reason is shown.
      const coreCard = page.getByRole('region', { name: 'Team core' });
      await coreCard.getByLabel('New member of core').selectOption({ label: 'pete' });
      await coreCard.getByRole('button', { name: 'Add member to core' }).click();
      await coreCard.getByRole('alert').filter({ hasText: 'only an administrator may change its members' }).waitFor();

      // Removing a member asks first, naming the person and the team.
      await oncall.getByRole('button', { name: 'Remove pete' }).click();
      await oncall.getByText('Remove pete from team oncall?').waitFor();
      await oncall.getByRole('button', { name: 'Yes, remove' }).click();
      await oncall.getByText('No members yet.').waitFor();
      const teams = await api(env.svc.url, 'GET', `/v1/groups/${north}/teams`, { token: admin.token });
      const oncallId = teams.body.items.find((t: { name: string }) => t.name === 'oncall').id;
      assert.deepEqual((await api(env.svc.url, 'GET', `/v1/teams/${oncallId}/members`, { token: admin.token })).body.items, []);

      // Another group is not there, even by address.
      await page.goto(`${env.svc.url}/console/#/group?id=${south}`);
      await page.getByRole('heading', { name: 'Group not found' }).waitFor();
      assert.equal(await page.getByRole('button', { name: /Create team|Grant/ }).count(), 0);
    }));

  it('the groups list is filtered by name and paged 50 at a time', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      for (let i = 0; i < 52; i += 13) {
        await Promise.all(Array.from({ length: 13 }, (_, j) => createGroup(env.svc.url, admin.token, `bulk-${String(i + j).padStart(2, '0')}`)));
      }
      await page.goto(`${env.svc.url}/console/`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
      await page.getByRole('link', { name: 'Groups' }).click();
      await page.getByLabel('Name contains').fill('bulk-');
      await page.getByRole('button', { name: 'Filter' }).click();
      const rows = page.locator('table.groups tbody tr');
      await page.getByRole('link', { name: 'bulk-51', exact: true }).waitFor();
      await rows.nth(49).waitFor();
      assert.equal(await rows.count(), 50);
      await page.getByRole('button', { name: 'Next page' }).click();
      await rows.nth(2).waitFor({ state: 'detached' });
      assert.equal(await rows.count(), 2);
      assert.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled());
      await page.getByRole('button', { name: 'Previous page' }).click();
      await rows.nth(49).waitFor();
    }));

  it('a plain user sees no administration, not even by address', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const west = await createGroup(env.svc.url, admin.token, 'west');
      const web = await createProject(env.svc.url, admin.token, west, 'web');
      const carol = await createActor(env.svc.url, admin.token, 'carol', { grants: [{ role: 'user', scope_type: 'project', scope_id: web }] });
      await page.goto(`${env.svc.url}/console/`);
      await signInAs(page, 'carol', carol.password);
      const links = await navLinks(page);
      for (const admin of ['Groups', 'Projects', 'Users']) assert.ok(!links.includes(admin), links.join(', '));
      await page.goto(`${env.svc.url}/console/#/groups`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      await page.goto(`${env.svc.url}/console/#/group?id=${west}`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      assert.equal(await page.getByRole('button', { name: /Create|Grant|Revoke|Add member/ }).count(), 0);
    }));

  it('deleting the only owner of a group, from the users page or their own account page, is refused in words naming the group', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const solo = await createGroup(env.svc.url, admin.token, 'solo');
      const sam = await createActor(env.svc.url, admin.token, 'sam', { grants: [{ role: 'owner', scope_type: 'group', scope_id: solo }] });
      await page.goto(`${env.svc.url}/console/`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByLabel('Username contains').fill('sam');
      await page.getByRole('button', { name: 'Filter' }).click();
      const samRow = page.getByRole('row', { name: /^sam / });
      await samRow.waitFor();
      await samRow.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('Delete user sam for good?').waitFor();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await page.getByRole('alert').filter({ hasText: 'Refused: group solo would be left without an owner.' }).waitFor();
      const still = await api(env.svc.url, 'GET', '/v1/users?username=sam', { token: admin.token });
      assert.equal(still.body.items[0].id, sam.id);
      assert.equal(still.body.items[0].deleted_at, null);

      // The same refusal when sam deletes his own account.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInAs(page, 'sam', sam.password);
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('button', { name: 'Delete my account…' }).click();
      await page.getByLabel('Your password, to confirm').fill(sam.password);
      await page.getByRole('button', { name: 'Delete my account for good' }).click();
      await page.getByRole('alert').filter({ hasText: 'Refused: group solo would be left without an owner.' }).waitFor();
    }));
}
