/**
 * Blocks sealed while a request is prepared (lib/storage/log-index/presealed.ts):
 * given the ids the transaction draws, a presealed block is byte for byte
 * the block sealing those entries with those ids makes, with the same
 * filter; runs are cut as a tail's are; small requests are not sealed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PRESEAL_MIN_ENTRIES, PresealCollector, withIds } from '../../lib/storage/log-index/presealed.js';
import { sealRun } from '../../lib/storage/log-index/seal-run.js';
import { buildDictionary, decodeSealedBlock, SEAL_MAX_ENTRIES } from '../../lib/storage/log-index/sealed-block.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { mixedEntries } from '../support/logs.js';

const RECEIVED = Date.UTC(2025, 5, 1, 12);

describe('presealed blocks', () => {
  const { entries } = entriesFromValues(mixedEntries(1300, 5));
  const dictionary = { id: 3, bytes: buildDictionary(entries.slice(0, 200).map((e) => e.body)) };

  function collect(count: number) {
    const collector = new PresealCollector(RECEIVED, dictionary);
    for (const e of entries.slice(0, count)) collector.add(e);
    return collector.finish();
  }

  it('are the blocks sealing the same entries with the drawn ids makes, whether the ids are consecutive or not', () => {
    const blocks = collect(1300)!;
    assert.deepEqual(
      blocks.map((b) => b.count),
      [SEAL_MAX_ENTRIES, 1300 - SEAL_MAX_ENTRIES],
    );
    let at = 0;
    for (const block of blocks) {
      const part = entries.slice(at, at + block.count);
      for (const ids of [part.map((_, i) => 5_000 + at + i), part.map((_, i) => 2 ** 40 + (at + i) * 1000 + (i % 7))]) {
        const placed = withIds(block, ids);
        const sealed = sealRun(
          part.map((e, i) => ({ id: ids[i]!, receivedAt: RECEIVED, ts: e.timestamp, level: e.level, body: e.body })),
          dictionary,
        );
        assert.deepEqual(Buffer.from(placed.block), Buffer.from(sealed.block), 'the same block bytes');
        assert.deepEqual(
          placed.shards.map((s) => Buffer.from(s)),
          sealed.shards.map((s) => Buffer.from(s)),
          'the same filter',
        );
        assert.deepEqual(
          { first: placed.firstId, last: placed.lastId, bytes: placed.bytes, levels: placed.levels, minTs: placed.minTs, maxTs: placed.maxTs },
          { first: sealed.firstId, last: sealed.lastId, bytes: sealed.bytes, levels: sealed.levels, minTs: sealed.minTs, maxTs: sealed.maxTs },
        );
        const decoded = decodeSealedBlock(placed.block, dictionary);
        assert.deepEqual(
          decoded.map((d) => [d.id, d.body]),
          part.map((e, i) => [ids[i], e.body]),
        );
      }
      at += block.count;
    }
  });

  it('seals nothing for a request below the threshold, and refuses ids that do not fit', () => {
    assert.equal(collect(PRESEAL_MIN_ENTRIES - 1), null);
    const [block] = collect(PRESEAL_MIN_ENTRIES)!;
    assert.equal(block!.count, PRESEAL_MIN_ENTRIES);
    assert.throws(() => withIds(block!, [1, 2, 3]), RangeError);
    assert.throws(
      () =>
        withIds(
          block!,
          Array.from({ length: PRESEAL_MIN_ENTRIES }, () => 7),
        ),
      RangeError,
    );
  });

  it('gives every block a buffer of its own (they are transferred between threads)', () => {
    // A tiny last block (one entry) would otherwise sit in Buffer's shared pool.
    const blocks = collect(SEAL_MAX_ENTRIES + 1)!;
    for (const b of blocks) assert.equal(b.block.buffer.byteLength, b.block.byteLength);
  });
});
