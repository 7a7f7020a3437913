/**
 * Sending one notification to its destination, bounded in every way a
 * destination could hold on to the service: connecting, waiting for the
 * answer and reading it each have a time limit, at most
 * MAX_ANSWER_BYTES of an answer are read, redirects are not followed, and
 * webhook hosts are resolved and checked at each delivery (target-guard.ts).
 *
 * The generic webhook's body is signed like GitHub's and Stripe's:
 * `X-Logkeep-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"
 * keyed with the rule's secret>`, so a receiver checks who sent it and
 * refuses replays older than it tolerates.
 */
import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import nodemailer, { type Transporter } from 'nodemailer';
import type { AlertNotificationRow, AlertRuleRow } from '../storage/types-alerts.js';
import { isoTimestamp } from '../core/timestamps.js';
import type { DestinationSettings } from './destinations.js';
import { checkLiteralTarget, guardedLookup } from './target-guard.js';

/** Connecting to a destination (DNS, TCP, TLS): a healthy endpoint answers in well under this. */
export const CONNECT_TIMEOUT_MS = 5_000;
/** Waiting for the answer's headers, and between its body's bytes. */
export const ANSWER_TIMEOUT_MS = 10_000;
/** The whole attempt, whatever a destination does. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** What is read of an answer (its status is what counts); the rest is dropped. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface SendContext {
  allowPrivateTargets: boolean;
  /** Where people reach logkeep, or null: no link. */
  publicUrl: string | null;
  smtpUrl: string | null;
  emailFrom: string | null;
  now: () => number;
}

/** The JSON a generic webhook receives. */
export function notificationPayload(rule: AlertRuleRow, n: AlertNotificationRow, publicUrl: string | null) {
  return {
    rule: { id: rule.id, name: rule.name, kind: rule.kind, saved_search_id: rule.savedSearchId },
    notification: {
      id: n.id,
      kind: n.kind,
      window_start: isoTimestamp(n.windowStart),
      window_end: isoTimestamp(n.windowEnd),
      count: n.matchCount,
    },
    entries: JSON.parse(n.entries) as unknown[],
    link: consoleLink(rule, publicUrl),
  };
}

/** The rule's saved search in the console's Explore page (newest entries first). */
export function consoleLink(rule: AlertRuleRow, publicUrl: string | null): string | null {
  if (publicUrl === null) return null;
  const scope = rule.projectId !== null ? `project_id=${rule.projectId}` : `group_id=${rule.ownerGroupId}`;
  return `${publicUrl.replace(/\/+$/, '')}/console/#/explore?${scope}${rule.query ? `&${rule.query}` : ''}`;
}

/** The `X-Logkeep-Signature` value of a body sent at `unixSeconds`. */
export function signature(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** One line a person reads first: "checkout errors fired: 12 matching entries". */
export function headline(rule: AlertRuleRow, n: AlertNotificationRow): string {
  const what = n.kind === 'resolved' ? 'resolved' : n.kind === 'repeated' ? 'still matching' : 'fired';
  const entries = `${n.matchCount.toLocaleString('en-US')} matching ${n.matchCount === 1 ? 'entry' : 'entries'}`;
  return `${rule.name} ${what}: ${entries} from ${isoTimestamp(n.windowStart)} to ${isoTimestamp(n.windowEnd)}`;
}

export class Senders {
  private readonly agent: Agent;
  private mailer: Transporter | null = null;

  constructor(private readonly context: SendContext) {
    this.agent = new Agent({
      connect: { timeout: CONNECT_TIMEOUT_MS, lookup: guardedLookup(context.allowPrivateTargets) },
      headersTimeout: ANSWER_TIMEOUT_MS,
      bodyTimeout: ANSWER_TIMEOUT_MS,
      // A hanging destination holds one connection, never every one.
      connections: 4,
    });
  }

  /** Sends; resolves on success, throws an Error whose message says what went wrong, in words. */
  async send(settings: DestinationSettings, rule: AlertRuleRow, n: AlertNotificationRow): Promise<void> {
    if (settings.type === 'email') return this.sendEmail(settings.to, rule, n);
    const payload = notificationPayload(rule, n, this.context.publicUrl);
    if (settings.type === 'slack') {
      const lines = [headline(rule, n), ...(payload.link ? [`<${payload.link}|Open in logkeep>`] : [])];
      return this.post(settings.url, JSON.stringify({ text: lines.join('\n') }), {});
    }
    const body = JSON.stringify(payload);
    const sentAt = Math.floor(this.context.now() / 1000);
    return this.post(settings.url, body, { 'x-logkeep-signature': signature(settings.secret, sentAt, body), 'x-logkeep-delivery': String(n.id) });
  }

  async close(): Promise<void> {
    await this.agent.close();
    this.mailer?.close();
  }

  private async post(target: string, body: string, headers: Record<string, string>): Promise<void> {
    const url = new URL(target);
    // Address literals skip the lookup: check them here.
    checkLiteralTarget(url, this.context.allowPrivateTargets);
    const res = await request(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'logkeep-alerts', ...headers },
      dispatcher: this.agent,
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    let read = 0;
    try {
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read >= MAX_ANSWER_BYTES) break;
      }
    } finally {
      res.body.destroy();
    }
    if (res.statusCode >= 300 && res.statusCode < 400) throw new Error(`answered ${res.statusCode}; redirects are not followed`);
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`answered ${res.statusCode}`);
  }

  private async sendEmail(to: string[], rule: AlertRuleRow, n: AlertNotificationRow): Promise<void> {
    const { smtpUrl, emailFrom } = this.context;
    if (smtpUrl === null || emailFrom === null) throw new Error('no SMTP server is configured any more');
    this.mailer ??= nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      greetingTimeout: ANSWER_TIMEOUT_MS,
      socketTimeout: ATTEMPT_TIMEOUT_MS,
    });
    const payload = notificationPayload(rule, n, this.context.publicUrl);
    const text = [
      headline(rule, n),
      '',
      ...(payload.link ? [`Open in logkeep: ${payload.link}`, ''] : []),
      payload.entries.length > 0 ? `The first ${payload.entries.length} matching entries:` : 'No entries.',
      ...payload.entries.map((e) => JSON.stringify(e)),
    ].join('\n');
    await this.mailer.sendMail({ from: emailFrom, to, subject: `[logkeep] ${headline(rule, n)}`, text });
  }
}
