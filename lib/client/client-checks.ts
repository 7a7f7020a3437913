/** Small helpers the ingestion client uses to check its options and report trouble. */

/** An integer option above zero (or Infinity, meaning no limit), or its default when absent. */
export function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(value > 0) || (Number.isFinite(value) && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be a positive integer (got ${value})`);
  }
  return value;
}

/** A process warning the application can route (`process.on('warning')`); the client never throws from the background. */
export function warn(message: string, code?: string): void {
  process.emitWarning(message, { type: 'LogkeepIngestWarning', ...(code === undefined ? {} : { code }) });
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
