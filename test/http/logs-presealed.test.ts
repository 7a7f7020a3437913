/**
 * Large requests sealed as they are prepared, through HTTP on both
 * backends: once a project has a dictionary (its first full run sealed in
 * the background), a batch of a full block's entries or more is sealed on
 * a preparation thread and stored as blocks of its own while the
 * project's tail is empty; one that found the tail holding entries goes to
 * the tail and has it emptied for the next. Every entry is found at once.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { assertStatus } from '../support/actors.js';
import { ingest, queryAllPages } from '../support/logs.js';
import { rawRows } from '../support/raw-sql.js';

const entry = (tag: string, i: number) => ({
  level: i % 7 === 0 ? 'error' : 'info',
  event: `${tag} request ${i} served`,
  timestamp: new Date(Date.UTC(2025, 5, 1) + i * 1000).toISOString(),
  request_id: `${tag}-${i}-0123456789abcdef`,
  context: { route: `/v1/items/${i % 40}`, status: 200 + (i % 3) },
});

describeEachBackend('large requests stored as blocks', (backend) => {
  const app = serviceWithAdmin(backend, { group: 'presealed' });
  let projectId: number;
  let secret: string;
  before(async () => {
    ({ project: projectId, secret } = await app.newProject('blocks'));
  });

  const blocks = () => rawRows(app.svc.database, 'SELECT last_id, entries FROM log_sealed WHERE project_id = $1 ORDER BY last_id', [projectId]);
  const tail = async () => (await rawRows(app.svc.database, 'SELECT COALESCE(SUM(entries), 0) AS n FROM log_tails WHERE project_id = $1', [projectId]))[0]!.n;

  it('seals a large batch on a preparation thread and stores it as blocks, found at once', async () => {
    // Small batches first: to the tail, until sealing makes the project's first block and dictionary.
    for (let b = 0; b < 11; b++) {
      assertStatus(
        await ingest(
          app.url,
          secret,
          Array.from({ length: 100 }, (_, i) => entry('small', b * 100 + i)),
        ),
        202,
      );
    }
    const deadline = Date.now() + 15_000;
    while ((await blocks()).length === 0) {
      assert.ok(Date.now() < deadline, 'the first full run was sealed in the background');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // A large batch while the tail holds the part-filled rest: to the tail, and the tail is emptied after it.
    const first = Array.from({ length: 1100 }, (_, i) => entry('first', i));
    assertStatus(await ingest(app.url, secret, first), 202);
    while ((await tail()) > 0) {
      assert.ok(Date.now() < deadline + 15_000, 'the tail was emptied for the next large batch');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const big = Array.from({ length: 1100 }, (_, i) => entry('large', i));
    assert.ok(Buffer.byteLength(JSON.stringify(big)) >= 32 * 1024, 'a body prepared on a preparation thread');
    assertStatus(await ingest(app.url, secret, big), 202);
    const found = await queryAllPages(
      app.url,
      app.admin.token,
      [
        ['project_id', String(projectId)],
        ['q', 'large'],
      ],
      200,
    );
    assert.equal(found.items.length, big.length, 'every entry found as soon as it was acknowledged');
    const ids = found.items.map((item: { id: number }) => item.id);
    const stored = await blocks();
    assert.deepEqual(
      stored.slice(-2).map((b) => b.entries),
      [1024, 76],
      'the batch is two blocks of its own',
    );
    assert.equal(stored[stored.length - 1]!.last_id, Math.max(...ids));
    assert.equal(await tail(), 0, 'nothing was left in the tail');
    assert.equal(
      stored.reduce((n, b) => n + b.entries!, 0),
      1100 + first.length + big.length,
    );
    const exact = await queryAllPages(
      app.url,
      app.admin.token,
      [
        ['project_id', String(projectId)],
        ['request_id', 'large-123-0123456789abcdef'],
      ],
      10,
    );
    assert.deepEqual(
      exact.items.map((item: { event: string }) => item.event),
      ['large request 123 served'],
    );
  });
});
