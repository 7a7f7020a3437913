// Password hashing runs scrypt-kdf in a child process at the lowest CPU
// priority: real hashes at a low cost, the child's threads read back from /proc.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { HASH_PROCESS_NICE, HashProcess, HashUnavailableError } from '../../lib/auth/hash-process.js';
import { LogServiceError } from '../../lib/core/errors.js';
import { processState } from '../support/proc.js';
import { DEFAULT_SCRYPT_LOG_N, SCRYPT_P, SCRYPT_R, createPasswordHasher } from '../../lib/auth/passwords.js';
import { waitUntil } from '../support/wait.js';

const LOG_N = 10;
const COST = { logN: LOG_N, r: 8, p: 1 };

/** The nice value of each thread of `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceValues(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('password hasher', () => {
  it('verifies the password it hashed, and nothing else; an unknown user never verifies', async () => {
    const hasher = createPasswordHasher({ logN: LOG_N });
    try {
      const stored = await hasher.hash('correct horse');
      assert.match(stored, /^[A-Za-z0-9+/]+=*$/);
      assert.equal(Buffer.from(stored, 'base64').subarray(0, 6).toString('ascii'), 'scrypt');
      assert.equal(await hasher.verify(stored, 'correct horse'), true);
      assert.equal(await hasher.verify(stored, 'correct horsE'), false);
      assert.equal(await hasher.verify(null, 'correct horse'), false);
      // Two hashes of one password differ (random salt).
      assert.notEqual(await hasher.hash('correct horse'), stored);
    } finally {
      await hasher.close();
    }
  });

  it('hashes at the production cost by default, its parameters stored in the hash', async () => {
    const hasher = createPasswordHasher();
    try {
      const key = Buffer.from(await hasher.hash('correct horse'), 'base64');
      // scrypt-kdf's header: "scrypt", version 0, log2 N, r and p (big-endian).
      assert.deepEqual([key.readUInt8(7), key.readUInt32BE(8), key.readUInt32BE(12)], [DEFAULT_SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P]);
      assert.deepEqual([DEFAULT_SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P], [14, 8, 5]);
    } finally {
      await hasher.close();
    }
  });

  it('runs concurrent hashes to completion, each with its own answer', async () => {
    const hasher = createPasswordHasher({ logN: LOG_N, maxConcurrent: 2 });
    try {
      const passwords = Array.from({ length: 6 }, (_, i) => `password-${i}`);
      const stored = await Promise.all(passwords.map((p) => hasher.hash(p)));
      const verdicts = await Promise.all(passwords.map((p, i) => hasher.verify(stored[(i + 1) % 6]!, p)));
      assert.deepEqual(verdicts, [false, false, false, false, false, false]);
      assert.deepEqual(await Promise.all(passwords.map((p, i) => hasher.verify(stored[i]!, p))), [true, true, true, true, true, true]);
    } finally {
      await hasher.close();
    }
  });

  it('refuses a hash with 503 and Retry-After once as many as allowed are waiting, and runs the waiting one when the slot frees', {
    timeout: 30_000,
  }, async () => {
    let lose = 0;
    const hasher = createPasswordHasher({ logN: LOG_N, maxWaiting: 1, timeoutMs: 1_000, loseReply: () => lose-- > 0 });
    try {
      const stored = await hasher.hash('correct horse');
      lose = 1;
      // The first never gets its reply (so it holds the one slot until it times out), the second waits.
      const hung = hasher.verify(stored, 'correct horse');
      hung.catch(() => undefined);
      const waiting = hasher.verify(stored, 'correct horse');
      waiting.catch(() => undefined);
      await assert.rejects(hasher.verify(stored, 'correct horse'), (err: unknown) => {
        assert.ok(err instanceof LogServiceError);
        assert.equal(err.status, 503);
        assert.equal(err.code, 'temporarily_unavailable');
        assert.match(err.headers?.['Retry-After'] ?? '', /^[1-9][0-9]*$/);
        return true;
      });
      await assert.rejects(hung, (err: unknown) => err instanceof LogServiceError && err.status === 503);
      assert.equal(await waiting, true);
    } finally {
      await hasher.close();
    }
  });

  it('fails a hash whose reply never comes with 503 after the timeout, and the next hash works', { timeout: 30_000 }, async () => {
    let lose = 0;
    const hasher = createPasswordHasher({ logN: LOG_N, timeoutMs: 500, loseReply: () => lose-- > 0 });
    try {
      const stored = await hasher.hash('correct horse');
      lose = 1;
      await assert.rejects(hasher.verify(stored, 'correct horse'), (err: unknown) => err instanceof LogServiceError && err.status === 503);
      assert.equal(await hasher.verify(stored, 'correct horse'), true);
    } finally {
      await hasher.close();
    }
  });

  it('fails a hash with a clear error after close', async () => {
    const hasher = createPasswordHasher({ logN: LOG_N });
    await hasher.close();
    await assert.rejects(hasher.hash('correct horse'), /closed/);
  });
});

describe('hashing process', () => {
  it(`runs every thread of the child at nice ${HASH_PROCESS_NICE} or lower priority`, async () => {
    const hashing = new HashProcess({ threads: 2 });
    try {
      await hashing.kdf('correct horse', COST);
      const pid = hashing.pid!;
      assert.ok(pid > 0 && pid !== process.pid);
      const nice = threadNiceValues(pid);
      assert.ok(nice.length >= 3, `expected the main thread and pool threads, saw ${nice.length}`);
      for (const value of nice) assert.ok(value >= HASH_PROCESS_NICE, `a thread of the child runs at nice ${value}`);
      // The service's own threads keep their priority.
      assert.ok(threadNiceValues(process.pid).every((value) => value < HASH_PROCESS_NICE));
    } finally {
      await hashing.close();
    }
  });

  it("gives the child none of the service's environment", async () => {
    process.env.LOGKEEP_TEST_SECRET = 'not for the child';
    const hashing = new HashProcess({ threads: 2 });
    try {
      await hashing.kdf('correct horse', COST);
      const names = readFileSync(`/proc/${hashing.pid!}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((pair) => pair.slice(0, pair.indexOf('=')))
        .filter((name) => !name.startsWith('NODE_CHANNEL_')); // Node's own, for the IPC channel
      assert.deepEqual(names.sort(), ['LOGKEEP_HASH_NICE', 'UV_THREADPOOL_SIZE']);
    } finally {
      delete process.env.LOGKEEP_TEST_SECRET;
      await hashing.close();
    }
  });

  it('stops the child when idle and starts another for the next hash', async () => {
    const hashing = new HashProcess({ threads: 1, idleMs: 50 });
    try {
      const key = await hashing.kdf('correct horse', COST);
      const first = hashing.pid!;
      await waitUntil(() => !isRunning(first), 'the idle hashing process to exit');
      assert.equal(hashing.pid, undefined);
      assert.equal(await hashing.verify(key, 'correct horse'), true);
      assert.notEqual(hashing.pid, first);
    } finally {
      await hashing.close();
    }
  });

  it('fails the hashes in flight when the child dies, and recovers', async () => {
    const hashing = new HashProcess({ threads: 1 });
    try {
      await hashing.kdf('warm up', COST);
      const pending = hashing.kdf('correct horse', { logN: 17, r: 8, p: 1 });
      process.kill(hashing.pid!, 'SIGKILL');
      await assert.rejects(pending, /exited/);
      assert.equal(await hashing.verify(await hashing.kdf('again', COST), 'again'), true);
    } finally {
      await hashing.close();
    }
  });

  it('kills a child that stops answering, fails its hash as unavailable, and starts another for the next', { timeout: 30_000 }, async () => {
    const hashing = new HashProcess({ threads: 1, timeoutMs: 500 });
    try {
      const key = await hashing.kdf('correct horse', COST);
      const stuck = hashing.pid!;
      // A child that is alive but never answers.
      process.kill(stuck, 'SIGSTOP');
      await assert.rejects(hashing.verify(key, 'correct horse'), HashUnavailableError);
      await waitUntil(() => !isRunning(stuck) || processState(stuck) === 'Z', 'the stuck hashing process to be killed');
      assert.equal(await hashing.verify(key, 'correct horse'), true);
      assert.notEqual(hashing.pid, stuck);
    } finally {
      await hashing.close();
    }
  });

  it('reports a malformed stored key as an error, not a verdict', async () => {
    const hashing = new HashProcess({ threads: 1 });
    try {
      await assert.rejects(hashing.verify(Buffer.from('not a key').toString('base64'), 'x'), /password hashing failed/);
    } finally {
      await hashing.close();
    }
  });
});
