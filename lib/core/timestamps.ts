/** Server timestamps are always `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, three fraction digits). */
export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : isoTimestamp(ms);
}
