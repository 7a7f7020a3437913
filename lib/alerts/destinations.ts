/**
 * Alert destinations: a generic webhook (JSON, signed), a Slack-compatible
 * incoming webhook, or e-mail. What a rule keeps is its kind, a label that
 * answers may show, and the settings sealed (sealed.ts); a webhook's
 * signing secret is generated here and shown once, in the answer that set it.
 */
import { randomBytes } from 'node:crypto';
import { invalidRequest } from '../core/errors.js';
import type { AlertDestinationColumns, DestinationType } from '../storage/types-alerts.js';
import type { Sealer } from './sealed.js';
import { RefusedTargetError, checkLiteralTarget, guardedLookup } from './target-guard.js';

/** The longest destination URL: real webhook URLs are well under 1 KiB. */
export const MAX_DESTINATION_URL_LENGTH = 2048;
/** Addresses one e-mail destination may name. */
export const MAX_EMAIL_RECIPIENTS = 10;

export type DestinationInput = { type: 'webhook' | 'slack'; url: string } | { type: 'email'; to: string[] };

/** The settings a delivery opens. */
export type DestinationSettings = { type: 'webhook'; url: string; secret: string } | { type: 'slack'; url: string } | { type: 'email'; to: string[] };

export interface DestinationRules {
  allowPrivateTargets: boolean;
  /** Whether an SMTP server is configured. */
  emailEnabled: boolean;
}

const EMAIL = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/;

/**
 * Checks a destination and seals it. Webhook and Slack URLs must be http
 * or https without credentials; a host that is, or resolves to, a private
 * address is refused unless the operator allows it (400 naming
 * `destination.url`). Returns the columns to store and, for a webhook, the
 * secret to show once.
 */
export async function prepareDestination(
  input: DestinationInput,
  sealer: Sealer,
  rules: DestinationRules,
): Promise<{ columns: AlertDestinationColumns; secret: string | null }> {
  if (input.type === 'email') {
    if (!rules.emailEnabled) throw invalidRequest('No SMTP server is configured for alert e-mail (SERVICE_ALERT_SMTP_URL).', 'destination.type', 'invalid');
    if (input.to.length === 0 || input.to.length > MAX_EMAIL_RECIPIENTS || !input.to.every((a) => a.length <= 254 && EMAIL.test(a))) {
      throw invalidRequest(`destination.to takes 1 to ${MAX_EMAIL_RECIPIENTS} e-mail addresses.`, 'destination.to', 'invalid');
    }
    const settings: DestinationSettings = { type: 'email', to: input.to };
    return { columns: columnsOf('email', input.to.join(', '), sealer.seal(JSON.stringify(settings))), secret: null };
  }
  const url = await checkDestinationUrl(input.url, rules.allowPrivateTargets);
  if (input.type === 'slack') {
    const settings: DestinationSettings = { type: 'slack', url: url.href };
    // A Slack URL is itself the credential: answers show only its host.
    return { columns: columnsOf('slack', `${url.origin}/…`, sealer.seal(JSON.stringify(settings))), secret: null };
  }
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  const settings: DestinationSettings = { type: 'webhook', url: url.href, secret };
  return { columns: columnsOf('webhook', `${url.origin}${url.pathname}`, sealer.seal(JSON.stringify(settings))), secret };
}

/** A sealed destination opened, or null when it cannot be (another service secret, or altered). */
export function openDestination(sealer: Sealer, sealed: string): DestinationSettings | null {
  const text = sealer.open(sealed);
  if (text === null) return null;
  try {
    return JSON.parse(text) as DestinationSettings;
  } catch {
    return null;
  }
}

function columnsOf(type: DestinationType, label: string, sealed: string): AlertDestinationColumns {
  return { destinationType: type, destinationLabel: label, destinationSealed: sealed };
}

async function checkDestinationUrl(text: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidRequest('destination.url must be an http or https URL.', 'destination.url', 'invalid');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '' || text.length > MAX_DESTINATION_URL_LENGTH) {
    throw invalidRequest('destination.url must be an http or https URL without credentials, at most 2,048 characters.', 'destination.url', 'invalid');
  }
  try {
    checkLiteralTarget(url, allowPrivate);
    await resolvesPublicly(url.hostname, allowPrivate);
  } catch (err) {
    if (err instanceof RefusedTargetError) {
      throw invalidRequest(
        `destination.url: ${err.message}; the operator may allow such targets with --alert-allow-private-targets.`,
        'destination.url',
        'invalid',
      );
    }
    throw err;
  }
  return url;
}

/** Resolves a name once as deliveries will; a name that does not resolve now is accepted (deliveries will say). */
function resolvesPublicly(hostname: string, allowPrivate: boolean): Promise<void> {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return new Promise((resolve, reject) => {
    guardedLookup(allowPrivate)(host, { all: true }, (err) => {
      if (err instanceof RefusedTargetError) reject(err);
      else resolve();
    });
  });
}
