/**
 * Contract verbs that each backend answers with one function of a row
 * module, that function taking the connection first: `getAlertRule(id)` is
 * `AlertRules.getAlertRule(db, id)`. The saved-search, alert and
 * single-sign-on verbs and most log reads are of this kind, so both
 * backends bind their row modules here instead of spelling every delegation
 * out in their reads and writes.
 */
import type { ReadOps, WriteOps } from './storage.js';

/** A contract verb as a row module writes it: the connection first, then the verb's arguments, then `Trailing`. */
type OnConnection<Db, Verb, Trailing extends unknown[]> = Verb extends (...args: infer A) => infer R ? (db: Db, ...args: [...A, ...Trailing]) => R : never;

/** What a backend's row modules must export to answer `Verbs` on a connection of type `Db`. */
export type RowFunctions<Db, Verbs, Trailing extends unknown[] = []> = { [K in keyof Verbs]: OnConnection<Db, Verbs[K], Trailing> };

/** The verbs of `ReadOps` that are one row function each. */
const ROW_READ_VERBS = [
  'getSavedSearch',
  'listSavedSearches',
  'getAlertRule',
  'listAlertRules',
  'listEnabledAlertRules',
  'alertCounts',
  'listAlertNotifications',
  'dueDeliveries',
  'findIdentity',
  'getIdentity',
  'listIdentitiesOfUser',
  'listGroupTeams',
  'isBreakGlassAccount',
  'syncedTeamIdsOfUser',
  'lastLogIdOf',
  'expiredLogScopes',
] as const;

/** The log reads that may read sealed blocks: their row functions take the reads' dictionary cache last. */
const SEALED_READ_VERBS = ['queryLogs', 'logsAfter', 'logHistogram'] as const;

export type RowReadVerbs = Pick<ReadOps, (typeof ROW_READ_VERBS)[number] | (typeof SEALED_READ_VERBS)[number]>;

/** The verbs `WriteOps` adds that are one row function each. */
const ROW_WRITE_VERBS = [
  'insertSavedSearch',
  'updateSavedSearch',
  'deleteSavedSearch',
  'insertAlertRule',
  'updateAlertRule',
  'deleteAlertRule',
  'lockAlertRule',
  'setAlertRuleStatus',
  'addAlertCounts',
  'pruneAlertCounts',
  'claimDelivery',
  'finishDelivery',
  'insertAlertNotification',
  'insertIdentity',
  'deleteIdentity',
  'updateIdentitySeen',
  'insertLoginCode',
  'claimLoginCode',
  'replaceGroupTeams',
  'markBreakGlassAccount',
  'setSyncedMembership',
  'purgeLogEntries',
  'purgeAuditRows',
  'purgeExpiredRefreshTokens',
] as const;
export type RowWriteVerbs = Pick<WriteOps, (typeof ROW_WRITE_VERBS)[number]>;

/** Adds to `bound` the named verbs on `db`: each calls the row function of its name with `db` first and `trailing` last. */
function bindRowVerbs(bound: Record<string, unknown>, db: unknown, rows: object, names: readonly string[], trailing: unknown[] = []): void {
  for (const name of names) {
    const row = (rows as Record<string, (...args: unknown[]) => unknown>)[name]!;
    bound[name] = (...args: unknown[]) => row(db, ...args, ...trailing);
  }
}

/** The row reads on `db`, from the backend's row functions; sealed reads share `dictionaries`. */
export function rowReadVerbs<Db, Dictionaries>(
  db: Db,
  dictionaries: Dictionaries,
  rows: RowFunctions<Db, Pick<ReadOps, (typeof ROW_READ_VERBS)[number]>> & RowFunctions<Db, Pick<ReadOps, (typeof SEALED_READ_VERBS)[number]>, [Dictionaries]>,
): RowReadVerbs {
  const bound: Record<string, unknown> = {};
  bindRowVerbs(bound, db, rows, ROW_READ_VERBS);
  bindRowVerbs(bound, db, rows, SEALED_READ_VERBS, [dictionaries]);
  return bound as unknown as RowReadVerbs;
}

/** The row writes on `db` (a transaction), from the backend's row functions. */
export function rowWriteVerbs<Db>(db: Db, rows: RowFunctions<Db, RowWriteVerbs>): RowWriteVerbs {
  const bound: Record<string, unknown> = {};
  bindRowVerbs(bound, db, rows, ROW_WRITE_VERBS);
  return bound as unknown as RowWriteVerbs;
}
