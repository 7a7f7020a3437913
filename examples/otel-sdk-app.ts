/**
 * An application logging through the OpenTelemetry SDK, exported to logkeep
 * over OTLP/HTTP: the endpoint is `{base}/v1/otlp/v1/logs`, the project key
 * goes in the Authorization header. The protobuf exporter is used here;
 * `@opentelemetry/exporter-logs-otlp-http` (OTLP/JSON) takes the same
 * options.
 *
 *   LOGKEEP_URL=http://localhost:8080 LOGKEEP_KEY=slk_… npx tsx examples/otel-sdk-app.ts
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';

type ExporterOptions = NonNullable<ConstructorParameters<typeof OTLPLogExporter>[0]>;

export interface OtelAppOptions {
  /** The service's base address (with its path prefix, if mounted under one). */
  url: string;
  /** The project's secret key, `slk_…`. */
  secretKey: string;
  /** How many simulated requests to log (default 10). */
  requests?: number;
}

/** Logs a few simulated requests through the SDK, then shuts it down (which exports what is batched). */
export async function main(options: OtelAppOptions): Promise<void> {
  const provider = new LoggerProvider({
    // Resource attributes arrive as `resource.service.name` etc. (filter with `context.resource.service.name=shop`).
    resource: resourceFromAttributes({ 'service.name': 'shop', 'service.version': '1.0.0' }),
    processors: [
      new BatchLogRecordProcessor({
        exporter: new OTLPLogExporter({
          url: `${options.url}/v1/otlp/v1/logs`,
          headers: { Authorization: `Bearer ${options.secretKey}` },
          compression: 'gzip' as ExporterOptions['compression'],
        }),
      }),
    ],
  });
  // The instrumentation scope's name becomes the entry's `logger`.
  const logger = provider.getLogger('http');

  const sessionId = randomUUID();
  for (let i = 0; i < (options.requests ?? 10); i++) {
    const requestId = randomUUID();
    const status = i % 5 === 3 ? 500 : 200;
    // Attributes named like logkeep's correlation fields fill them; the others are kept under `attributes`.
    logger.emit({
      severityNumber: status >= 500 ? SeverityNumber.ERROR : SeverityNumber.INFO,
      body: 'request finished',
      attributes: { session_id: sessionId, request_id: requestId, 'http.route': '/items/:id', 'http.status_code': status },
    });
  }

  // On shutdown: export what is batched, then stop.
  await provider.shutdown();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = process.env.LOGKEEP_URL ?? 'http://localhost:8080';
  const secretKey = process.env.LOGKEEP_KEY;
  if (!secretKey) {
    console.error('Set LOGKEEP_KEY to a project secret key (slk_…).');
    process.exit(1);
  }
  await main({ url, secretKey });
}
