/**
 * Waiting in tests for something another part of the system does, without
 * a fixed sleep: poll a condition every few milliseconds (real time).
 */
import assert from 'node:assert/strict';

/** Resolves once `condition` holds; fails naming `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
