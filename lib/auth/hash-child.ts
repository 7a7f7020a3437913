/**
 * The child side of `hash-process.ts`: runs scrypt-kdf's `kdf` and `verify`
 * for its parent, at the lowest CPU priority.
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import * as scryptModule from 'scrypt-kdf';

// scrypt-kdf 4 declares named exports but ships a default export object: normalise here, once.
interface ScryptApi {
  kdf(passphrase: string, params: { logN: number; r?: number; p?: number }): Promise<Uint8Array>;
  verify(key: Uint8Array, passphrase: string): Promise<boolean>;
}
const scrypt: ScryptApi = ((scryptModule as unknown as { default?: ScryptApi }).default as ScryptApi | undefined) ?? (scryptModule as unknown as ScryptApi);

/** scrypt's parameters (log2 N, block size, parallelism). */
export interface ScryptCost {
  logN: number;
  r: number;
  p: number;
}

export type HashJobBody = { op: 'kdf'; password: string; cost: ScryptCost } | { op: 'verify'; password: string; key: string };
export type HashJob = HashJobBody & { id: number };
export type HashReply = { id: number; key: string } | { id: number; ok: boolean } | { id: number; error: string };

const nice = Number(process.env.LOGKEEP_HASH_NICE ?? 19);

/**
 * Lowers every thread of this process to `nice`. Linux keeps a nice value
 * per thread, and libuv's pool threads (where scrypt runs) may have started
 * before this code did, so each thread is set; elsewhere the call on pid 0
 * covers the process. Never raises a priority, which would need privilege.
 */
function lowerPriority(): void {
  let threads: number[] = [0];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    // no procfs: the process-wide call below is all there is
  }
  for (const tid of threads) {
    try {
      if (getPriority(tid) < nice) setPriority(tid, nice);
    } catch {
      // the thread ended meanwhile, or the platform refuses: hashing still works
    }
  }
}

async function run(job: HashJob): Promise<HashReply> {
  // Before each job: pool threads started since the last one get lowered too.
  lowerPriority();
  try {
    if (job.op === 'kdf') return { id: job.id, key: Buffer.from(await scrypt.kdf(job.password, job.cost)).toString('base64') };
    return { id: job.id, ok: await scrypt.verify(Buffer.from(job.key, 'base64'), job.password) };
  } catch (err) {
    return { id: job.id, error: err instanceof Error ? err.message : String(err) };
  }
}

/** Sends to the parent unless it has gone (it may go while a hash runs). */
function reply(message: object): void {
  // With a callback, a channel that closes meanwhile is an ignored error, not an uncaught one.
  if (process.connected) process.send?.(message, undefined, undefined, () => undefined);
}

process.on('message', (job: HashJob) => {
  void run(job).then(reply);
});
// The parent went away (closed, or killed): nothing is left to hash for.
process.on('disconnect', () => process.exit(0));
lowerPriority();
reply({ ready: true });
