/**
 * Reading only the parts of sealed blocks a query inflates (SealedReads
 * `blockFrames`). A block travels from PostgreSQL as hex text, twice its
 * size, so a rare word's query spent most of its time moving whole blocks
 * (~70–90 kB each) to inflate one frame (~10 kB) of each. Blocks are
 * stored uncompressed out of line (STORAGE EXTERNAL), so `substring` reads
 * only the slices asked for: first each block's leading HEAD_BYTES (its
 * header, ~6 kB for 1,024 entries) and length, then, in one statement, the
 * wanted frames beyond them. A header longer than HEAD_BYTES is read whole
 * with its block instead. The statements share one snapshot (a read-only
 * repeatable-read transaction): retention rewrites a partly expired block
 * under the same key, and a header and frames of two versions must never
 * meet.
 */
import pgPromise from 'pg-promise';
import type { SqlExecutor } from './connection.js';
import { readSealedHeader, type SealedHeader } from '../log-index/sealed-block.js';

/** Leading bytes read first: a block's header and, usually, part of its first frame. */
export const HEAD_BYTES = 12 * 1024;

const HEADS = `SELECT last_id AS "lastId", length(block) AS size, substring(block FROM 1 FOR $3) AS head
  FROM log_sealed WHERE project_id = $1 AND last_id = ANY($2::bigint[])`;

/** Slices of blocks: (last_id, offset, length) triples, offsets from 0. */
const SLICES = `SELECT p.last_id AS "lastId", p.off, substring(s.block FROM p.off + 1 FOR p.len) AS part
  FROM unnest($2::bigint[], $3::int[], $4::int[]) AS p (last_id, off, len)
  JOIN log_sealed s ON s.project_id = $1 AND s.last_id = p.last_id`;

const WHOLE = `SELECT last_id AS "lastId", block FROM log_sealed WHERE project_id = $1 AND last_id = ANY($2::bigint[])`;

const { TransactionMode, isolationLevel } = pgPromise.txMode;
const ONE_SNAPSHOT = new TransactionMode({ tiLevel: isolationLevel.repeatableRead, readOnly: true });

const view = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

/** The header read from a block's first bytes, or null when it runs past them. */
function headerOf(head: Uint8Array, size: number): SealedHeader | null {
  try {
    return readSealedHeader(head, size);
  } catch {
    return null;
  }
}

/** Each wanted block as long as it is, holding its header and the frames of its mask (blocks gone since are left out). */
export async function blockFrames(db: SqlExecutor, projectId: number, wants: readonly { lastId: number; frames: number }[]): Promise<Map<number, Uint8Array>> {
  if (wants.length === 0) return new Map();
  return db.tx({ mode: ONE_SNAPSHOT }, (t) => readFrames(t, projectId, wants));
}

async function readFrames(db: SqlExecutor, projectId: number, wants: readonly { lastId: number; frames: number }[]): Promise<Map<number, Uint8Array>> {
  const out = new Map<number, Uint8Array>();
  const maskOf = new Map(wants.map((w) => [w.lastId, w.frames]));
  const heads = await db.any<{ lastId: string | number; size: number; head: Buffer }>(HEADS, [projectId, [...maskOf.keys()], HEAD_BYTES]);
  const whole: number[] = [];
  const slices = { lastIds: [] as number[], offsets: [] as number[], lengths: [] as number[] };
  for (const row of heads) {
    const lastId = Number(row.lastId);
    const head = view(row.head);
    const header = headerOf(head, row.size);
    if (header === null) {
      whole.push(lastId);
      continue;
    }
    const block = new Uint8Array(row.size);
    block.set(head);
    out.set(lastId, block);
    const mask = maskOf.get(lastId)!;
    // Runs of wanted frames past the head, each read as one slice.
    let from = -1;
    let to = -1;
    const flush = () => {
      if (from < 0) return;
      slices.lastIds.push(lastId);
      slices.offsets.push(from);
      slices.lengths.push(to - from);
      from = -1;
    };
    header.frames.forEach((frame, f) => {
      const start = Math.max(frame.offset, head.length);
      const end = frame.offset + frame.length;
      if ((mask & (1 << f)) === 0 || end <= start) {
        flush();
        return;
      }
      if (from < 0) from = start;
      to = end;
    });
    flush();
  }
  if (slices.lastIds.length > 0) {
    const parts = await db.any<{ lastId: string | number; off: number; part: Buffer }>(SLICES, [projectId, slices.lastIds, slices.offsets, slices.lengths]);
    for (const p of parts) out.get(Number(p.lastId))?.set(view(p.part), p.off);
  }
  if (whole.length > 0) {
    for (const row of await db.any<{ lastId: string | number; block: Buffer }>(WHOLE, [projectId, whole])) out.set(Number(row.lastId), view(row.block));
  }
  return out;
}
