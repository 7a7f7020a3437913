/**
 * Support for the ingestion client's tests: a manual clock (time moves only
 * when the test says), a small real `node:http` server that sits in front of
 * a real logkeep and either forwards each request or answers it with what
 * logkeep itself never sends (429, 5xx, Retry-After, a cut connection, a
 * stalled answer), and a project with a secret key on a running service.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo, Socket } from 'node:net';
import type { IngestClientClock } from 'logkeep/client';
import { createGroup, createKey, createProject, signInAdmin, type TestActor } from '../support/actors.js';
import { queryAllPages } from '../support/logs.js';

interface Timer {
  at: number;
  ms: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that stands still until `advance()`; it remembers every wait asked of it. */
export class ManualClock implements IngestClientClock {
  private current: number;
  private timers: Timer[] = [];
  /** Every `schedule(…, ms)` call's ms, in order. */
  readonly requested: number[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  schedule(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.current + ms, ms, fn, cancelled: false };
    this.timers.push(timer);
    this.requested.push(ms);
    return () => {
      timer.cancelled = true;
    };
  }

  /** The waits still pending, in ms from when they were asked. */
  pending(): number[] {
    return this.timers.filter((t) => !t.cancelled).map((t) => t.ms);
  }

  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.cancelled = true;
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = until;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }
}

/** Lets pending I/O and promise callbacks run (real time). */
export function settle(ms = 50): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What the front server does with one request. */
export type FrontAnswer = 'forward' | 'cut' | 'hold' | { status: number; headers?: Record<string, string>; body?: string };

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  /** The `Content-Encoding` the client sent, if any. */
  contentEncoding: string | undefined;
  /** Bytes on the wire (compressed, when the body was). */
  bytes: number;
  entries: Record<string, unknown>[];
  /** The status sent back, or null for a cut connection or one still held. */
  status: number | null;
}

export interface FrontServer {
  url: string;
  requests: RecordedRequest[];
  /** Answers every held request by forwarding it. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A real HTTP server in front of `upstream` (a real logkeep): `script(n)`
 * decides what the n-th request (from 0) gets.
 */
export async function startFrontServer(upstream: string, script: (n: number) => FrontAnswer = () => 'forward'): Promise<FrontServer> {
  const requests: RecordedRequest[] = [];
  const held: (() => void)[] = [];

  const forward = async (req: IncomingMessage, res: ServerResponse, body: Buffer, record: RecordedRequest) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    if (req.headers['content-encoding']) headers['content-encoding'] = req.headers['content-encoding'];
    const answer = await fetch(upstream + req.url, { method: req.method!, headers, body });
    const text = await answer.text();
    record.status = answer.status;
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentEncoding = req.headers['content-encoding'];
      let entries: Record<string, unknown>[] = [];
      try {
        entries = JSON.parse((contentEncoding === 'gzip' ? gunzipSync(body) : body).toString('utf8'));
      } catch {
        entries = [];
      }
      const record: RecordedRequest = {
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentEncoding,
        bytes: body.length,
        entries,
        status: null,
      };
      const n = requests.push(record) - 1;
      const answer = script(n);
      const run = () => forward(req, res, body, record).catch(() => res.destroy());
      if (answer === 'forward') void run();
      else if (answer === 'hold') held.push(() => void run());
      else if (answer === 'cut') req.socket.destroy();
      else {
        record.status = answer.status;
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '');
      }
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    requests,
    release() {
      for (const go of held.splice(0)) go();
    },
    close: listening.close,
  };
}

/** Listens on a free loopback port; `close` ends every open connection, then the server. */
export async function listenOnLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface TestProject {
  admin: TestActor;
  projectId: number;
  secret: string;
}

/** A new group, project and secret key on a running service. */
export async function newProject(url: string, name: string, quotas: { max_entries?: number } = {}): Promise<TestProject> {
  const admin = await signInAdmin(url);
  const groupId = await createGroup(url, admin.token, `group ${name}`);
  const projectId = await createProject(url, admin.token, groupId, name, quotas);
  const { secret } = await createKey(url, admin.token, projectId);
  return { admin, projectId, secret };
}

/** Every stored entry of a project, oldest first. */
export async function storedEntries(url: string, project: TestProject): Promise<Record<string, any>[]> {
  const { items } = await queryAllPages(url, project.admin.token, [['project_id', String(project.projectId)]], 200);
  return items.reverse();
}

/** A valid entry numbered `n`. */
export function entry(n: number, extra: Record<string, unknown> = {}) {
  return { level: 'info' as const, event: `entry ${n}`, timestamp: '2025-01-01T00:00:00.000Z', n, ...extra };
}
