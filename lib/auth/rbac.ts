/**
 * Authorization predicates over the effective grants carried by the access
 * token (spec: roles are read from the token claims). Every route and every
 * list query asks these, so the rules live in one place.
 */
import type { RoleGrant } from '../storage/storage.js';

/** `admin` at global scope: user administration, blocking, the audit log. */
export function isAdmin(grants: readonly RoleGrant[]): boolean {
  return grants.some((g) => g.role === 'admin' && g.scope_type === 'global');
}
