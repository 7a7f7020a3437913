/** How the alert engine paces its work (alert-engine.ts): timers, decision transactions, passes. */

/**
 * The longest a due-time timer waits before looking again: a clock that
 * jumps (or a test's clock) is noticed within this, and nothing waits on
 * a timer set days ahead.
 */
export const MAX_TIMER_MS = 60_000;
/**
 * Rules whose matches one transaction decides: enough that a pass over the
 * rules with news takes the writer a few times, not once per rule; few
 * enough that the transaction holds the writer (and those rules' locks)
 * only briefly.
 */
export const RULES_PER_DECISION = 32;
/**
 * Passes over new matches start at least this far apart: under steady
 * traffic the rules that match it are decided a few times a second, not
 * once per commit (each pass is a transaction beside ingestion's), for a
 * notification at most this much later (docs/measurements.md, "Alerts").
 * After a quiet spell the first match is decided at once.
 */
export const PASS_SPACING_MS = 250;
