/**
 * THE route table: every route the service serves, in one list. Each area
 * keeps its rows next to its code (`routes-*.ts`); anything not listed
 * answers 404 `not_found` (D2).
 */
import type { Route } from './route.js';
import { authRoutes } from './routes-auth.js';
import { userRoutes } from './routes-users.js';
import { orgRoutes } from './routes-org.js';
import { auditRoutes } from './routes-audit.js';
import { logRoutes } from './routes-logs.js';
import { streamRoutes } from './routes-stream.js';
import { openApiRoutes } from './routes-openapi.js';

export function allRoutes(): Route[] {
  return [...authRoutes, ...userRoutes, ...orgRoutes(), ...auditRoutes(), ...logRoutes, ...streamRoutes, ...openApiRoutes];
}
