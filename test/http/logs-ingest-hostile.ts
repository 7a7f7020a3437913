/**
 * Hostile bodies on `POST /v1/logs`, over HTTP on both backends, with the
 * service in this process: while each is prepared the event loop keeps
 * turning (its delay, measured here, stays far under a second where the
 * bodies used to block it for 10–45 s), the answer stays within
 * MAX_INGESTION_ANSWER_BYTES however many elements are refused (a 10 MiB
 * body of `[0,0,…]` used to get a 465 MB answer), and the counts are
 * exact: accepted + rejected_count is the number of elements sent.
 *
 * Run as one file per backend (`logs-ingest-hostile-file.test.ts`,
 * `logs-ingest-hostile-server.test.ts`), so each has the per-file time limit.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { MAX_INGESTION_ANSWER_BYTES } from '../../lib/ingest/ingest-request.js';
import { MAX_LISTED_REJECTIONS } from '../../lib/ingest/prepared-batch.js';
import { MAX_ELEMENT_BYTES } from '../../lib/ingest/plain-body.js';

const MiB = 1024 * 1024;
/** Far above what preparing in slices costs (tens of ms), far below the 10+ s the bodies caused. */
const MAX_LOOP_DELAY_MS = 1000;

interface HostileBody {
  what: string;
  body: () => Buffer;
  ndjson: boolean;
  gzip: boolean;
  elements: number;
  accepted?: number;
}

const entry = (i: number, extra = '') => `{"level":"info","event":"e${i}","timestamp":"2025-01-01T00:00:00Z"${extra}}`;
/** `count` copies of `piece` joined by `separator`. */
const repeated = (piece: string, count: number, separator: string) => Buffer.from(Array(count).fill(piece).join(separator));
// An element of zeros costs the most to prepare per byte (~0.5 s a MiB).
const zerosElement = (bytes: number) => entry(0, `,"a":[${'0,'.repeat(bytes / 2 - 40)}0]`);

const BODIES: HostileBody[] = [
  { what: 'gzip NDJSON of "x" lines (1.2 MB decoded)', body: () => repeated('x', 629_145, '\n'), ndjson: true, gzip: true, elements: 629_145 },
  { what: 'gzip NDJSON of "{x}" lines to 10 MiB', body: () => repeated('{x}', (10 * MiB) / 4, '\n'), ndjson: true, gzip: true, elements: (10 * MiB) / 4 },
  { what: 'gzip NDJSON of "0" lines to 10 MiB', body: () => repeated('0', (10 * MiB) / 2, '\n'), ndjson: true, gzip: true, elements: (10 * MiB) / 2 },
  {
    what: 'gzip JSON array [0,0,…] decoding to 10 MiB',
    body: () =>
      Buffer.from(
        `[${Array((10 * MiB) / 2 - 1)
          .fill('0')
          .join(',')}]`,
      ),
    ndjson: false,
    gzip: true,
    elements: (10 * MiB) / 2 - 1,
  },
  {
    what: 'a JSON array of zeros just under 1 MiB (parsed whole, on the worker)',
    body: () =>
      Buffer.from(
        `[${Array(MiB / 2 - 2)
          .fill('0')
          .join(',')}]`,
      ),
    ndjson: false,
    gzip: false,
    elements: MiB / 2 - 2,
  },
  {
    what: 'a JSON array of zeros of 1 MiB (element by element, on the event loop)',
    body: () =>
      Buffer.from(
        `[${Array(MiB / 2 - 1)
          .fill('0')
          .join(',')},0]`,
      ),
    ndjson: false,
    gzip: false,
    elements: MiB / 2,
  },
  {
    what: 'a 10 MiB JSON array of one huge element',
    body: () => Buffer.from(`[${zerosElement(10 * MiB - 8)}]`),
    ndjson: false,
    gzip: true,
    elements: 1,
  },
  {
    what: 'gzip NDJSON of four elements of zeros of almost 1 MiB each (prepared on the worker one by one)',
    body: () => Buffer.from(Array.from({ length: 4 }, () => zerosElement(MAX_ELEMENT_BYTES - 64)).join('\n')),
    ndjson: true,
    gzip: true,
    elements: 4,
    accepted: 4,
  },
];

export function hostileBodiesSuite(only: BackendName): void {
  describeEachBackend(
    'POST /v1/logs: hostile bodies keep the event loop turning and the answer small',
    (backend) => {
      let svc: RunningService;
      let secret: string;

      before(async () => {
        svc = await startService(backend);
        const admin = await signInAdmin(svc.url);
        const group = await createGroup(svc.url, admin.token, 'hostile');
        secret = (await createKey(svc.url, admin.token, await createProject(svc.url, admin.token, group, 'hostile'))).secret;
      });
      after(() => svc.stop({ dropDatabase: true }));

      for (const hostile of BODIES) {
        it(`${hostile.what}: event-loop delay under ${MAX_LOOP_DELAY_MS} ms, answer under ${MAX_INGESTION_ANSWER_BYTES} bytes, exact counts`, async (t) => {
          const decoded = hostile.body();
          const sent = hostile.gzip ? gzipSync(decoded) : decoded;
          const headers: Record<string, string> = {};
          if (hostile.gzip) headers['content-encoding'] = 'gzip';
          if (hostile.ndjson) headers['content-type'] = 'application/x-ndjson';
          const delay = monitorEventLoopDelay({ resolution: 10 });
          delay.enable();
          let res: Awaited<ReturnType<typeof api>>;
          try {
            res = await api(svc.url, 'POST', '/v1/logs', { token: secret, raw: sent, headers });
          } finally {
            delay.disable();
          }
          assertStatus(res, 202);
          const maxDelayMs = delay.max / 1e6;
          t.diagnostic(`${decoded.length} bytes decoded: event loop held at most ${Math.round(maxDelayMs)} ms; a ${res.text.length}-byte answer`);
          assert.ok(maxDelayMs < MAX_LOOP_DELAY_MS, `the event loop was held ${Math.round(maxDelayMs)} ms (${decoded.length} bytes decoded)`);
          assert.ok(res.text.length <= MAX_INGESTION_ANSWER_BYTES, `a ${res.text.length}-byte answer`);
          const { accepted, rejected, rejected_count: rejectedCount } = res.body;
          assert.equal(accepted, hostile.accepted ?? 0);
          assert.equal(accepted + rejectedCount, hostile.elements);
          assert.equal(rejected.length, Math.min(rejectedCount, MAX_LISTED_REJECTIONS));
          assert.deepEqual(
            rejected.map((r: { index: number }) => r.index),
            rejected.map((_: unknown, i: number) => i + (hostile.accepted ?? 0)),
            'the first rejections, by index',
          );
        });
      }
    },
    [only],
  );
}
