/**
 * `logkeep mcp`, the built program as a child process on standard input
 * and output, driven by the MCP SDK's own client against a real service on
 * both backends: the tools are listed with their input schemas, list the
 * projects the access key covers, search with filters and correlation
 * fields across a group, page with the cursor they answer, show the entries
 * around one, count by time, and say refusals in words as error results.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { BIN_PATH, assertBinBuilt, binEnvironment } from '../support/bin.js';
import { ingestAll } from '../support/logs.js';

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };

describeEachBackend('logkeep mcp', (backend) => {
  let svc: RunningService;
  let client: Client;
  let projectA: number;
  let projectB: number;
  let projectC: number;
  let groupG: number;

  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    return { result, body: result.isError ? null : JSON.parse(result.content[0]!.text) };
  };

  before(async () => {
    assertBinBuilt();
    svc = await startService(backend);
    const admin = await signInAdmin(svc.url);
    groupG = await createGroup(svc.url, admin.token, 'G');
    projectA = await createProject(svc.url, admin.token, groupG, 'api');
    projectB = await createProject(svc.url, admin.token, groupG, 'worker');
    projectC = await createProject(svc.url, admin.token, await createGroup(svc.url, admin.token, 'H'), 'elsewhere');
    const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`;
    await ingestAll(svc.url, (await createKey(svc.url, admin.token, projectA)).secret, [
      ...Array.from({ length: 30 }, (_, i) => ({ level: 'info', event: `api step ${i}`, timestamp: at(i) })),
      { level: 'error', event: 'api failed', timestamp: at(40), tool_call_id: 'call-7' },
    ]);
    await ingestAll(svc.url, (await createKey(svc.url, admin.token, projectB)).secret, [
      { level: 'warning', event: 'worker retried', timestamp: at(41), tool_call_id: 'call-7' },
      { level: 'info', event: 'worker idle', timestamp: at(42) },
    ]);
    const reader = await createActor(svc.url, admin.token, `mcp-reader-${backend}`, { grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }] });
    const created = await api(svc.url, 'POST', '/v1/access-keys', {
      token: reader.token,
      json: { label: 'agent', expires_at: new Date(Date.now() + 86_400_000).toISOString(), scope: { permissions: ['read'], group_ids: [groupG] } },
    });
    assertStatus(created, 201);
    const env = binEnvironment({ LOGKEEP_URL: svc.url, LOGKEEP_KEY: created.body.secret, LOGKEEP_CONFIG: '/nonexistent/logkeep.json' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN_PATH, 'mcp'],
      env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      stderr: 'pipe',
    });
    client = new Client({ name: 'logkeep-test', version: '1' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await svc.stop({ dropDatabase: true });
  });

  it('lists its tools, each with a description and an input schema', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['count_by_time', 'entries_around', 'list_projects', 'search_logs']);
    for (const tool of tools) {
      assert.ok((tool.description ?? '').length > 20, tool.name);
      assert.equal(tool.inputSchema.type, 'object');
    }
    const search = tools.find((t) => t.name === 'search_logs')!;
    assert.ok('tool_call_id' in (search.inputSchema.properties ?? {}));
  });

  it('lists the projects the key covers, and no other', async () => {
    const { body } = await call('list_projects');
    assert.deepEqual(body.projects, [
      { id: projectB, name: 'worker', group_id: groupG },
      { id: projectA, name: 'api', group_id: groupG },
    ]);
  });

  it('searches with filters, correlates across a group, and pages with next_cursor', async () => {
    const errors = await call('search_logs', { project_id: projectA, level: 'error' });
    assert.deepEqual(
      errors.body.entries.map((e: { event: string }) => e.event),
      ['api failed'],
    );
    const correlated = await call('search_logs', { group_id: groupG, tool_call_id: 'call-7' });
    assert.deepEqual(
      correlated.body.entries.map((e: { event: string }) => e.event),
      ['worker retried', 'api failed'],
    );

    const first = await call('search_logs', { project_id: projectA, q: 'step', limit: 20 });
    assert.equal(first.body.entries.length, 20);
    const second = await call('search_logs', { project_id: projectA, q: 'step', limit: 20, cursor: first.body.next_cursor });
    assert.equal(second.body.entries.length, 10);
    assert.equal(second.body.next_cursor, null);
    const ids = [...first.body.entries, ...second.body.entries].map((e: { event: string }) => e.event);
    assert.deepEqual(
      ids,
      Array.from({ length: 30 }, (_, i) => `api step ${29 - i}`),
    );
  });

  it('shows the entries around a moment, in time order', async () => {
    const { body } = await call('entries_around', { project_id: projectA, timestamp: '2026-01-01T00:00:10Z', before: 3, after: 2 });
    assert.deepEqual(
      body.before.map((e: { event: string }) => e.event),
      ['api step 7', 'api step 8', 'api step 9'],
    );
    assert.deepEqual(
      body.after.map((e: { event: string }) => e.event),
      ['api step 10', 'api step 11'],
    );
  });

  it('counts by time', async () => {
    const { body } = await call('count_by_time', { project_id: projectA, from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:01:00Z', buckets: 2 });
    assert.equal(body.buckets.length, 2);
    const total = body.buckets.reduce((n: number, b: { counts: Record<string, number> }) => n + Object.values(b.counts).reduce((a, c) => a + c, 0), 0);
    assert.equal(total, 31);
  });

  it('says a refusal in words as an error result, with the HTTP code', async () => {
    const { result } = await call('search_logs', { project_id: projectC });
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /HTTP 403 forbidden/);
  });
});
