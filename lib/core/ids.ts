/**
 * Ids as the service writes them: positive integers of at most 16 digits,
 * so every one is a safe integer in JavaScript and fits a 64-bit column.
 * Path ids, query ids, cursors and token subjects are all read by this.
 */

/** The text of an id: no sign, no leading zero, 1–16 digits. */
export const ID_TEXT = /^[1-9][0-9]{0,15}$/;

/** The id `text` names, or null when it is not an id's text (or beyond a safe integer). */
export function parseId(text: string): number | null {
  if (!ID_TEXT.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}
