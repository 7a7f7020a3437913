/**
 * A log query's or stream's filters, as the search code and both backends
 * read them. Built from the query string by `logs/log-query-params.ts`.
 */

/** One exact-match filter: `category`, `logger`, a correlation id or `context.<path>`. */
export interface ExactFilter {
  /** Object keys from the top of the entry, at least one, none empty. */
  path: string[];
  /** Compared with a string value, or with a number's or boolean's JSON text. */
  value: string;
}

/**
 * The filters of a log query or stream, all ANDed. Built by
 * `logs/log-query-params.ts`.
 */
export interface LogFilter {
  /** Lowest level number included, or null for all. */
  minLevel: number | null;
  /** Inclusive bounds on the entry's `timestamp` (epoch ms), or null. */
  from: number | null;
  to: number | null;
  /** `q`'s whole words (normalised): each must be among the entry's words. */
  words: string[];
  /** `q`'s words written with `*`: each must start some word of the entry. */
  prefixes: string[];
  /** Each must hold. */
  exact: ExactFilter[];
}
