/**
 * Password hashes run in a child process at the lowest CPU priority. A hash
 * at the production cost keeps one core busy for ~0.2 s and touches 16 MiB;
 * in the service's own process it would run on libuv's thread pool, which
 * sqlite3 runs every statement on, and compete on equal terms with
 * ingestion and queries. In a child it has its own pool, its memory is
 * returned when the child exits, the operating system's priority applies to
 * it as a whole, and a hash that never finishes can be killed outright
 * (a worker thread cannot be stopped inside a native call).
 *
 * The child starts on the first hash and exits after `idleMs` without one,
 * so an idle service holds no second process. It runs `hash-child.js` next
 * to this module when compiled; from source under tsx (tests, benches) it
 * runs the .ts source with tsx's loader, a development dependency looked
 * up only then.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { HashJob, HashJobBody, HashReply, ScryptCost } from './hash-child.js';

export type { ScryptCost };

/**
 * The child's nice value, the lowest priority: while the service's own
 * threads want the CPU they get nearly all of it, and logins slow down
 * instead. Every thread of the child is set (Linux keeps a nice value per
 * thread), the pool threads scrypt runs on included.
 */
export const HASH_PROCESS_NICE = 19;
const DEFAULT_IDLE_MS = 30_000;
/**
 * How long one hash may take once the child has it. A hash takes ~0.2 s on
 * an idle machine and a few seconds behind busy service threads; a child
 * silent for this long is stuck (or its reply was lost), and without a
 * limit every sign-in behind it would wait forever.
 */
export const DEFAULT_HASH_TIMEOUT_MS = 30_000;

/**
 * A hash that will not be answered: it timed out, or it was in flight in a
 * child that was ended because another hash timed out. Retrying is safe.
 */
export class HashUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HashUnavailableError';
  }
}

export interface HashProcessOptions {
  /** libuv pool threads in the child: as many as hashes may run at once. */
  threads: number;
  /** How long the child stays after its last hash (default 30 s). */
  idleMs?: number;
  /** How long one hash may take in the child before it is ended and replaced (default 30 s). */
  timeoutMs?: number;
  /** Test hook: true loses the child's reply to the hash about to be sent, as a stuck child would. */
  loseReply?: () => boolean;
}

interface Pending {
  resolve(reply: HashReply): void;
  reject(err: Error): void;
}

export class HashProcess {
  private child: ChildProcess | null = null;
  private ready: Promise<ChildProcess> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Hashes whose reply is to be dropped (`loseReply`). */
  private readonly lost = new Set<number>();

  constructor(private readonly options: HashProcessOptions) {}

  /** The child's pid while it runs (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async kdf(password: string, cost: ScryptCost): Promise<string> {
    const reply = await this.run({ op: 'kdf', password, cost });
    if (!('key' in reply)) throw new Error('the password hashing process gave no key');
    return reply.key;
  }

  async verify(key: string, password: string): Promise<boolean> {
    const reply = await this.run({ op: 'verify', password, key });
    if (!('ok' in reply)) throw new Error('the password hashing process gave no verdict');
    return reply.ok;
  }

  /** Stops the child; hashes in flight fail. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop();
  }

  private async run(body: HashJobBody): Promise<HashReply> {
    if (this.closed) throw new Error('the password hasher is closed');
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const id = this.nextId++;
    const reply = new Promise<HashReply>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    reply.catch(() => undefined); // rejected while start() fails: the failure is reported once, below
    // Keep the parent alive while a hash is owed (a script awaiting create-admin).
    this.holdOpen(true);
    try {
      const child = await this.start();
      if (this.options.loseReply?.()) this.lost.add(id);
      child.send({ id, ...body } satisfies HashJob);
      const result = await this.withinTimeout(reply, child);
      if ('error' in result) throw new Error(`password hashing failed: ${result.error}`);
      return result;
    } finally {
      this.pending.delete(id);
      this.lost.delete(id);
      if (this.pending.size === 0) this.becomeIdle();
    }
  }

  /** The reply, unless the child stays silent past the timeout: then it is ended (the next hash starts another). */
  private async withinTimeout(reply: Promise<HashReply>, child: ChildProcess): Promise<HashReply> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new HashUnavailableError('the password hashing process did not answer in time'));
        this.endStuckChild(child);
      }, this.options.timeoutMs ?? DEFAULT_HASH_TIMEOUT_MS);
    });
    try {
      return await Promise.race([reply, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Kills a child that stopped answering. The hashes it still owed fail as
   * unavailable (retrying is safe); SIGKILL ends it even if it is stopped
   * or busy in native code.
   */
  private endStuckChild(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = null;
    this.ready = null;
    for (const waiting of this.pending.values()) waiting.reject(new HashUnavailableError('the password hashing process was restarted'));
    child.kill('SIGKILL');
  }

  private start(): Promise<ChildProcess> {
    if (this.ready) return this.ready;
    const child = spawnChild(this.options);
    this.child = child;
    this.ready = new Promise<ChildProcess>((resolve, reject) => {
      child.once('message', () => resolve(child));
      child.once('error', reject);
      child.once('exit', () => reject(new Error('the password hashing process exited before it was ready')));
    });
    this.ready.catch(() => undefined);
    child.on('message', (reply: HashReply) => {
      if (!this.lost.has(reply.id)) this.pending.get(reply.id)?.resolve(reply);
    });
    child.on('error', () => undefined);
    child.on('exit', () => {
      if (this.child !== child) return;
      this.child = null;
      this.ready = null;
      for (const waiting of this.pending.values()) waiting.reject(new Error('the password hashing process exited'));
    });
    return this.ready;
  }

  private holdOpen(hold: boolean): void {
    const child = this.child;
    if (!child) return;
    if (hold) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }

  private becomeIdle(): void {
    this.holdOpen(false);
    this.idleTimer = setTimeout(() => this.stop(), this.options.idleMs ?? DEFAULT_IDLE_MS);
    this.idleTimer.unref();
  }

  private stop(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const child = this.child;
    this.child = null;
    this.ready = null;
    if (child) {
      for (const waiting of this.pending.values()) waiting.reject(new Error('the password hashing process stopped'));
      child.kill();
    }
  }
}

function spawnChild(options: HashProcessOptions): ChildProcess {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './hash-child.ts' : './hash-child.js', import.meta.url);
  // Only what the child needs: none of the service's secrets travel in its environment.
  const env: NodeJS.ProcessEnv = {
    UV_THREADPOOL_SIZE: String(Math.max(1, options.threads)),
    LOGKEEP_HASH_NICE: String(HASH_PROCESS_NICE),
  };
  const execArgv = fromSource ? ['--import', import.meta.resolve('tsx')] : [];
  return fork(entry, [], { env, execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' });
}
