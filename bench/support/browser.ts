/**
 * Headless Chromium (Debian's package, nothing downloaded) for the console
 * benchmarks, launched as the console's browser tests launch it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The browser, or null (with the reason printed) when there is none. */
export async function launchBenchBrowser(): Promise<Browser | null> {
  if (!existsSync(CHROMIUM_PATH)) {
    console.log(`  (skipped: no Chromium at ${CHROMIUM_PATH}; Debian: apt-get install chromium, or set CHROMIUM_PATH)`);
    return null;
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
