/**
 * Alert rules and their notifications in words: "at most one notification
 * every 5 minutes", "Firing since …", "delivered after 2 attempts". Pure,
 * so the unit tests run it under Node.
 */
import type { AlertDelivery, AlertNotification, AlertRule } from './api-types.js';

/** "90 seconds", "5 minutes", "1 hour", "1 day". */
export function period(seconds: number): string {
  const unit = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
  if (seconds % 86_400 === 0) return unit(seconds / 86_400, 'day');
  if (seconds % 3_600 === 0) return unit(seconds / 3_600, 'hour');
  if (seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(seconds, 'second');
}

/** What the rule does. */
export function ruleSummary(rule: Pick<AlertRule, 'kind' | 'quiet_seconds' | 'window_seconds' | 'threshold'>): string {
  if (rule.kind === 'any_match') return `Notifies at the first match, then at most once every ${period(rule.quiet_seconds ?? 0)} with the number that matched.`;
  const n = (rule.threshold ?? 0).toLocaleString('en-US');
  return `Notifies when ${n} or more entries match within ${period(rule.window_seconds ?? 0)}, and again when fewer do.`;
}

const PAUSED: Record<string, string> = {
  project_blocked: 'Not notifying: its project is blocked.',
  author_lost_access: 'Not notifying: the person who created it can no longer read this search.',
};

/** Where the rule stands, in a sentence ("Firing since 12:03:04"). */
export function ruleState(rule: Pick<AlertRule, 'enabled' | 'state' | 'paused_reason'>, since: string): string {
  if (!rule.enabled) return 'Turned off.';
  if (rule.paused_reason) return PAUSED[rule.paused_reason] ?? 'Not notifying.';
  return rule.state === 'firing' ? `Firing since ${since}.` : `OK since ${since}.`;
}

/** "fired: 12 matching entries", "resolved: 3 matching entries left". */
export function notificationWords(n: Pick<AlertNotification, 'kind' | 'count'>): string {
  const entries = `${n.count.toLocaleString('en-US')} matching ${n.count === 1 ? 'entry' : 'entries'}`;
  if (n.kind === 'resolved') return `Resolved: ${entries} left in the window`;
  if (n.kind === 'repeated') return `Still matching: ${entries} since the last notification`;
  return `Fired: ${entries}`;
}

/** The delivery in words. */
export function deliveryWords(d: AlertDelivery, time: (iso: string) => string): string {
  const tries = `${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'}`;
  switch (d.state) {
    case 'none':
      return 'Recorded only (the rule sends nowhere).';
    case 'delivered':
      return `Delivered${d.delivered_at ? ` at ${time(d.delivered_at)}` : ''}${d.attempts > 1 ? ` after ${tries}` : ''}.`;
    case 'failed':
      return `Not delivered, given up after ${tries}: ${d.last_error ?? 'unknown failure'}.`;
    default:
      return d.attempts === 0
        ? 'Being delivered.'
        : `Not delivered yet (${tries}; last: ${d.last_error ?? 'unknown failure'})${d.next_attempt_at ? `, next try at ${time(d.next_attempt_at)}` : ''}.`;
  }
}
