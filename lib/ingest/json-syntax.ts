/**
 * Whether a short text is JSON, without JSON.parse: a JSON.parse that fails
 * pays for its error's stack and message, so a body of millions of short
 * lines that are not JSON (`x`, `{x}`) cost tens of seconds of CPU
 * (docs/measurements.md). Checking the grammar first costs a few
 * nanoseconds a character. Longer
 * texts are simply parsed: there a failure's fixed cost is small beside
 * the bytes it took to send.
 */

/** Texts up to this many characters are checked here before they are parsed. */
export const SHORT_TEXT = 128;

/** JSON's four whitespace bytes (space, LF, CR, tab), as bytes or UTF-16 code units. */
export const isJsonSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isSpace = isJsonSpace;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
// After a backslash: " \ / b f n r t (u is handled on its own).
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const LITERALS = ['true', 'false', 'null'];

/**
 * Whether `text` is one JSON text (RFC 8259, as JSON.parse reads it):
 * exactly what JSON.parse accepts. Recursive, so meant for short texts
 * (the depth is at most half the length).
 */
export function isJsonText(text: string): boolean {
  const end = value(text, 0);
  return end >= 0 && skipSpace(text, end) === text.length;
}

// Each reader below takes the position where its part starts and returns
// the position just after it, or -1 when the text is not JSON there.

function skipSpace(text: string, i: number): number {
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

function value(text: string, i: number): number {
  i = skipSpace(text, i);
  const c = text.charCodeAt(i);
  if (c === 0x7b) return object(text, i);
  if (c === 0x5b) return array(text, i);
  if (c === 0x22) return string(text, i);
  if (c === 0x2d || isDigit(c)) return number(text, i);
  for (const word of LITERALS) if (text.startsWith(word, i)) return i + word.length;
  return -1;
}

function object(text: string, i: number): number {
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === 0x7d) return i + 1;
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) return -1;
    i = string(text, i);
    if (i < 0) return -1;
    i = skipSpace(text, i);
    if (text.charCodeAt(i) !== 0x3a) return -1;
    i = value(text, i + 1);
    if (i < 0) return -1;
    i = skipSpace(text, i);
    const c = text.charCodeAt(i);
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) return -1;
    i = skipSpace(text, i + 1);
  }
}

function array(text: string, i: number): number {
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === 0x5d) return i + 1;
  for (;;) {
    i = value(text, i);
    if (i < 0) return -1;
    i = skipSpace(text, i);
    const c = text.charCodeAt(i);
    if (c === 0x5d) return i + 1;
    if (c !== 0x2c) return -1;
    i += 1;
  }
}

function string(text: string, i: number): number {
  i += 1; // the opening quote
  while (i < text.length) {
    const c = text.charCodeAt(i++);
    if (c === 0x22) return i;
    if (c < 0x20) return -1;
    if (c !== 0x5c) continue;
    const e = text.charCodeAt(i++);
    if (e === 0x75) {
      for (let k = 0; k < 4; k++) if (!isHex(text.charCodeAt(i++))) return -1;
    } else if (!ESCAPES.has(e)) return -1;
  }
  return -1;
}

function digits(text: string, i: number): number {
  if (!isDigit(text.charCodeAt(i))) return -1;
  while (isDigit(text.charCodeAt(i))) i++;
  return i;
}

function number(text: string, i: number): number {
  if (text.charCodeAt(i) === 0x2d) i++;
  if (text.charCodeAt(i) === 0x30) i++;
  else if ((i = digits(text, i)) < 0) return -1;
  if (text.charCodeAt(i) === 0x2e && (i = digits(text, i + 1)) < 0) return -1;
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i += 1;
    const sign = text.charCodeAt(i);
    if (sign === 0x2b || sign === 0x2d) i++;
    return digits(text, i);
  }
  return i;
}
