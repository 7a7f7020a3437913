/**
 * Sealing and reading sealed blocks, the parts both backends share
 * (docs/storage-format.md): `sealRun` turns a run of one project's tail
 * entries into everything the seal transaction inserts (the block's bytes,
 * the columns of its row, its filter's shards); `probeFrames` and
 * `sealedCandidates` are the query side: which frames of a block may hold
 * a filter's terms, and which of their entries to check.
 */
import { entryMatcher } from '../../search/entry-match.js';
import type { LogFilter } from '../../search/log-filter.js';
import { allFrames, buildBlockFilterFromHashes, framesMaybeHolding, termProbe, type TermProbe } from './block-filter.js';
import {
  decodeSealedBlock,
  encodeSealedBlock,
  SEAL_FRAME_ENTRIES,
  type SealDictionary,
  type SealedEntry,
  type SealedHeader,
  type SealInput,
} from './sealed-block.js';
import { sealedFilterTerms } from './sealed-terms.js';
import { addEntryTermHashes, FrameTermHashes } from './term-hashes.js';

/** What a seal transaction inserts for one run (besides deleting the run's tail rows). */
export interface SealedRun {
  firstId: number;
  lastId: number;
  count: number;
  /** Smallest and largest `ts` and `received_at` of the run. */
  minTs: number;
  maxTs: number;
  minReceivedAt: number;
  maxReceivedAt: number;
  /** Bit L set when an entry of level L is in the run. */
  levels: number;
  /** Sum of the entries' stored lengths in bytes (what quotas count). */
  bytes: number;
  /** The sealed block (sealed-block.ts). */
  block: Uint8Array;
  /** The filter's shards, index = shard number (block-filter.ts). */
  shards: Uint8Array[];
}

/**
 * Seals a run of one project's tail entries (ids increasing, at most
 * SEAL_MAX_ENTRIES; see `cutSealRuns`). Pure CPU: a backend runs it off the
 * event loop's busy path (between its other work, or in a worker) and then
 * writes the result in one transaction.
 */
export function sealRun(entries: readonly SealInput[], dictionary: SealDictionary | null): SealedRun {
  const block = encodeSealedBlock(entries, dictionary);
  const frames: FrameTermHashes[] = [];
  let levels = 0;
  let bytes = 0;
  let minTs = Infinity;
  let maxTs = -Infinity;
  let minReceivedAt = Infinity;
  let maxReceivedAt = -Infinity;
  entries.forEach((e, i) => {
    if (i % SEAL_FRAME_ENTRIES === 0) frames.push(new FrameTermHashes());
    addEntryTermHashes(JSON.parse(e.body) as Record<string, unknown>, frames[frames.length - 1]!);
    levels |= 1 << e.level;
    bytes += Buffer.byteLength(e.body, 'utf8');
    minTs = Math.min(minTs, e.ts);
    maxTs = Math.max(maxTs, e.ts);
    minReceivedAt = Math.min(minReceivedAt, e.receivedAt);
    maxReceivedAt = Math.max(maxReceivedAt, e.receivedAt);
  });
  return {
    firstId: entries[0]!.id,
    lastId: entries[entries.length - 1]!.id,
    count: entries.length,
    minTs,
    maxTs,
    minReceivedAt,
    maxReceivedAt,
    levels,
    bytes,
    block,
    shards: buildBlockFilterFromHashes(frames.map((f) => f.done())),
  };
}

/** A filter's probes (one per term), computed once per query. */
export function filterProbes(filter: Pick<LogFilter, 'words' | 'prefixes' | 'exact'>): TermProbe[] {
  return sealedFilterTerms(filter).map(termProbe);
}

/** The shards a query reads per block: one per distinct shard of its probes. */
export function probeShards(probes: readonly TermProbe[]): number[] {
  return [...new Set(probes.map((p) => p.shard))].sort((a, b) => a - b);
}

/**
 * The frames of a block of `frames` frames that may hold every probe's
 * term (bit f for frame f), given the block's shards the query read
 * (`shardOf(n)`: shard n's bytes). No probes: every frame.
 */
export function probeFrames(probes: readonly TermProbe[], frames: number, shardOf: (shard: number) => Uint8Array): number {
  let mask = allFrames(frames);
  for (const p of probes) {
    if (mask === 0) break;
    mask &= framesMaybeHolding(shardOf(p.shard), p);
  }
  return mask;
}

/** The levels bit mask of entries at `minLevel` or above (null: all). */
export function levelMask(minLevel: number | null): number {
  return minLevel === null ? 0xff : 0xff & ~((1 << minLevel) - 1);
}

/**
 * The entries of a sealed block that match `filter`, newest first, with
 * ids in [`afterId` + 1, `beforeId` − 1]: only the frames in `mask` are
 * inflated, and only the entries whose header (id, level, ts) fits are
 * parsed and checked against the filter itself, so the answer is exact
 * whatever the filter said.
 */
export function sealedCandidates(
  block: Uint8Array,
  dictionary: SealDictionary | null,
  mask: number,
  filter: LogFilter,
  bounds: { afterId: number; beforeId: number },
  /** The block's header, when the caller has read it already (reading it costs more than most frames' checks). */
  header?: SealedHeader,
): SealedEntry[] {
  const matches = entryMatcher(filter);
  const levels = levelMask(filter.minLevel);
  const from = filter.from ?? -Infinity;
  const to = filter.to ?? Infinity;
  const entries = decodeSealedBlock(
    block,
    dictionary,
    (i, header) => {
      if ((mask & (1 << Math.floor(i / header.frameEntries))) === 0) return false;
      const id = header.ids[i]!;
      const ts = header.ts[i]!;
      return id > bounds.afterId && id < bounds.beforeId && (levels & (1 << header.levels[i]!)) !== 0 && ts >= from && ts <= to;
    },
    header,
  );
  const out = matches === null ? entries : entries.filter((e) => matches(e.body));
  return out.reverse();
}
