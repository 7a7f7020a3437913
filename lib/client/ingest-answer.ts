/**
 * What the client believes of an answer to `POST /v1/logs`: how much of it
 * it reads, and how a 202's counts become its own. A misdirected or hostile
 * server may answer anything, so the answer is read only up to a bound and
 * its counts are clamped to the batch that was sent: the client's counters
 * and callbacks never report more entries than it sent.
 */

/** One rejected entry as the 202 body lists it. */
export interface WireRejection {
  index: number;
  error: string;
  message: string;
}

/** A 2xx body of the IngestionResponse shape, as the server sent it (not yet clamped). */
export interface IngestionAnswer {
  accepted: number;
  /** The listed rejections with an integer index; logkeep may list only the first ones. */
  rejected: WireRejection[];
  /** The total number refused (`rejected_count`), when the server sends it. */
  rejectedCount: number | null;
}

/**
 * The answer bytes read for any batch, whatever its size. logkeep's largest
 * answer lists at most 1,000 rejections of about 150 bytes each, and error
 * envelopes are far smaller; a proxy's error page fits too. Past the bound
 * the client stops reading and closes the connection.
 */
export const MIN_ANSWER_BYTES = 1024 * 1024;

/**
 * The answer bytes allowed per entry sent, for batches large enough to
 * exceed `MIN_ANSWER_BYTES` this way: a server that lists every rejection
 * (logkeep before it capped the list) writes well under this per entry.
 */
export const ANSWER_BYTES_PER_ENTRY = 1024;

/** The most answer bytes read for a batch of `entries`. */
export function answerByteLimit(entries: number): number {
  return Math.max(MIN_ANSWER_BYTES, ANSWER_BYTES_PER_ENTRY * entries);
}

/** What a 2xx answer means for a batch of `sent` entries, clamped to it. */
export interface SettledAnswer {
  /** 0 ≤ accepted ≤ sent. */
  accepted: number;
  /** 0 ≤ rejected ≤ sent − accepted. */
  rejected: number;
  /** The rejections to report: valid, distinct indexes below `sent`, at most `rejected` of them. */
  reported: WireRejection[];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The IngestionResponse in a 2xx body, or null when the body is not of that shape (a proxy's answer, say). */
export function parseIngestionAnswer(text: string): IngestionAnswer | null {
  const body = parseJson(text) as { accepted?: unknown; rejected?: unknown; rejected_count?: unknown } | undefined;
  if (!body || typeof body.accepted !== 'number' || !Array.isArray(body.rejected)) return null;
  const rejected: WireRejection[] = [];
  for (const item of body.rejected as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { index, error, message } = item as { index?: unknown; error?: unknown; message?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index)) continue;
    rejected.push({
      index,
      error: typeof error === 'string' ? error : 'rejected',
      message: typeof message === 'string' ? message : 'the server gave no reason',
    });
  }
  const count = body.rejected_count;
  const rejectedCount = typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : null;
  return { accepted: body.accepted, rejected, rejectedCount };
}

/**
 * A 2xx answer's counts for a batch of `sent` entries: `accepted` clamped to
 * [0, sent]; `rejected` is `rejected_count` (or, without it, the listed
 * rejections with valid distinct indexes), at most sent − accepted; the
 * rejections to report are the listed ones with a valid index below `sent`,
 * each index once, at most `rejected` of them. A 2xx without a readable
 * IngestionResponse (a proxy's answer, one past the read bound) counts every
 * entry accepted: the server said it took the batch.
 */
export function settleAnswer(answer: IngestionAnswer | null, sent: number): SettledAnswer {
  if (answer === null) return { accepted: sent, rejected: 0, reported: [] };
  const accepted = Math.min(sent, Math.max(0, Math.floor(answer.accepted)));
  const seen = new Set<number>();
  const listed: WireRejection[] = [];
  for (const rejection of answer.rejected) {
    if (rejection.index < 0 || rejection.index >= sent || seen.has(rejection.index)) continue;
    seen.add(rejection.index);
    listed.push(rejection);
  }
  const rejected = Math.min(sent - accepted, answer.rejectedCount ?? listed.length);
  return { accepted, rejected, reported: listed.slice(0, rejected) };
}
