import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_ELEMENT_BYTES, OFFLOAD_MIN_BYTES, batchFromPlainBody } from '../../lib/ingest/plain-body.js';
import { MAX_LISTED_REJECTIONS, entryFromText, type TextOutcome } from '../../lib/ingest/prepared-batch.js';
import { batchFromValues } from '../support/prepared-entries.js';
import { SLICE_ELEMENTS } from '../../lib/ingest/yield-pacer.js';
import { LogServiceError } from '../../lib/core/errors.js';
import { decodeRows } from '../../lib/storage/log-index/encoded-entries.js';

const ELEMENTWISE = 0;
const TARGET = { projectId: 7, receivedAt: 1_700_000_000_000 };
const entry = (i: number) => ({ level: 'info', event: `e${i} "quoted" [x] {y}, z\\`, timestamp: '2025-01-01T00:00:00Z', nested: { a: [1, { b: ']' }] } });

async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return await run();
  } catch (err) {
    assert.ok(err instanceof LogServiceError && err.status === 400, String(err));
    return 'rejected';
  }
}

describe('ingestion bodies read element by element', () => {
  it('prepares exactly what a whole JSON.parse would (property)', async () => {
    const spaced = fc
      .array(fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.integer().map(entry)), { maxLength: 12 })
      .chain((values) =>
        fc
          .constantFrom('', ' ', '\n\t ', '\r\n')
          .map((ws) => ({ values, text: `${ws}[${ws}${values.map((v) => JSON.stringify(v, null, ws ? 1 : 0)).join(`${ws},${ws}`)}${ws}]${ws}` })),
      );
    await fc.assert(
      fc.asyncProperty(spaced, async ({ values, text }) => {
        const raw = Buffer.from(text);
        assert.deepEqual(await batchFromPlainBody(raw, TARGET, { wholeParseLimit: ELEMENTWISE }), batchFromValues(JSON.parse(text) as unknown[], TARGET));
        assert.deepEqual(await batchFromPlainBody(raw, TARGET, { wholeParseLimit: ELEMENTWISE }), await batchFromPlainBody(raw, TARGET));
        assert.equal(values.length, JSON.parse(text).length);
      }),
    );
  });

  it('refuses whatever JSON.parse refuses, and any non-array, the same way (property)', async () => {
    const base = JSON.stringify([entry(1), { a: '[]{},"' }, [1, 2, { c: null }], 'x', 3]);
    const mutated = fc
      .tuple(fc.nat(base.length), fc.nat(base.length), fc.constantFrom('', ',', ']', '}', '[', '{', '"', '\\', 'x', ' '))
      .map(([at, len, ins]) => base.slice(0, at) + ins + base.slice(Math.min(base.length, at + (len % 3))));
    await fc.assert(
      fc.asyncProperty(mutated, async (text) => {
        const whole = await outcome(() =>
          batchFromValues(
            (() => {
              let parsed: unknown;
              try {
                parsed = JSON.parse(text);
              } catch {
                throw new LogServiceError('invalid_request', 'malformed');
              }
              if (!Array.isArray(parsed)) throw new LogServiceError('invalid_request', 'not an array');
              return parsed;
            })(),
            TARGET,
          ),
        );
        assert.deepEqual(await outcome(() => batchFromPlainBody(Buffer.from(text), TARGET, { wholeParseLimit: ELEMENTWISE })), whole, JSON.stringify(text));
      }),
      { numRuns: 500 },
    );
  });

  it('handles the edges: empty arrays, trailing bytes, a stray bracket, multi-byte text', async () => {
    assert.deepEqual(await batchFromPlainBody(Buffer.from(' [ ] '), TARGET, { wholeParseLimit: ELEMENTWISE }), {
      request: { projectId: TARGET.projectId, sizes: [], chunks: [] },
      positions: [],
      rejected: [],
      rejectedCount: 0,
    });
    for (const bad of ['[] x', '[1]]', '[{"a":1}}, 2]', '[1,]', '[,1]', '[', '[1', '["\\"]']) {
      assert.equal(await outcome(() => batchFromPlainBody(Buffer.from(bad), TARGET, { wholeParseLimit: ELEMENTWISE })), 'rejected', bad);
    }
    const text = JSON.stringify([{ level: 'info', event: 'ünï😀,]', timestamp: '2025-01-01T00:00:00Z' }]);
    const [chunk] = (await batchFromPlainBody(Buffer.from(text), TARGET, { wholeParseLimit: ELEMENTWISE })).request.chunks;
    assert.deepEqual(decodeRows(chunk!)[0]!.slice(0, 2), [TARGET.projectId, TARGET.receivedAt]);
    assert.equal(decodeRows(chunk!)[0]![5], JSON.stringify(JSON.parse(text)[0]));
  });
});

describe('NDJSON ingestion bodies', () => {
  it('prepares what the JSON array of the same entries gives (property)', async () => {
    const lines = fc
      .array(fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.integer().map(entry)), { maxLength: 12 })
      .chain((values) =>
        fc.constantFrom('\n', '\r\n', '\n \n', '\n\t\r\n').map((end) => ({ values, text: values.map((v) => JSON.stringify(v)).join(end) + end })),
      );
    await fc.assert(
      fc.asyncProperty(lines, async ({ values, text }) => {
        assert.deepEqual(await batchFromPlainBody(Buffer.from(text), TARGET, { format: 'ndjson' }), batchFromValues(values, TARGET));
      }),
      { numRuns: 300 },
    );
  });

  it('rejects a line that is not JSON as its own index, counting only non-blank lines', async () => {
    const text = `\n${JSON.stringify(entry(0))}\n   \n{"level": \r\n${JSON.stringify(entry(2))}`;
    const batch = await batchFromPlainBody(Buffer.from(text), TARGET, { format: 'ndjson' });
    assert.deepEqual(batch.positions, [0, 2]);
    assert.deepEqual(batch.rejected, [{ index: 1, error: 'validation_error', message: 'The line is not valid JSON.' }]);
    assert.deepEqual(await batchFromPlainBody(Buffer.from(' \n\r\n'), TARGET, { format: 'ndjson' }), batchFromValues([], TARGET));
  });
});

/** Runs `work` while counting the turns the event loop makes meanwhile. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const spin = () => {
    turns += 1;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}

describe('hostile ingestion bodies', () => {
  const valid = (i: number) => JSON.stringify(entry(i));

  it('lists at most MAX_LISTED_REJECTIONS, the first by index, and counts every one', async () => {
    const n = 3 * MAX_LISTED_REJECTIONS;
    // Every third element valid: rejections at the other indices.
    const elements = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? valid(i) : i % 3 === 1 ? '0' : '{"level":"loud"}'));
    const expectedIndices = Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 !== 0);
    for (const [format, text] of [
      ['json', `[${elements.join(',')}]`],
      ['ndjson', elements.join('\n')],
    ] as const) {
      for (const wholeParseLimit of [0, Infinity]) {
        const batch = await batchFromPlainBody(Buffer.from(text), TARGET, { format, wholeParseLimit });
        assert.equal(batch.rejectedCount, expectedIndices.length, format);
        assert.equal(batch.rejected.length, MAX_LISTED_REJECTIONS);
        assert.deepEqual(
          batch.rejected.map((r) => r.index),
          expectedIndices.slice(0, MAX_LISTED_REJECTIONS),
        );
        assert.equal(batch.positions.length + batch.rejectedCount, n);
      }
    }
  });

  it('refuses an element or a line longer than MAX_ELEMENT_BYTES unread, valid JSON or not, and keeps the others', async () => {
    const long = JSON.stringify({ ...entry(1), pad: 'x'.repeat(MAX_ELEMENT_BYTES) });
    const longBroken = `{"level":${'x'.repeat(MAX_ELEMENT_BYTES)}}`;
    const exact = JSON.stringify({ ...entry(2), pad: '' }).replace(
      '"pad":""',
      `"pad":"${'y'.repeat(MAX_ELEMENT_BYTES - JSON.stringify({ ...entry(2), pad: '' }).length)}"`,
    );
    assert.equal(Buffer.byteLength(exact), MAX_ELEMENT_BYTES);
    for (const [format, text] of [
      ['json', `[${valid(0)},${long},${longBroken},${exact},${valid(4)}]`],
      ['ndjson', [valid(0), long, longBroken, exact, valid(4)].join('\n')],
    ] as const) {
      const batch = await batchFromPlainBody(Buffer.from(text), TARGET, { format });
      assert.deepEqual(batch.positions, [0, 3, 4], format);
      assert.deepEqual(
        batch.rejected.map((r) => [r.index, r.message]),
        [
          [1, `The entry is longer than ${MAX_ELEMENT_BYTES} bytes of JSON text.`],
          [2, `The entry is longer than ${MAX_ELEMENT_BYTES} bytes of JSON text.`],
        ],
      );
    }
    // A malformed element that is read still refuses the whole body.
    await assert.rejects(
      batchFromPlainBody(Buffer.from(`[${long},{"level":}]`), TARGET),
      (err: unknown) => err instanceof LogServiceError && err.status === 400,
    );
  });

  it('refuses a large body that is not an array without parsing it', async () => {
    const big = Buffer.from(JSON.stringify({ items: Array.from({ length: 200_000 }, (_, i) => i) }));
    assert.ok(big.length > 1024 * 1024);
    await assert.rejects(
      batchFromPlainBody(big, TARGET),
      (err: unknown) => err instanceof LogServiceError && err.status === 400 && /JSON array/.test(err.message),
    );
  });

  it('prepares elements of OFFLOAD_MIN_BYTES or more through offload, giving exactly what inline gives', async () => {
    const longOk = JSON.stringify({ ...entry(1), pad: 'word '.repeat(OFFLOAD_MIN_BYTES / 5) });
    const longBad = JSON.stringify({ level: 'loud', pad: 'x'.repeat(OFFLOAD_MIN_BYTES) });
    const longNotJson = `{${'x'.repeat(OFFLOAD_MIN_BYTES)}`;
    const offloaded: number[] = [];
    const offload = async (text: string): Promise<TextOutcome> => {
      offloaded.push(text.length);
      return entryFromText(text);
    };
    const lines = [valid(0), longOk, longBad, longNotJson, valid(4)].join('\n');
    const ndjson = Buffer.from(lines);
    assert.deepEqual(await batchFromPlainBody(ndjson, TARGET, { format: 'ndjson', offload }), await batchFromPlainBody(ndjson, TARGET, { format: 'ndjson' }));
    assert.deepEqual(offloaded, [longOk.length, longBad.length, longNotJson.length]);
    const json = Buffer.from(`[${[valid(0), longOk, longBad, valid(3)].join(',')}]`);
    assert.deepEqual(await batchFromPlainBody(json, TARGET, { offload }), await batchFromPlainBody(json, TARGET));
    // With offload nothing over OFFLOAD_MIN_BYTES is parsed whole: the body above went element by element.
    assert.equal(offloaded.length, 5);
  });

  it('yields to the event loop on every path: good or bad elements, JSON arrays, NDJSON, whole or element by element', async () => {
    const n = 20 * SLICE_ELEMENTS;
    const bodies: [string, Buffer, { format?: 'json' | 'ndjson'; wholeParseLimit?: number }][] = [
      ['NDJSON lines that are not JSON', Buffer.from('x\n'.repeat(n)), { format: 'ndjson' }],
      ['NDJSON lines that are JSON but not entries', Buffer.from('0\n'.repeat(n)), { format: 'ndjson' }],
      ['NDJSON entries', Buffer.from(Array.from({ length: n }, (_, i) => valid(i)).join('\n')), { format: 'ndjson' }],
      ['a JSON array of zeros, element by element', Buffer.from(`[${'0,'.repeat(n - 1)}0]`), { wholeParseLimit: 0 }],
      ['a JSON array of zeros, parsed whole', Buffer.from(`[${'0,'.repeat(n - 1)}0]`), {}],
      ['a JSON array of entries, element by element', Buffer.from(`[${Array.from({ length: n }, (_, i) => valid(i)).join(',')}]`), { wholeParseLimit: 0 }],
    ];
    for (const [what, raw, options] of bodies) {
      const { result, turns } = await turnsDuring(() => batchFromPlainBody(raw, TARGET, options));
      assert.equal(result.positions.length + result.rejectedCount, n, what);
      // At least one turn every SLICE_ELEMENTS elements (sooner when the clock says so).
      assert.ok(turns >= n / SLICE_ELEMENTS - 1, `${what}: ${turns} turns of the event loop for ${n} elements`);
    }
    // One element too long to read is still scanned for its end, a MiB between two turns.
    const huge = Buffer.from(`[{"a":[${'0,'.repeat(4 * 1024 * 1024)}0]}]`);
    const { result, turns } = await turnsDuring(() => batchFromPlainBody(huge, TARGET));
    assert.equal(result.rejectedCount, 1);
    assert.ok(turns >= 7, `${turns} turns of the event loop while scanning 8 MiB`);
  });
});
