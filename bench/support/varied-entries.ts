/**
 * Varied, realistic log entries for the disk and codec benchmarks, ~465 B
 * of JSON on average and deterministic for a seed: HTTP access lines,
 * an agent's tool calls (with `session_id`, `tool_call_id`, `message_id`)
 * and errors with stack traces. Ids, durations, sizes and counters vary
 * per entry the way they do in real traffic (which is what compresses
 * worst); message templates, hosts, paths and stack frames repeat.
 */
import { seededRandom, vocabulary } from './entries.js';

const HOSTS = Array.from({ length: 24 }, (_, i) => `web-${(i % 6) + 1}.${['eu-west-1', 'us-east-2', 'ap-south-1', 'eu-central-1'][i % 4]}`);
const ROUTES = [
  '/api/v1/orders',
  '/api/v1/orders/{id}',
  '/api/v1/users/{id}',
  '/api/v1/users/{id}/sessions',
  '/api/v1/search',
  '/api/v1/invoices/{id}/pdf',
  '/healthz',
  '/api/v1/carts/{id}/items',
  '/static/app.{hash}.js',
  '/api/v1/projects/{id}/members',
];
const METHODS = ['GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH'];
const STATUSES = [200, 200, 200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 404, 409, 429, 500, 502, 503];
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/127.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'curl/8.5.0',
  'python-requests/2.32.3',
  'okhttp/4.12.0',
  'Go-http-client/2.0',
];
const TOOLS = ['read_file', 'write_file', 'run_shell', 'search_code', 'http_fetch', 'list_directory', 'apply_patch', 'run_tests'];
const MODELS = ['model-large-2025-06', 'model-small-2025-09', 'model-medium-2026-01'];
const FILES = [
  'src/server/routes.ts',
  'src/db/pool.ts',
  'lib/storage/sqlite/writes.ts',
  'README.md',
  'package.json',
  'test/http/logs.test.ts',
  'docs/api.md',
  'src/billing/invoice.py',
];
const COMMANDS = ['npm test', 'git status --short', 'ls -la', 'npm run lint', 'pytest -q tests/unit', 'cat package.json', 'grep -rn TODO src'];
const ERRORS = [
  ['TypeError', "Cannot read properties of undefined (reading 'id')"],
  ['Error', 'connect ECONNREFUSED 10.0.3.17:5432'],
  ['TimeoutError', 'upstream request timed out after 30000 ms'],
  ['RangeError', 'Invalid time value'],
  ['QueryFailedError', 'duplicate key value violates unique constraint "orders_pkey"'],
  ['Error', 'ENOSPC: no space left on device, write'],
] as const;
const FRAMES = [
  'at OrderService.create (/srv/app/dist/orders/service.js:142:27)',
  'at async Router.handle (/srv/app/node_modules/express/lib/router/index.js:284:7)',
  'at Pool.connect (/srv/app/node_modules/pg-pool/index.js:45:11)',
  'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  'at InvoiceRenderer.render (/srv/app/dist/billing/pdf.js:88:19)',
  'at Object.parse (/srv/app/dist/util/dates.js:12:30)',
  'at UserRepository.findById (/srv/app/dist/users/repo.js:61:22)',
  'at async Promise.all (index 0)',
];
const LOGGERS = ['app.http', 'app.db.pool', 'agent.tools', 'billing.pdf', 'app.auth', 'worker.jobs'];

export interface VariedGenerator {
  next(): Record<string, unknown>;
}

/** An endless, deterministic supply of varied entries, timestamps rising from `startMs`. */
export function createVariedGenerator(seed = 1, startMs = Date.UTC(2025, 5, 1)): VariedGenerator {
  const rnd = seededRandom(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const hex = (len: number) => {
    let s = '';
    while (s.length < len) s += int(0x100000000).toString(16).padStart(8, '0');
    return s.slice(0, len);
  };
  const vocab = vocabulary(5000);
  // Zipf-like: index ~ size × r³ makes low indexes (common words) frequent.
  const words = (min: number, spread: number) => Array.from({ length: min + int(spread) }, () => vocab[Math.floor(vocab.length * rnd() ** 3)]!).join(' ');
  let clock = startMs;
  let session = `sess_${hex(20)}`;
  let turn = 0;
  let message = `msg_${hex(24)}`;

  function access(): Record<string, unknown> {
    const status = pick(STATUSES);
    const route = pick(ROUTES);
    const path = route.replace('{id}', String(1 + int(250_000))).replace('{hash}', hex(8));
    const method = pick(METHODS);
    return {
      timestamp: new Date(clock).toISOString(),
      level: status >= 500 ? 'error' : status >= 400 ? 'warning' : 'info',
      event: 'http request',
      logger: 'app.http',
      category: 'http',
      request_id: hex(16),
      http: {
        method,
        path,
        status,
        duration_ms: Math.round(rnd() * rnd() * 250_000) / 100,
        bytes: int(80_000),
        remote_ip: `10.${int(4)}.${int(256)}.${int(256)}`,
        user_agent: pick(AGENTS),
      },
      host: pick(HOSTS),
      context: { user: { id: int(100_000), plan: pick(['free', 'pro', 'team', 'enterprise']) } },
    };
  }

  function toolCall(): Record<string, unknown> {
    if (rnd() < 0.08) {
      session = `sess_${hex(20)}`;
      turn = 0;
    }
    if (rnd() < 0.3) {
      message = `msg_${hex(24)}`;
      turn += 1;
    }
    const tool = pick(TOOLS);
    const args: Record<string, unknown> =
      tool === 'run_shell' || tool === 'run_tests'
        ? { command: pick(COMMANDS), timeout_s: 60 * (1 + int(10)) }
        : tool === 'http_fetch'
          ? { url: `https://api.example.com/v2/items/${int(1e6)}` }
          : { path: pick(FILES) };
    const ok = rnd() < 0.9;
    return {
      timestamp: new Date(clock).toISOString(),
      level: ok ? 'info' : 'warning',
      event: ok ? 'tool call finished' : 'tool call failed',
      logger: 'agent.tools',
      category: 'agent',
      session_id: session,
      message_id: message,
      tool_call_id: `call_${hex(24)}`,
      tool: { name: tool, arguments: args, duration_ms: int(12_000), exit_code: ok ? 0 : 1 },
      summary: words(2, 5),
      model: pick(MODELS),
      turn,
      tokens: { input: 200 + int(30_000), output: int(2_000) },
    };
  }

  function failure(): Record<string, unknown> {
    const [name, text] = pick(ERRORS);
    const frames: string[] = [];
    const depth = 2 + int(4);
    for (let i = 0; i < depth; i++) frames.push(pick(FRAMES));
    return {
      timestamp: new Date(clock).toISOString(),
      level: rnd() < 0.15 ? 'critical' : 'error',
      event: 'unhandled error',
      logger: pick(LOGGERS),
      category: 'errors',
      request_id: hex(16),
      error: { type: name, message: text, stack: `${name}: ${text}\n    ${frames.join('\n    ')}` },
      host: pick(HOSTS),
      message: words(3, 6),
      context: { user: { id: int(100_000) }, attempt: 1 + int(3) },
    };
  }

  return {
    next() {
      clock += int(40);
      const r = rnd();
      return r < 0.55 ? access() : r < 0.88 ? toolCall() : failure();
    },
  };
}

/** `count` entries of `createVariedGenerator(seed)`. */
export function variedEntries(count: number, seed = 1): Record<string, unknown>[] {
  const gen = createVariedGenerator(seed);
  return Array.from({ length: count }, () => gen.next());
}
