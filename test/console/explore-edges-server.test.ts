/**
 * Explore's rough edges and the context view with reloads, in Chromium on
 * the server backend: one service and one browser for both (see rough-edges.ts
 * and context-reload.ts).
 */
import { consoleSuite } from '../support/console.js';
import { roughEdges } from './rough-edges.js';
import { contextAndReload } from './context-reload.js';

consoleSuite('console explore edges', 'server', (env) => {
  roughEdges(env);
  contextAndReload(env);
});
