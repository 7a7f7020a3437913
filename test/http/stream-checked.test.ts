/**
 * Streams whose filter matches nothing for a while, opened far back
 * (`Last-Event-ID: 0`) over more stored entries than a read's page: the
 * feed reads on from what it has already checked rather than from the last
 * entry it sent, and this changes nothing a client sees. Every match is
 * sent exactly once, in order, live and replayed, over a project and over a
 * group, while two projects ingest at once; the `id:` lines stay the ids of
 * entries sent, and resuming from the last one misses nothing.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { createTwoProjectGroup, type TestActor } from '../support/actors.js';
import { ingestAll, queryAllPages } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';

/** Long enough for a stray extra frame to show up after the expected ones. */
const SETTLE_MS = 300;
const OLD = '2025-01-01T00:00:00Z';

const noise = (tag: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ level: 'info', event: `noise ${tag} ${i}`, timestamp: OLD, kind: 'noise' }));
const match = (tag: string) => ({ level: 'warning', event: `needle ${tag}`, timestamp: new Date().toISOString(), kind: 'needle' });

describeEachBackend('live stream: filters matching nothing for a while', (backend) => {
  let member: TestActor;
  let groupG: number;
  let projectA: number;
  let projectB: number;
  let keyA: string;
  let keyB: string;
  const open: RawStream[] = [];

  const stream = async (params: [string, string][], lastEventId: number) => {
    const path = `/v1/logs/stream?${new URLSearchParams(params).toString()}`;
    const s = assertOpen(await openRawStream(app.url, path, { token: member.token, headers: { 'last-event-id': String(lastEventId) } }));
    open.push(s);
    return s;
  };
  /** GET /v1/logs ids for the parameters, oldest first. */
  const listedIds = async (params: [string, string][]) => (await queryAllPages(app.url, member.token, params, 200)).items.map((i) => i.id as number).reverse();
  /** The ids of the `id:` lines received, in order. */
  const sentIds = (s: RawStream) => s.frames.filter((f) => f.event === 'log').map((f) => Number(f.id));
  const assertStreamed = async (s: RawStream, expected: number[], label: string) => {
    await s.waitFor((x) => sentIds(x).length >= expected.length, 20_000, `${expected.length} entries for ${label}`);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    assert.deepEqual(sentIds(s), expected, label);
    assert.deepEqual(
      s.logs().map((e) => e.id),
      expected,
      `${label}: each frame's id is its entry's`,
    );
  };

  after(async () => {
    for (const s of open) s.close();
  });
  const app = serviceWithAdmin(backend);
  before(async () => {
    ({ groupG, projectA, projectB, keyA, keyB, member } = await createTwoProjectGroup(app.url, app.admin.token, `reader-${backend}`));
  });

  it('from Last-Event-ID 0 over a long non-matching history, each match is sent once and resuming misses nothing', async () => {
    // Several pages' worth of history in both projects, with a few matches inside.
    await ingestAll(app.url, keyA, [match('early A'), ...noise('a0', 300)]);
    await ingestAll(app.url, keyB, noise('b0', 300));
    await ingestAll(app.url, keyA, [...noise('a1', 250), match('middle A'), ...noise('a2', 200)]);
    await ingestAll(app.url, keyB, noise('b1', 300));

    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const queries: [string, string][][] = [
      [
        ['project_id', String(projectA)],
        ['q', 'needle'],
      ],
      [
        ['group_id', String(groupG)],
        ['q', 'needle'],
      ],
      [
        ['project_id', String(projectA)],
        ['from', hourAgo],
      ],
      [
        ['group_id', String(groupG)],
        ['from', hourAgo],
      ],
      [
        ['project_id', String(projectB)],
        ['context.kind', 'needle'],
      ],
      [
        ['group_id', String(groupG)],
        ['context.kind', 'needle'],
        ['level', 'warning'],
      ],
    ];
    const streams = await Promise.all(queries.map((q) => stream(q, 0)));
    const history = await Promise.all(queries.map((q) => listedIds(q)));
    await Promise.all(streams.map((s, i) => assertStreamed(s, history[i]!, `history of ${new URLSearchParams(queries[i]!).toString()}`)));

    // Ingestions that match nothing, then one match in each project, a few times over.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++) {
        await ingestAll(app.url, keyA, noise(`live a r${round} ${i}`, 20));
        await ingestAll(app.url, keyB, noise(`live b r${round} ${i}`, 20));
      }
      await ingestAll(app.url, keyA, [match(`live A ${round}`)]);
      await ingestAll(app.url, keyB, [...noise(`live b r${round} tail`, 5), match(`live B ${round}`)]);
      const expected = await Promise.all(queries.map((q) => listedIds(q)));
      await Promise.all(streams.map((s, i) => assertStreamed(s, expected[i]!, `round ${round} of ${new URLSearchParams(queries[i]!).toString()}`)));
    }

    // Resuming from the last entry sent (what an EventSource sends) misses nothing, and repeats nothing.
    const resumed = await Promise.all(streams.map((s, i) => stream(queries[i]!, sentIds(s).at(-1)!)));
    for (const s of streams) s.close();
    await ingestAll(app.url, keyB, noise('after resume', 30));
    await ingestAll(app.url, keyA, [...noise('after resume', 30), match('after resume A')]);
    await ingestAll(app.url, keyB, [match('after resume B')]);
    const final = await Promise.all(queries.map((q) => listedIds(q)));
    await Promise.all(
      resumed.map((s, i) => {
        const before = sentIds(streams[i]!).at(-1)!;
        return assertStreamed(
          s,
          final[i]!.filter((id) => id > before),
          `resumed ${new URLSearchParams(queries[i]!).toString()}`,
        );
      }),
    );
  });

  it('while two projects ingest at once, a group stream and a project stream send every match once', async () => {
    const start = (await listedIds([['group_id', String(groupG)]])).at(-1)!;
    const group = await stream(
      [
        ['group_id', String(groupG)],
        ['q', 'rare'],
      ],
      0,
    );
    const project = await stream(
      [
        ['project_id', String(projectB)],
        ['q', 'rare'],
      ],
      0,
    );
    const batch = (tag: string, b: number) => [
      ...noise(`${tag} ${b}`, 15),
      ...(b % 3 === 0 ? [{ level: 'error', event: `rare ${tag} ${b}`, timestamp: OLD }] : []),
    ];
    await Promise.all(
      [keyA, keyB].map(async (key, k) => {
        for (let b = 0; b < 30; b++) await ingestAll(app.url, key, batch(`w${k}`, b));
      }),
    );
    const ofGroup = await listedIds([
      ['group_id', String(groupG)],
      ['q', 'rare'],
    ]);
    const ofB = await listedIds([
      ['project_id', String(projectB)],
      ['q', 'rare'],
    ]);
    assert.ok(ofGroup.length === 20 && ofB.length === 10 && ofGroup[0]! > start);
    await assertStreamed(group, ofGroup, 'group');
    await assertStreamed(project, ofB, 'project');
  });
});
