/**
 * The quota arithmetic, shared by both backends so they admit exactly the
 * same entries: each backend reads (and on PostgreSQL locks) the projects'
 * counters, runs `planIngest`, then inserts what it says and adds the totals.
 */
import type { LogEntryOutcome, LogIngestRequest } from '../types-logs.js';

/** A project's quotas and usage as read inside the ingest transaction. */
export interface ProjectUsage {
  maxEntries: number | null;
  maxBytes: number | null;
  entryCount: number;
  totalBytes: number;
}

export interface IngestPlan {
  /**
   * Request indexes in the order their entries take ids: project by project
   * (ascending id), then in request order; entries in submitted order. So
   * each project's entries get consecutive ids (the runs sealing cuts are
   * consecutive ids of one project).
   */
  order: number[];
  /** Per request, per entry: its rank (position among the admitted entries, in id order) or the quota that refused it. */
  slots: (number | { quota: 'max_entries' | 'max_bytes' })[][];
  /** Entries admitted in all. */
  admitted: number;
  /** What to add to each project's counters. */
  added: Map<number, { entries: number; bytes: number }>;
}

/**
 * Decides entry by entry, in order: `max_entries` first, then `max_bytes`;
 * a refused entry consumes nothing, so a later smaller one may still fit.
 * `usage` is updated in place. Throws if a request names a project missing
 * from `usage`.
 */
export function planIngest(requests: readonly LogIngestRequest[], usage: Map<number, ProjectUsage>): IngestPlan {
  let admitted = 0;
  const added = new Map<number, { entries: number; bytes: number }>();
  const slots: IngestPlan['slots'] = requests.map(() => []);
  // Each project's counters only ever see its own requests, so taking the
  // projects one after another decides exactly what request order would.
  const order = requests.map((_, i) => i).sort((a, b) => requests[a]!.projectId - requests[b]!.projectId || a - b);
  for (const index of order) {
    const request = requests[index]!;
    const project = usage.get(request.projectId);
    if (!project) throw new Error(`project ${request.projectId} not found while ingesting`);
    let sum = added.get(request.projectId);
    if (!sum) added.set(request.projectId, (sum = { entries: 0, bytes: 0 }));
    slots[index] = request.sizes.map((bytes) => {
      if (project.maxEntries !== null && project.entryCount + 1 > project.maxEntries) return { quota: 'max_entries' as const };
      if (project.maxBytes !== null && project.totalBytes + bytes > project.maxBytes) return { quota: 'max_bytes' as const };
      project.entryCount += 1;
      project.totalBytes += bytes;
      sum.entries += 1;
      sum.bytes += bytes;
      return admitted++;
    });
  }
  return { order, slots, admitted, added };
}

/** Turns a plan's slots into outcomes once the admitted entries have ids (`ids[rank]`). */
export function outcomesOf(plan: IngestPlan, ids: readonly number[]): LogEntryOutcome[][] {
  if (ids.length !== plan.admitted) throw new Error(`expected ${plan.admitted} ids, got ${ids.length}`);
  return plan.slots.map((request) => request.map((slot) => (typeof slot === 'number' ? { id: ids[slot]! } : slot)));
}

/** The distinct project ids of the requests, ascending (the order locks are taken in). */
export function projectIdsOf(requests: readonly LogIngestRequest[]): number[] {
  return [...new Set(requests.map((r) => r.projectId))].sort((a, b) => a - b);
}
