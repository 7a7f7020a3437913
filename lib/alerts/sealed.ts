/**
 * Destination settings at rest: a webhook's signing secret must be
 * readable by the service (it signs every delivery), so it cannot be kept
 * as a hash. It is sealed instead with AES-256-GCM under a key derived
 * (HKDF-SHA256) from the service's JWT secret, which never enters the
 * database: a copy of the database alone reveals no destination's URL,
 * secret or addresses, and a sealed value altered in the database fails
 * to open rather than send elsewhere. Changing the JWT secret leaves
 * sealed destinations unreadable: their rules say so at delivery, and
 * setting the destination again seals it under the new key.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;

export interface Sealer {
  seal(plain: string): string;
  /** The plain text, or null when the value was sealed under another key or altered. */
  open(sealed: string): string | null;
}

export function createSealer(serviceSecret: string): Sealer {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(serviceSecret, 'utf8'), Buffer.from('logkeep'), Buffer.from('alert destinations v1'), 32));
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== VERSION || iv === undefined || body === undefined || tag === undefined) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
