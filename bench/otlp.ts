/**
 * OTLP/HTTP logs ingestion on the file backend, beside plain JSON arrays of
 * the same entries in the same run (500 per request, 4 connections, in
 * alternating windows): OTLP protobuf, target ≥ 0.6 × the plain rate, and
 * OTLP/JSON, target ≥ 0.5 ×. Each plain batch is turned into an
 * ExportLogsServiceRequest beforehand (level → severity number, event →
 * body, timestamp → time_unix_nano, logger → scope, every other field an
 * attribute), so only the server is measured.
 *
 * Standalone: `npm run build && node --import tsx bench/otlp.ts [--quick]`.
 */
import { createBatchPool } from './support/dataset.js';
import { OTLP } from '../lib/ingest/otlp/otlp-schema.js';
import { createOrg, fileDatabase, fmt, load, serviceSettings, startChild, verdict, type Shot } from './support/harness.js';

const BATCH = 500;
const SEVERITY: Record<string, number> = { debug: 5, info: 9, warning: 13, error: 17, critical: 21 };

type AnyValue = Record<string, unknown>;

function anyValue(value: unknown): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  if (value !== null && typeof value === 'object') return { kvlistValue: { values: Object.entries(value).map(([key, v]) => ({ key, value: anyValue(v) })) } };
  return {};
}

/** The OTLP/JSON export carrying the same entries as a plain batch. */
export function otlpExportOf(entries: Record<string, unknown>[]): Record<string, unknown> {
  const byLogger = new Map<string, Record<string, unknown>[]>();
  for (const entry of entries) {
    const { timestamp, level, event, logger, ...rest } = entry;
    const record = {
      timeUnixNano: `${Date.parse(timestamp as string)}000000`,
      severityNumber: SEVERITY[level as string],
      body: { stringValue: event },
      attributes: Object.entries(rest).map(([key, value]) => ({ key, value: anyValue(value) })),
    };
    const name = typeof logger === 'string' ? logger : '';
    const list = byLogger.get(name);
    if (list) list.push(record);
    else byLogger.set(name, [record]);
  }
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeLogs: [...byLogger].map(([name, logRecords]) => ({ scope: { name }, logRecords })),
      },
    ],
  };
}

function acceptedOtlp(entries: number) {
  return (status: number, text: string): number => {
    if (status !== 200) throw new Error(`OTLP export answered ${status}: ${text.slice(0, 200)}`);
    // An empty answer (`{}` or no protobuf bytes) means every record was stored.
    if (text !== '' && text !== '{}') throw new Error(`OTLP export refused records: ${text.slice(0, 200)}`);
    return entries;
  };
}

export async function benchOtlp(options: { quick: boolean }): Promise<void> {
  const pool = createBatchPool(options.quick ? 20 : 40, BATCH, 23);
  const plain = pool.bodies;
  const exports = plain.map((body) => otlpExportOf(JSON.parse(body.toString('utf8')) as Record<string, unknown>[]));
  const json = exports.map((e) => Buffer.from(JSON.stringify(e)));
  const proto = exports.map((e) => Buffer.from(OTLP.ExportLogsServiceRequest.encode(OTLP.ExportLogsServiceRequest.fromObject(e)).finish()));
  const db = fileDatabase();
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  const org = await createOrg(child.url, 10);
  const seconds = options.quick ? 3 : 6;
  const rounds = options.quick ? 1 : 2;
  const rates = { plain: 0, protobuf: 0, json: 0 };
  const run = async (kind: keyof typeof rates) => {
    let n = 0;
    const next = (): Shot => {
      const i = n++ % plain.length;
      const key = org.keys[n % org.keys.length]!;
      if (kind === 'plain') return { body: plain[i]!, entries: BATCH, key };
      const body = kind === 'protobuf' ? proto[i]! : json[i]!;
      const type = kind === 'protobuf' ? 'application/x-protobuf' : 'application/json';
      return { body, entries: BATCH, key, path: '/v1/otlp/v1/logs', headers: { 'content-type': type }, accepted: acceptedOtlp(BATCH) };
    };
    const deadline = Date.now() + seconds * 1000;
    const result = await load({ url: child.url, next, connections: 4, until: () => Date.now() > deadline });
    rates[kind] += result.rate / rounds;
  };
  for (let r = 0; r < rounds; r++) {
    await run('plain');
    await run('protobuf');
    await run('json');
  }
  await child.stop();
  await db.drop();
  const size = (bodies: Buffer[]) => bodies.reduce((a, b) => a + b.length, 0);
  const protoRatio = rates.protobuf / rates.plain;
  const jsonRatio = rates.json / rates.plain;
  console.log('OTLP/HTTP logs ingestion (file backend, 500 records per request, 4 connections)');
  console.log(`  plain JSON arrays: ${fmt(rates.plain)} entries/s`);
  console.log(
    `  OTLP protobuf (${fmt((100 * size(proto)) / size(plain), 1)} % of the bytes): ${fmt(rates.protobuf)} records/s = ${fmt(protoRatio, 2)} × plain — target ≥ 0.6: ${verdict(protoRatio >= 0.6)}`,
  );
  console.log(
    `  OTLP/JSON (${fmt((100 * size(json)) / size(plain), 1)} % of the bytes): ${fmt(rates.json)} records/s = ${fmt(jsonRatio, 2)} × plain — target ≥ 0.5: ${verdict(jsonRatio >= 0.5)}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchOtlp({ quick: process.argv.includes('--quick') });
}
