/**
 * JSON text read byte by byte, for OTLP/JSON exports: the outer objects and
 * arrays are walked without building them, every value is checked against
 * JSON's grammar as it is passed over, and the values inside it are
 * counted. One JSON.parse of a whole body would first build every object
 * it holds (3.5 million empty ones fit in 10 MiB: ~200 MB and seconds of
 * blocking) before anything could be counted.
 *
 * Multi-byte UTF-8 never contains an ASCII byte, so the structural bytes
 * found here are the ones JSON.parse would find in the decoded text.
 */
import { isAscii } from 'node:buffer';
import { invalidRequest } from '../../core/errors.js';
import { isJsonSpace as isSpace } from '../json-syntax.js';

const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const COMMA = 0x2c;
const COLON = 0x3a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_U = 0x75;

const LITERALS: Record<number, Buffer> = { 0x74: Buffer.from('true'), 0x66: Buffer.from('false'), 0x6e: Buffer.from('null') };
// After a backslash: " \ / b f n r t (u is read apart).
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

export const malformedJson = () => invalidRequest('The request body is not valid JSON.');

const isDigit = (b: number | undefined) => b !== undefined && b >= ZERO && b <= NINE;
const isHex = (b: number | undefined) => b !== undefined && ((b >= ZERO && b <= NINE) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x66));

/** What a value starts with, as far as the shape of an export cares. */
export type JsonKind = 'object' | 'array' | 'null' | 'other';

export class JsonText {
  /** Values passed over by `value()` since this was last set (every value inside counts, the value itself too). */
  values = 0;
  /** Open containers while `value()` walks one (1 object, 0 array); grows as deep as the body nests, one byte a level. */
  private stack = new Uint8Array(64);

  constructor(readonly raw: Buffer) {}

  /** The first byte from `i` that is not JSON whitespace. */
  space(i: number): number {
    const raw = this.raw;
    while (isSpace(raw[i])) i++;
    return i;
  }

  kind(i: number): JsonKind {
    const b = this.raw[i];
    if (b === OPEN_OBJECT) return 'object';
    if (b === OPEN_ARRAY) return 'array';
    if (b === 0x6e) return 'null';
    return 'other';
  }

  /** The end of the value starting at `i` (no whitespace before it), after checking all of it. */
  value(i: number): number {
    const raw = this.raw;
    let depth = 0;
    for (;;) {
      this.values++;
      const b = raw[i];
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        const close = b === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
        i = this.space(i + 1);
        if (raw[i] === close) i++;
        else {
          this.push(depth++, b === OPEN_OBJECT ? 1 : 0);
          i = b === OPEN_OBJECT ? this.memberValue(i) : i;
          continue;
        }
      } else if (b === QUOTE) i = this.string(i);
      else if (b === MINUS || isDigit(b)) i = this.number(i);
      else i = this.literal(i);
      // After a value: close what it ends, or go on to the next value of its container.
      for (;;) {
        if (depth === 0) return i;
        i = this.space(i);
        const inObject = this.stack[depth - 1] === 1;
        if (raw[i] === COMMA) {
          i = this.space(i + 1);
          if (inObject) i = this.memberValue(i);
          break;
        }
        if (raw[i] !== (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) throw malformedJson();
        depth--;
        i++;
      }
    }
  }

  /**
   * Walks the object at `i`: `member` gets each key and where its value
   * starts, and returns where that value ends (it reads the value itself).
   * Returns the end of the object.
   */
  members(i: number, member: (key: string, at: number) => number): number {
    const raw = this.raw;
    i = this.space(i + 1);
    if (raw[i] === CLOSE_OBJECT) return i + 1;
    for (;;) {
      if (raw[i] !== QUOTE) throw malformedJson();
      const keyEnd = this.string(i);
      const key = this.stringText(i, keyEnd);
      i = this.space(keyEnd);
      if (raw[i] !== COLON) throw malformedJson();
      i = this.space(member(key, this.space(i + 1)));
      if (raw[i] === COMMA) i = this.space(i + 1);
      else if (raw[i] === CLOSE_OBJECT) return i + 1;
      else throw malformedJson();
    }
  }

  /** Walks the array at `i` as `members` does an object. */
  elements(i: number, element: (at: number) => number): number {
    const raw = this.raw;
    i = this.space(i + 1);
    if (raw[i] === CLOSE_ARRAY) return i + 1;
    for (;;) {
      i = this.space(element(i));
      if (raw[i] === COMMA) i = this.space(i + 1);
      else if (raw[i] === CLOSE_ARRAY) return i + 1;
      else throw malformedJson();
    }
  }

  /** The value between `start` and `end`, already checked by `value()`, parsed. */
  parse(start: number, end: number): unknown {
    return JSON.parse(this.text(start, end));
  }

  private text(start: number, end: number): string {
    // ASCII (the usual body) decodes as Latin-1 to the same text, by a plain copy.
    return isAscii(this.raw.subarray(start, end)) ? this.raw.toString('latin1', start, end) : this.raw.toString('utf8', start, end);
  }

  private stringText(start: number, end: number): string {
    const inner = this.raw.subarray(start + 1, end - 1);
    return inner.includes(BACKSLASH) ? (JSON.parse(this.text(start, end)) as string) : this.text(start + 1, end - 1);
  }

  private push(depth: number, container: number): void {
    if (depth === this.stack.length) {
      const grown = new Uint8Array(this.stack.length * 2);
      grown.set(this.stack);
      this.stack = grown;
    }
    this.stack[depth] = container;
  }

  /** Reads `"key" :` at `i` and returns where the member's value starts. */
  private memberValue(i: number): number {
    if (this.raw[i] !== QUOTE) throw malformedJson();
    i = this.space(this.string(i));
    if (this.raw[i] !== COLON) throw malformedJson();
    return this.space(i + 1);
  }

  /** The end of the string opening at `i`. */
  private string(i: number): number {
    const raw = this.raw;
    for (i++; ; ) {
      const b = raw[i];
      if (b === QUOTE) return i + 1;
      if (b === BACKSLASH) {
        const escaped = raw[i + 1];
        if (escaped === LOWER_U) {
          if (!(isHex(raw[i + 2]) && isHex(raw[i + 3]) && isHex(raw[i + 4]) && isHex(raw[i + 5]))) throw malformedJson();
          i += 6;
        } else if (escaped !== undefined && ESCAPES.has(escaped)) i += 2;
        else throw malformedJson();
      } else if (b === undefined || b < 0x20) throw malformedJson();
      else i++;
    }
  }

  /** The end of the number at `i`: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number(i: number): number {
    const raw = this.raw;
    if (raw[i] === MINUS) i++;
    if (raw[i] === ZERO) i++;
    else if (isDigit(raw[i])) while (isDigit(raw[i])) i++;
    else throw malformedJson();
    if (raw[i] === DOT) {
      if (!isDigit(raw[++i])) throw malformedJson();
      while (isDigit(raw[i])) i++;
    }
    if (raw[i] === LOWER_E || raw[i] === UPPER_E) {
      i++;
      if (raw[i] === PLUS || raw[i] === MINUS) i++;
      if (!isDigit(raw[i])) throw malformedJson();
      while (isDigit(raw[i])) i++;
    }
    return i;
  }

  private literal(i: number): number {
    const word = LITERALS[this.raw[i] ?? -1];
    if (word === undefined || !this.raw.subarray(i, i + word.length).equals(word)) throw malformedJson();
    return i + word.length;
  }
}
