/**
 * The real OpenTelemetry JavaScript SDK shipping to POST /v1/otlp/v1/logs on
 * both backends: `@opentelemetry/sdk-logs` with the OTLP/JSON exporter
 * (`@opentelemetry/exporter-logs-otlp-http`) and the protobuf one
 * (`@opentelemetry/exporter-logs-otlp-proto`), batched or one by one,
 * gzip or not. Every record is then found through GET /v1/logs under the
 * documented mapping, and through a live stream opened beforehand.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { BatchLogRecordProcessor, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { createGroup, createKey, createProject } from '../support/actors.js';
import { queryAllPages } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';

type ExporterConfig = NonNullable<ConstructorParameters<typeof JsonExporter>[0]>;
const GZIP = 'gzip' as ExporterConfig['compression'];

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';
const AT = Date.UTC(2025, 0, 2, 3, 4, 5, 678);

interface Shipper {
  name: string;
  exporter: (url: string, secret: string) => JsonExporter | ProtoExporter;
  batched: boolean;
}

const SHIPPERS: Shipper[] = [
  {
    name: 'json-batch-gzip',
    batched: true,
    exporter: (url, secret) => new JsonExporter({ url, headers: { Authorization: `Bearer ${secret}` }, compression: GZIP }),
  },
  { name: 'proto-simple', batched: false, exporter: (url, secret) => new ProtoExporter({ url, headers: { Authorization: `Bearer ${secret}` } }) },
  {
    name: 'proto-batch-gzip',
    batched: true,
    exporter: (url, secret) => new ProtoExporter({ url, headers: { Authorization: `Bearer ${secret}` }, compression: GZIP }),
  },
];

/** Logs six records through the SDK and shuts it down (which flushes). */
async function ship(shipper: Shipper, base: string, secret: string): Promise<void> {
  const exporter = shipper.exporter(`${base}/v1/otlp/v1/logs`, secret);
  const processor = shipper.batched ? new BatchLogRecordProcessor({ exporter, scheduledDelayMillis: 60_000 }) : new SimpleLogRecordProcessor({ exporter });
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': `shop-${shipper.name}`, 'deployment.environment': 'test' }),
    processors: [processor],
  });
  const logger = provider.getLogger('checkout', '1.4.0');
  const traced = trace.setSpanContext(context.active(), { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 });
  logger.emit({
    severityNumber: SeverityNumber.DEBUG,
    severityText: 'DEBUG',
    body: 'cart loaded',
    timestamp: AT,
    attributes: { request_id: 'req-1', 'cart.items': 3 },
  });
  logger.emit({
    severityNumber: SeverityNumber.INFO,
    body: 'order placed',
    timestamp: AT + 1,
    attributes: { request_id: 'req-1', session_id: 'sess-9', 'order.id': 'o-42' },
  });
  logger.emit({
    severityNumber: SeverityNumber.WARN,
    body: 'payment slow',
    timestamp: AT + 2,
    context: traced,
    attributes: { operation_id: 'op-7', connection_generation: 2 },
  });
  logger.emit({
    severityNumber: SeverityNumber.ERROR,
    body: { error: 'card declined', code: 402 },
    timestamp: AT + 3,
    attributes: { tool_call_id: 'tc-1', message_id: 'm-1' },
  });
  logger.emit({ severityNumber: SeverityNumber.FATAL, body: 'database unreachable', timestamp: AT + 4 });
  logger.emit({ severityText: 'warning', body: 'text only', timestamp: AT + 5 });
  await provider.shutdown();
}

describeEachBackend('OpenTelemetry SDK → POST /v1/otlp/v1/logs', (backend) => {
  const projects = new Map<string, number>();
  const streams = new Map<string, RawStream>();

  after(async () => {
    for (const stream of streams.values()) stream.close();
  });
  const app = serviceWithAdmin(backend);
  before(async () => {
    const group = await createGroup(app.url, app.admin.token, 'otel');
    for (const shipper of SHIPPERS) {
      const project = await createProject(app.url, app.admin.token, group, `otel-${shipper.name}`);
      const { secret } = await createKey(app.url, app.admin.token, project);
      projects.set(shipper.name, project);
      streams.set(shipper.name, assertOpen(await openRawStream(app.url, `/v1/logs/stream?project_id=${project}`, { token: app.admin.token })));
      await ship(shipper, app.url, secret);
    }
  });

  async function find(shipper: Shipper, params: [string, string][] = []): Promise<any[]> {
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(projects.get(shipper.name))], ...params], 100);
    return items;
  }

  for (const shipper of SHIPPERS) {
    it(`${shipper.name}: stores every record with level, event, logger and timestamp mapped`, async () => {
      const items = await find(shipper);
      const seen = items.map((item) => [item.event, item.level, item.logger, item.timestamp]).sort((a, b) => a[3].localeCompare(b[3]));
      assert.deepEqual(seen, [
        ['cart loaded', 'debug', 'checkout', '2025-01-02T03:04:05.678Z'],
        ['order placed', 'info', 'checkout', '2025-01-02T03:04:05.679Z'],
        ['payment slow', 'warning', 'checkout', '2025-01-02T03:04:05.680Z'],
        ['{"error":"card declined","code":402}', 'error', 'checkout', '2025-01-02T03:04:05.681Z'],
        ['database unreachable', 'critical', 'checkout', '2025-01-02T03:04:05.682Z'],
        ['text only', 'warning', 'checkout', '2025-01-02T03:04:05.683Z'],
      ]);
    });

    it(`${shipper.name}: takes the correlation fields from attributes and filters on them`, async () => {
      assert.deepEqual((await find(shipper, [['request_id', 'req-1']])).map((i) => i.event).sort(), ['cart loaded', 'order placed']);
      assert.deepEqual(
        (await find(shipper, [['session_id', 'sess-9']])).map((i) => i.event),
        ['order placed'],
      );
      assert.deepEqual(
        (await find(shipper, [['operation_id', 'op-7']])).map((i) => i.event),
        ['payment slow'],
      );
      assert.deepEqual(
        (await find(shipper, [['connection_generation', '2']])).map((i) => i.event),
        ['payment slow'],
      );
      assert.deepEqual(
        (await find(shipper, [['tool_call_id', 'tc-1']])).map((i) => i.level),
        ['error'],
      );
      assert.deepEqual(
        (await find(shipper, [['message_id', 'm-1']])).map((i) => i.level),
        ['error'],
      );
    });

    it(`${shipper.name}: keeps resource and record attributes, trace context and a structured body, reachable with context.`, async () => {
      const all = await find(shipper, [['context.resource.service.name', `shop-${shipper.name}`]]);
      assert.equal(all.length, 6);
      assert.equal(all[0].resource.deployment.environment, 'test');
      assert.equal(all[0].scope_version, '1.4.0');
      assert.deepEqual(
        (await find(shipper, [['context.attributes.order.id', 'o-42']])).map((i) => i.event),
        ['order placed'],
      );
      assert.deepEqual(
        (await find(shipper, [['context.attributes.cart.items', '3']])).map((i) => i.event),
        ['cart loaded'],
      );
      const [slow] = await find(shipper, [['context.trace_id', TRACE_ID]]);
      assert.equal(slow.event, 'payment slow');
      assert.equal(slow.span_id, SPAN_ID);
      assert.equal(slow.flags, 1);
      const [declined] = await find(shipper, [['context.body.code', '402']]);
      assert.deepEqual(declined.body, { error: 'card declined', code: 402 });
    });

    it(`${shipper.name}: shows every record to a live stream opened before`, async () => {
      const logs = await streams.get(shipper.name)!.waitForLogs(6);
      const stored = await find(shipper);
      assert.deepEqual(logs.map((l) => l.id).sort(), stored.map((i) => i.id).sort());
      assert.deepEqual(
        logs.find((l) => l.event === 'payment slow'),
        stored.find((i) => i.event === 'payment slow'),
      );
    });
  }
});
