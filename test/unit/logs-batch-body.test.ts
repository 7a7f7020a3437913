import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { prepareBody } from '../../lib/logs/batch-body.js';
import { prepareBatch } from '../../lib/logs/prepare-entries.js';
import { LogServiceError } from '../../lib/core/errors.js';
import { decodeRows } from '../../lib/storage/encoded-entries.js';

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
    const spaced = fc.array(fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.integer().map(entry)), { maxLength: 12 }).chain((values) =>
      fc.constantFrom('', ' ', '\n\t ', '\r\n').map((ws) => ({ values, text: `${ws}[${ws}${values.map((v) => JSON.stringify(v, null, ws ? 1 : 0)).join(`${ws},${ws}`)}${ws}]${ws}` })),
    );
    await fc.assert(
      fc.asyncProperty(spaced, async ({ values, text }) => {
        const raw = Buffer.from(text);
        assert.deepEqual(await prepareBody(raw, TARGET, { wholeParseLimit: ELEMENTWISE }), prepareBatch(JSON.parse(text) as unknown[], TARGET));
        assert.deepEqual(await prepareBody(raw, TARGET, { wholeParseLimit: ELEMENTWISE }), await prepareBody(raw, TARGET));
        assert.equal(values.length, JSON.parse(text).length);
      }),
    );
  });

  it('refuses whatever JSON.parse refuses, and any non-array, the same way (property)', async () => {
    const base = JSON.stringify([entry(1), { a: '[]{},"' }, [1, 2, { c: null }], 'x', 3]);
    const mutated = fc.tuple(fc.nat(base.length), fc.nat(base.length), fc.constantFrom('', ',', ']', '}', '[', '{', '"', '\\', 'x', ' ')).map(([at, len, ins]) =>
      base.slice(0, at) + ins + base.slice(Math.min(base.length, at + (len % 3))),
    );
    await fc.assert(
      fc.asyncProperty(mutated, async (text) => {
        const whole = await outcome(() => prepareBatch((() => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            throw new LogServiceError('invalid_request', 'malformed');
          }
          if (!Array.isArray(parsed)) throw new LogServiceError('invalid_request', 'not an array');
          return parsed;
        })(), TARGET));
        assert.deepEqual(await outcome(() => prepareBody(Buffer.from(text), TARGET, { wholeParseLimit: ELEMENTWISE })), whole, JSON.stringify(text));
      }),
      { numRuns: 500 },
    );
  });

  it('handles the edges: empty arrays, trailing bytes, a stray bracket, multi-byte text', async () => {
    assert.deepEqual(await prepareBody(Buffer.from(' [ ] '), TARGET, { wholeParseLimit: ELEMENTWISE }), { request: { projectId: TARGET.projectId, sizes: [], chunks: [] }, positions: [], rejected: [] });
    for (const bad of ['[] x', '[1]]', '[{"a":1}}, 2]', '[1,]', '[,1]', '[', '[1', '["\\"]']) {
      assert.equal(await outcome(() => prepareBody(Buffer.from(bad), TARGET, { wholeParseLimit: ELEMENTWISE })), 'rejected', bad);
    }
    const text = JSON.stringify([{ level: 'info', event: 'ünï😀,]', timestamp: '2025-01-01T00:00:00Z' }]);
    const [chunk] = (await prepareBody(Buffer.from(text), TARGET, { wholeParseLimit: ELEMENTWISE })).request.chunks;
    assert.deepEqual(decodeRows(chunk!)[0]!.slice(0, 2), [TARGET.projectId, TARGET.receivedAt]);
    assert.equal(decodeRows(chunk!)[0]![5], JSON.stringify(JSON.parse(text)[0]));
  });
});

describe('NDJSON ingestion bodies', () => {
  it('prepares what the JSON array of the same entries gives (property)', async () => {
    const lines = fc.array(fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.integer().map(entry)), { maxLength: 12 }).chain((values) =>
      fc.constantFrom('\n', '\r\n', '\n \n', '\n\t\r\n').map((end) => ({ values, text: values.map((v) => JSON.stringify(v)).join(end) + end })),
    );
    await fc.assert(
      fc.asyncProperty(lines, async ({ values, text }) => {
        assert.deepEqual(await prepareBody(Buffer.from(text), TARGET, { format: 'ndjson' }), prepareBatch(values, TARGET));
      }),
      { numRuns: 300 },
    );
  });

  it('rejects a line that is not JSON as its own index, counting only non-blank lines', async () => {
    const text = `\n${JSON.stringify(entry(0))}\n   \n{"level": \r\n${JSON.stringify(entry(2))}`;
    const batch = await prepareBody(Buffer.from(text), TARGET, { format: 'ndjson' });
    assert.deepEqual(batch.positions, [0, 2]);
    assert.deepEqual(batch.rejected, [{ index: 1, error: 'validation_error', message: 'The line is not valid JSON.' }]);
    assert.deepEqual(await prepareBody(Buffer.from(' \n\r\n'), TARGET, { format: 'ndjson' }), prepareBatch([], TARGET));
  });
});
