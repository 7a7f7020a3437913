/**
 * Random and hostile bodies for the ingestion routes (`POST /v1/logs` and
 * `POST /v1/otlp/v1/logs`), for the route fuzz: repeated pieces that cost
 * the most per byte (elements refused by the million, bad NDJSON lines,
 * numbers stored written out, deep nesting, long strings), OTLP exports
 * whose resource is copied into every record, empty groups by the hundred
 * thousand and times out of range, plain or gzip. Each body is small enough
 * that a run of dozens stays quick; the classes are what matters.
 */
import fc from 'fast-check';
import { OTLP } from '../../lib/ingest/otlp/otlp-schema.js';

/** What one ingestion request sends. */
export interface IngestFuzzBody {
  path: '/v1/logs' | '/v1/otlp/v1/logs';
  /** The body before Content-Encoding. */
  decoded: Buffer;
  contentType: string;
  gzip: boolean;
  /** For failure reports: what the body is made of. */
  what: string;
}

/** The largest decoded body generated (the service's limit is 10 MiB; the classes show at this size). */
const MAX_DECODED = 1024 * 1024;

const ENTRY_HEAD = '"level":"info","event":"fuzz","timestamp":"2025-01-01T00:00:00Z"';

/** One element of a plain batch, as text: valid, invalid, or costly to prepare. */
const piece = (text: string, name: string): fc.Arbitrary<[string, string]> => fc.constant<[string, string]>([text, name]);
const plainPiece: fc.Arbitrary<[string, string]> = fc.oneof(
  piece('0', 'zero'),
  piece('{}', 'empty object'),
  piece('"x"', 'string'),
  piece('x', 'not JSON'),
  piece(`{${ENTRY_HEAD}}`, 'valid entry'),
  // Stored written out: 21 digits for the 4 bytes sent.
  fc.integer({ min: 1, max: 200 }).map((n): [string, string] => [`{${ENTRY_HEAD},"n":[${Array(n).fill('9e20').join(',')}]}`, `entry of ${n} × 9e20`]),
  fc.integer({ min: 1, max: 300 }).map((d): [string, string] => [`{${ENTRY_HEAD},"d":${'['.repeat(d)}${']'.repeat(d)}}`, `entry nested ${d} deep`]),
  fc.integer({ min: 1, max: 200_000 }).map((k): [string, string] => [`{${ENTRY_HEAD},"s":"${'a '.repeat(k)}"}`, `entry of ${k} words`]),
  fc
    .integer({ min: 1, max: 2000 })
    .map((k): [string, string] => [`{${ENTRY_HEAD},${Array.from({ length: k }, (_, i) => `"k${i}":${i}`).join(',')}}`, `entry of ${k} keys`]),
  fc.json({ maxDepth: 3 }).map((text): [string, string] => [text, 'random JSON']),
);

/** A plain batch: one piece repeated, as a JSON array or NDJSON lines. */
const plainBody: fc.Arbitrary<IngestFuzzBody> = fc
  .record({ piece: plainPiece, count: fc.integer({ min: 1, max: 600_000 }), ndjson: fc.boolean(), gzip: fc.boolean() })
  .map(({ piece: [text, name], count, ndjson, gzip }) => {
    const n = Math.max(1, Math.min(count, Math.floor(MAX_DECODED / (text.length + 1))));
    const joined = Array(n)
      .fill(text)
      .join(ndjson ? '\n' : ',');
    return {
      path: '/v1/logs',
      decoded: Buffer.from(ndjson ? joined : `[${joined}]`),
      contentType: ndjson ? 'application/x-ndjson' : 'application/json',
      gzip,
      what: `${ndjson ? 'NDJSON' : 'JSON array'} of ${n} × ${name}${gzip ? ', gzip' : ''}`,
    };
  });

/** `timeUnixNano` values, good and out of range. */
const otlpTime = fc.constantFrom<unknown>(
  '1735689600000000000',
  '0',
  '18446744073709551615',
  '18446744073709551616',
  '9000000000000000000000',
  -1,
  9e21,
  'soon',
);

/** An OTLP export: a resource copied into every record, empty groups, records with times in and out of range. */
const otlpBody: fc.Arbitrary<IngestFuzzBody> = fc
  .record({
    resourceBytes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1024 * 1024 })),
    records: fc.integer({ min: 0, max: 3000 }),
    emptyScopes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 150_000 })),
    time: otlpTime,
    protobuf: fc.boolean(),
    gzip: fc.boolean(),
  })
  .map(({ resourceBytes, records, emptyScopes, time, protobuf, gzip }) => {
    const resource = resourceBytes === 0 ? {} : { attributes: [{ key: 'padding', value: { stringValue: 'x'.repeat(resourceBytes) } }] };
    const logRecords = Array.from({ length: records }, (_, i) => (i % 2 === 0 ? {} : { timeUnixNano: time, body: { stringValue: `r${i}` } }));
    const json = { resourceLogs: [{ resource, scopeLogs: [{ logRecords }, ...Array.from({ length: emptyScopes }, () => ({}))] }] };
    let decoded: Buffer;
    if (!protobuf) decoded = Buffer.from(JSON.stringify(json));
    else {
      // Protobuf has no room for a time that is not a uint64: those records carry a good one.
      const fit = typeof time === 'string' && /^[0-9]+$/.test(time) && BigInt(time) < 2n ** 64n ? time : '1735689600000000000';
      const proto = {
        resourceLogs: [
          {
            resource,
            scopeLogs: [
              { logRecords: logRecords.map((r) => ('timeUnixNano' in r ? { ...r, timeUnixNano: fit } : r)) },
              ...json.resourceLogs[0]!.scopeLogs.slice(1),
            ],
          },
        ],
      };
      decoded = Buffer.from(OTLP.ExportLogsServiceRequest.encode(OTLP.ExportLogsServiceRequest.fromObject(proto)).finish());
    }
    return {
      path: '/v1/otlp/v1/logs',
      decoded,
      contentType: protobuf ? 'application/x-protobuf' : 'application/json',
      gzip,
      what: `OTLP ${protobuf ? 'protobuf' : 'JSON'}: resource of ${resourceBytes} bytes, ${records} records (time ${JSON.stringify(time)}), ${emptyScopes} empty ScopeLogs${gzip ? ', gzip' : ''}`,
    };
  });

/** Bodies for one ingestion route. */
export function ingestBodyFor(path: string): fc.Arbitrary<IngestFuzzBody> {
  return path === '/v1/otlp/v1/logs' ? otlpBody : plainBody;
}
