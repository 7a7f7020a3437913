/**
 * Little-endian bytes and LEB128 varints for sealed blocks (sealed-block.ts).
 * Numbers are JavaScript numbers: integers stay exact below 2^53.
 */
/** A block that cannot be read: damaged, or written by a newer version. */
export class SealedBlockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedBlockError';
  }
}

export class Writer {
  private buf = Buffer.allocUnsafe(1024);
  at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }

  u16(v: number): void {
    this.room(2);
    this.at = this.buf.writeUInt16LE(v, this.at);
  }

  u32(v: number): void {
    this.room(4);
    this.at = this.buf.writeUInt32LE(v, this.at);
  }

  f64(v: number): void {
    this.room(8);
    this.at = this.buf.writeDoubleLE(v, this.at);
  }

  /** Unsigned LEB128 of a non-negative integer below 2^53. */
  varint(v: number): void {
    this.room(8);
    while (v >= 0x80) {
      this.buf[this.at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.at++] = v;
  }

  zigzag(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  done(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.at);
  }
}

export class Reader {
  at = 0;
  private readonly buf: Buffer;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new SealedBlockError('sealed block is truncated');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }

  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16LE(this.at);
    this.at += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  varint(): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
    throw new SealedBlockError('sealed block has a malformed number');
  }

  zigzag(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  get length(): number {
    return this.buf.length;
  }
}
