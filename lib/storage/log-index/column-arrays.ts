/**
 * Entry rows as the server backend inserts them: columns in PostgreSQL's
 * binary array format, bound as bytes and read by `unnest`
 * (postgres/log-entries.ts). PostgreSQL parsing the rows' JSON text
 * (`jsonb_array_elements`) cost about as much as the insert itself; binary
 * arrays are taken in as they are (a length, then the value, per element).
 *
 * A chunk's columns are encoded where it is prepared (encoded-entries.ts),
 * one buffer per chunk: the elements of its `ts`, `level`, `bytes` and
 * `body` arrays one after another. The insert joins the chunks of a part
 * under each array's header, and adds `project_id` and `received_at`,
 * which are the same for every entry of a chunk.
 */

/** Element type ids (PostgreSQL's `pg_type` oids), which an array's header names. */
const BYTEA_OID = 17;
const INT8_OID = 20;
const INT2_OID = 21;
const INT4_OID = 23;
const TEXT_OID = 25;

/** Bytes per element of each fixed-size column: a 4-byte length, then the value. */
const TS_ELEMENT = 12;
const LEVEL_ELEMENT = 6;
const BYTES_ELEMENT = 8;
const FIXED_PER_ENTRY = TS_ELEMENT + LEVEL_ELEMENT + BYTES_ELEMENT;
/** A one-dimensional array's header: dimensions, null flag, element type, length, lower bound. */
const HEADER = 20;

/** A chunk's entries as column elements (see above), with what all of them share. */
export interface ChunkColumns {
  projectId: number;
  receivedAt: number;
  count: number;
  /** Elements of ts (int8), level (int2), bytes (int4), then body (text), each array's in entry order. */
  elements: Uint8Array;
}

/** An entry's columns, as `encodeColumns` takes them. */
export interface ColumnEntry {
  timestamp: number;
  level: number;
  /** UTF-8 length of `body`. */
  bytes: number;
  body: string;
}

/** Encodes consecutive entries of one chunk (a buffer of its own, so it can be transferred). */
export function encodeColumns(projectId: number, receivedAt: number, entries: readonly ColumnEntry[]): ChunkColumns {
  const n = entries.length;
  let size = FIXED_PER_ENTRY * n;
  for (const e of entries) size += 4 + e.bytes;
  const out = Buffer.allocUnsafeSlow(size);
  let ts = 0;
  let level = TS_ELEMENT * n;
  let bytes = level + LEVEL_ELEMENT * n;
  let body = bytes + BYTES_ELEMENT * n;
  for (const e of entries) {
    out.writeInt32BE(8, ts);
    out.writeBigInt64BE(BigInt(e.timestamp), ts + 4);
    ts += TS_ELEMENT;
    out.writeInt32BE(2, level);
    out.writeInt16BE(e.level, level + 4);
    level += LEVEL_ELEMENT;
    out.writeInt32BE(4, bytes);
    out.writeInt32BE(e.bytes, bytes + 4);
    bytes += BYTES_ELEMENT;
    const written = out.write(e.body, body + 4, 'utf8');
    out.writeInt32BE(written, body);
    body += 4 + written;
  }
  return { projectId, receivedAt, count: n, elements: new Uint8Array(out.buffer, out.byteOffset, body) };
}

/** The same from decoded rows (rows of one project and arrival, as a chunk holds). */
export function columnsOfRows(
  rows: readonly (readonly [projectId: number, receivedAt: number, ts: number, level: number, bytes: number, body: string])[],
): ChunkColumns {
  const [projectId, receivedAt] = rows[0] ?? [0, 0];
  return encodeColumns(
    projectId,
    receivedAt,
    rows.map(([, , timestamp, level, bytes, body]) => ({ timestamp, level, bytes, body })),
  );
}

/** The six arrays of one insert (project_id, received_at, ts, level, bytes, body), from chunks in entry order. */
export function columnArrays(chunks: readonly ChunkColumns[]): Buffer[] {
  const total = chunks.reduce((n, c) => n + c.count, 0);
  const project = arrayOf(INT8_OID, total, total * TS_ELEMENT);
  const received = arrayOf(INT8_OID, total, total * TS_ELEMENT);
  let at = HEADER;
  for (const c of chunks) {
    for (let i = 0; i < c.count; i++, at += TS_ELEMENT) {
      project.writeInt32BE(8, at);
      project.writeBigInt64BE(BigInt(c.projectId), at + 4);
      received.writeInt32BE(8, at);
      received.writeBigInt64BE(BigInt(c.receivedAt), at + 4);
    }
  }
  const regions = chunks.map((c) => {
    const n = c.count;
    const e = c.elements;
    const levelAt = TS_ELEMENT * n;
    const bytesAt = levelAt + LEVEL_ELEMENT * n;
    const bodyAt = bytesAt + BYTES_ELEMENT * n;
    return { ts: e.subarray(0, levelAt), level: e.subarray(levelAt, bytesAt), bytes: e.subarray(bytesAt, bodyAt), body: e.subarray(bodyAt) };
  });
  const joined = (oid: number, pick: (r: (typeof regions)[number]) => Uint8Array): Buffer => {
    const parts = regions.map(pick);
    const out = arrayOf(
      oid,
      total,
      parts.reduce((n, p) => n + p.length, 0),
    );
    let to = HEADER;
    for (const p of parts) {
      out.set(p, to);
      to += p.length;
    }
    return out;
  };
  return [
    project,
    received,
    joined(INT8_OID, (r) => r.ts),
    joined(INT2_OID, (r) => r.level),
    joined(INT4_OID, (r) => r.bytes),
    joined(TEXT_OID, (r) => r.body),
  ];
}

/** A one-dimensional `bytea[]` of these bytes, in binary format. */
export function byteaArray(items: readonly Uint8Array[]): Buffer {
  const out = arrayOf(
    BYTEA_OID,
    items.length,
    items.reduce((n, b) => n + 4 + b.length, 0),
  );
  let at = HEADER;
  for (const b of items) {
    out.writeInt32BE(b.length, at);
    out.set(b, at + 4);
    at += 4 + b.length;
  }
  return out;
}

/** A buffer for a one-dimensional array of `count` elements taking `elementBytes`, its header written. */
function arrayOf(oid: number, count: number, elementBytes: number): Buffer {
  const out = Buffer.allocUnsafe(HEADER + elementBytes);
  out.writeInt32BE(1, 0);
  out.writeInt32BE(0, 4);
  out.writeInt32BE(oid, 8);
  out.writeInt32BE(count, 12);
  out.writeInt32BE(1, 16);
  return out;
}
