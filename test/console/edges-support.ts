/** What the console's edge suites (rough-edges.ts, context-reload.ts) share. */
import type { Page, Request } from 'playwright-core';
import { createGroup, createKey, createProject } from '../support/actors.js';

/** A project of its own group with a key, for one test. */
export async function projectWithKey(url: string, token: string, name: string): Promise<{ project: number; key: string }> {
  const group = await createGroup(url, token, name);
  const project = await createProject(url, token, group, name);
  return { project, key: (await createKey(url, token, project)).secret };
}

/** Every request the page sends to the log routes, as URLs. */
export function logRequests(page: Page): URL[] {
  const seen: URL[] = [];
  page.on('request', (r: Request) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/v1/logs')) seen.push(url);
  });
  return seen;
}
