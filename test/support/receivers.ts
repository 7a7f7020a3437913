/**
 * Real receivers for alert deliveries: an HTTP server on 127.0.0.1 that
 * records each request and answers as told (200, a status, a redirect,
 * or never), and an in-process SMTP server (`smtp-server`) that records
 * each message.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the next request is answered: a status, or `hang` (never answered until `release`). */
export type Answer = number | 'hang';

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Answers for the next requests, in order; then 200. */
  answers: Answer[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<ReceivedRequest[]>;
  /** Ends every request held by `hang` by destroying its connection. */
  release(): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const answers: Answer[] = [];
  const held: ServerResponse[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const ready = waiters.filter((w) => requests.length >= w.count);
      waiters = waiters.filter((w) => requests.length < w.count);
      for (const w of ready) w.resolve();
      const answer = answers.shift() ?? 200;
      if (answer === 'hang') {
        held.push(res);
        return;
      }
      if (answer >= 300 && answer < 400) res.setHeader('location', 'http://127.0.0.1:1/elsewhere');
      res.statusCode = answer;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const release = () => {
    for (const res of held.splice(0)) res.socket?.destroy();
  };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    answers,
    waitFor(count) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve) => waiters.push({ count, resolve: () => resolve(requests) }));
    },
    release,
    async close() {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface MailReceiver {
  url: string;
  messages: ReceivedMail[];
  close(): Promise<void>;
}

export async function startMailReceiver(): Promise<MailReceiver> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
