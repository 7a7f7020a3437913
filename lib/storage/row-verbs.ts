/**
 * Contract verbs that each backend answers with one function of a row
 * module, that function taking the connection first: `getAlertRule(id)` is
 * `AlertRules.getAlertRule(db, id)`. The saved-search, alert and
 * single-sign-on verbs are all of this kind, so both backends bind their row
 * modules here instead of spelling every delegation out in their reads and
 * writes.
 */
import type { ReadOps, WriteOps } from './storage.js';

/** A contract verb as a row module writes it: the connection first, then the verb's arguments. */
type OnConnection<Db, Verb> = Verb extends (...args: infer A) => infer R ? (db: Db, ...args: A) => R : never;

/** What a backend's row modules must export to answer `Verbs` on a connection of type `Db`. */
export type RowFunctions<Db, Verbs> = { [K in keyof Verbs]: OnConnection<Db, Verbs[K]> };

/** The verbs of `ReadOps` that are one row function each: saved searches, alerts, single sign-on. */
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
] as const;
export type RowReadVerbs = Pick<ReadOps, (typeof ROW_READ_VERBS)[number]>;

/** The verbs `WriteOps` adds that are one row function each: saved searches, alerts, single sign-on. */
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
] as const;
export type RowWriteVerbs = Pick<WriteOps, (typeof ROW_WRITE_VERBS)[number]>;

/** The named verbs on `db`: each calls the row function of its name with `db` first. */
function bindRowVerbs<Db, Verbs>(db: Db, rows: RowFunctions<Db, Verbs>, names: readonly (keyof Verbs)[]): Verbs {
  const bound: Partial<Record<keyof Verbs, unknown>> = {};
  for (const name of names) {
    const row = rows[name] as (db: Db, ...args: unknown[]) => unknown;
    bound[name] = (...args: unknown[]) => row(db, ...args);
  }
  return bound as Verbs;
}

/** The row reads on `db`, from the backend's row functions. */
export function rowReadVerbs<Db>(db: Db, rows: RowFunctions<Db, RowReadVerbs>): RowReadVerbs {
  return bindRowVerbs(db, rows, ROW_READ_VERBS);
}

/** The row writes on `db` (a transaction), from the backend's row functions. */
export function rowWriteVerbs<Db>(db: Db, rows: RowFunctions<Db, RowWriteVerbs>): RowWriteVerbs {
  return bindRowVerbs(db, rows, ROW_WRITE_VERBS);
}
