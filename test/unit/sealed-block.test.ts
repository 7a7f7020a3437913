/**
 * Sealed blocks (lib/storage/log-index/sealed-block.ts): every entry comes
 * back byte for byte with its id, times and level; one entry is read by
 * inflating its own frame only; damaged blocks, blocks of another version
 * and a missing dictionary are refused rather than misread; runs are cut
 * within the block bounds.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildDictionary,
  cutSealRuns,
  decodeSealedBlock,
  decodeSealedEntry,
  encodeSealedBlock,
  MAX_DICTIONARY_BYTES,
  readSealedHeader,
  SEAL_FRAME_ENTRIES,
  SEAL_MAX_BYTES,
  SEAL_MAX_ENTRIES,
  SealedBlockError,
  type SealInput,
} from '../../lib/storage/log-index/sealed-block.js';

function entries(n: number, start = 1000): SealInput[] {
  const out: SealInput[] = [];
  let id = start;
  for (let i = 0; i < n; i++) {
    id += 1 + (i % 3); // ids of one project skip those of others
    const body = JSON.stringify({
      timestamp: new Date(1_700_000_000_000 + i * 7).toISOString(),
      level: 'info',
      zeta: i,
      alpha: `req-${i}`,
      nested: { b: [1, 'two', null], a: i % 2 === 0 },
    });
    out.push({ id, receivedAt: 1_700_000_000_000 + Math.floor(i / 10) * 5, ts: 1_700_000_000_000 + ((i * 7919) % 5000) - 2500, level: i % 5, body });
  }
  return out;
}

describe('sealed block codec', () => {
  it('returns every entry byte for byte, with its id, received_at, ts and level', () => {
    const input = entries(SEAL_MAX_ENTRIES);
    // Texts the encoder must not normalise: key order, spacing, escapes, non-ASCII, astral characters.
    input[3] = { ...input[3]!, body: '{"z":1,  "a":"\\u00e9t\\u00e9","é":"naïve 🚀","s":"line\\nbreak \\"quoted\\""}' };
    input[700] = { ...input[700]!, body: `{"big":"${'x'.repeat(100_000)}"}` };
    const block = encodeSealedBlock(input, null);
    const out = decodeSealedBlock(block, null);
    assert.deepEqual(out, input);
    assert.equal(Buffer.from(out[3]!.body).equals(Buffer.from(input[3]!.body)), true);
  });

  it('describes the entries in its header without inflating', () => {
    const input = entries(300);
    const header = readSealedHeader(encodeSealedBlock(input, null));
    assert.equal(header.version, 1);
    assert.equal(header.frameEntries, SEAL_FRAME_ENTRIES);
    assert.deepEqual(
      header.ids,
      input.map((e) => e.id),
    );
    assert.deepEqual(
      header.ts,
      input.map((e) => e.ts),
    );
    assert.deepEqual(
      header.receivedAt,
      input.map((e) => e.receivedAt),
    );
    assert.deepEqual(
      header.levels,
      input.map((e) => e.level),
    );
    assert.deepEqual(
      header.lengths,
      input.map((e) => Buffer.byteLength(e.body)),
    );
    assert.equal(header.frames.length, Math.ceil(300 / SEAL_FRAME_ENTRIES));
  });

  it('reads one entry by inflating only its frame', () => {
    const input = entries(3 * SEAL_FRAME_ENTRIES);
    const block = encodeSealedBlock(input, null);
    const header = readSealedHeader(block);
    // Damage the first frame: an entry of the second one still reads.
    const damaged = Uint8Array.from(block);
    damaged.fill(0xff, header.frames[0]!.offset, header.frames[0]!.offset + header.frames[0]!.length);
    const wanted = input[SEAL_FRAME_ENTRIES + 5]!;
    assert.deepEqual(decodeSealedEntry(damaged, wanted.id, null), wanted);
    assert.throws(() => decodeSealedEntry(damaged, input[0]!.id, null), SealedBlockError);
    assert.equal(decodeSealedEntry(block, input[0]!.id + 1_000_000, null), null);
  });

  it('decodes only the entries asked for', () => {
    const input = entries(400);
    const block = encodeSealedBlock(input, null);
    const out = decodeSealedBlock(block, null, (i) => i % 50 === 0);
    assert.deepEqual(
      out,
      input.filter((_, i) => i % 50 === 0),
    );
  });

  it('uses a preset dictionary, and refuses to read without the same one', () => {
    const input = entries(200);
    const dictionary = { id: 7, bytes: buildDictionary(entries(100, 5).map((e) => e.body)) };
    const withDict = encodeSealedBlock(input, dictionary);
    const without = encodeSealedBlock(input, null);
    assert.ok(withDict.length < without.length);
    assert.equal(readSealedHeader(withDict).dictionaryId, 7);
    assert.deepEqual(decodeSealedBlock(withDict, dictionary), input);
    assert.throws(() => decodeSealedBlock(withDict, null), /dictionary 7/);
    assert.throws(() => decodeSealedBlock(withDict, { id: 8, bytes: dictionary.bytes }), /dictionary 7/);
  });

  it('refuses a block of another version, a truncated one and a malformed one', () => {
    const block = encodeSealedBlock(entries(10), null);
    const newer = Uint8Array.from(block);
    newer[0] = 2;
    assert.throws(() => readSealedHeader(newer), /format version 2/);
    assert.throws(() => readSealedHeader(block.subarray(0, block.length - 1)), SealedBlockError);
    assert.throws(() => readSealedHeader(block.subarray(0, 20)), SealedBlockError);
    const longer = new Uint8Array(block.length + 1);
    longer.set(block);
    assert.throws(() => readSealedHeader(longer), SealedBlockError);
  });

  it('refuses runs it cannot seal', () => {
    assert.throws(() => encodeSealedBlock([], null), RangeError);
    assert.throws(() => encodeSealedBlock(entries(SEAL_MAX_ENTRIES + 1), null), RangeError);
    const [a, b] = entries(2);
    assert.throws(() => encodeSealedBlock([b!, a!], null), /increase/);
  });

  it('keeps times before 1970 and ids up to 2^53 exact', () => {
    const input: SealInput[] = [
      { id: 2 ** 53 - 3, receivedAt: 0, ts: -62_135_596_800_000, level: 0, body: '{}' },
      { id: 2 ** 53 - 1, receivedAt: 5, ts: 253_402_300_799_999, level: 4, body: '[]' },
    ];
    assert.deepEqual(decodeSealedBlock(encodeSealedBlock(input, null), null), input);
  });
});

describe('seal runs and dictionaries', () => {
  it('cuts runs of at most SEAL_MAX_ENTRIES and keeps a part-filled last run in the tail', () => {
    const input = entries(2 * SEAL_MAX_ENTRIES + 10);
    const full = cutSealRuns(input, false);
    assert.deepEqual(
      full.map((r) => r.length),
      [SEAL_MAX_ENTRIES, SEAL_MAX_ENTRIES],
    );
    assert.deepEqual(
      cutSealRuns(input, true).map((r) => r.length),
      [SEAL_MAX_ENTRIES, SEAL_MAX_ENTRIES, 10],
    );
    assert.deepEqual(cutSealRuns(input, true).flat(), input);
  });

  it('cuts before SEAL_MAX_BYTES, and gives an entry larger than that a run of its own', () => {
    const big = (id: number, bytes: number) => ({ id, body: 'x'.repeat(bytes) });
    const runs = cutSealRuns([big(1, SEAL_MAX_BYTES / 2), big(2, SEAL_MAX_BYTES / 2), big(3, 10), big(4, SEAL_MAX_BYTES + 1), big(5, 10)], true);
    assert.deepEqual(
      runs.map((r) => r.map((e) => e.id)),
      [[1, 2], [3], [4], [5]],
    );
  });

  it('builds a dictionary of whole entries within MAX_DICTIONARY_BYTES', () => {
    const bodies = entries(2000).map((e) => e.body);
    const dict = Buffer.from(buildDictionary(bodies));
    assert.ok(dict.length <= MAX_DICTIONARY_BYTES && dict.length > MAX_DICTIONARY_BYTES / 2);
    assert.ok(dict.toString().endsWith(bodies[bodies.length - 1]!));
    assert.equal(buildDictionary([]).length, 0);
    assert.equal(buildDictionary([`{"x":"${'y'.repeat(40_000)}"}`]).length, MAX_DICTIONARY_BYTES);
  });
});

describe('sealed block headers', () => {
  it('refuses a header naming more frames than a filter describes', () => {
    const block = Uint8Array.from(encodeSealedBlock(entries(SEAL_MAX_ENTRIES), null));
    // Entries per frame (bytes 2–3) set to 1: 1,024 frames.
    block[2] = 1;
    block[3] = 0;
    assert.throws(() => readSealedHeader(block), /malformed header/);
  });
});
