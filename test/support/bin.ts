/**
 * The built `logkeep` binary as a child process: run it to completion, or
 * start it and watch its output. Tests run what `npm test` built
 * (`dist/bin/logkeep.cjs`); a missing build fails them with a clear message.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { checkResponsesOf } from './openapi.js';

/** The executable `package.json` names under `bin.logkeep`. */
export const BIN_PATH = fileURLToPath(new URL('../../dist/bin/logkeep.cjs', import.meta.url));

/** Throws unless the binary has been built. */
export function assertBinBuilt(): void {
  if (!existsSync(BIN_PATH)) {
    throw new Error(`${BIN_PATH} is missing: run \`npm run build\` first (\`npm test\` builds before testing)`);
  }
}

/**
 * The parent's environment without any `SERVICE_*` variable (so a
 * developer's own settings never leak into a test), plus `env`. A value of
 * undefined removes the variable.
 */
export function binEnvironment(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SERVICE_')) clean[name] = value;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete clean[name];
    else clean[name] = value;
  }
  return clean;
}

export interface BinResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** Kill the process (and fail) after this long. Default 30 s. */
  timeoutMs?: number;
  /** Written to the process's standard input, which is then closed (default: no standard input). */
  input?: string | Buffer;
}

/** Runs `logkeep <args>` to completion. */
export async function runBin(args: readonly string[], options: RunOptions = {}): Promise<BinResult> {
  const running = startBin(args, options);
  return running.exited(options.timeoutMs ?? 30_000);
}

export interface RunningBin {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout + stderr match `pattern`; rejects if the process exits first or time runs out. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the result once the process exits; kills it after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<BinResult>;
  /** Kills the process if it still runs (for cleanup). */
  kill(): void;
}

/** Starts `logkeep <args>` and returns a handle on it. */
export function startBin(args: readonly string[], options: RunOptions = {}): RunningBin {
  assertBinBuilt();
  const child = spawn(process.execPath, [BIN_PATH, ...args], {
    env: binEnvironment(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    notify();
  });
  const exit = new Promise<BinResult>((resolve) => {
    child.on('close', (code, signal) => {
      resolve({ code, signal, stdout, stderr });
      notify();
    });
  });
  let done = false;
  void exit.then(() => {
    done = true;
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForOutput(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = (stdout + stderr).match(pattern);
          if (match) finish(() => resolve(match));
          else if (done) finish(() => reject(new Error(`logkeep exited before printing ${pattern}\nstdout:\n${stdout}\nstderr:\n${stderr}`)));
        };
        const timer = setTimeout(
          () => finish(() => reject(new Error(`logkeep did not print ${pattern} within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`))),
          timeoutMs,
        );
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
    async exited(timeoutMs = 30_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`logkeep did not exit within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
      });
      try {
        return await Promise.race([exit, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    kill() {
      if (!done) child.kill('SIGKILL');
    },
  };
}

/** A TCP port that was free a moment ago on 127.0.0.1 (the binary is given it explicitly). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Polls `GET <url>/healthz` until it answers 200; returns the body. */
export async function waitForHealthz(baseUrl: string, timeoutMs = 30_000): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/healthz`);
      if (res.status === 200) return (await res.json()) as unknown;
      lastError = new Error(`status ${res.status}`);
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${baseUrl}/healthz did not answer 200 within ${timeoutMs} ms: ${String(lastError)}`);
}

/** Starts `logkeep serve` on a fresh port and waits until it says it listens; returns its base URL. */
export async function startServing(args: readonly string[], env: Record<string, string | undefined>): Promise<{ bin: RunningBin; url: string }> {
  const port = await freePort();
  const bin = startBin(['serve', '--http-host', '127.0.0.1', '--http-port', String(port), ...args], { env });
  try {
    const match = await bin.waitForOutput(/listening on (http:\/\/\S+)/);
    // The bin serves the routes at its root: its answers are checked against the OpenAPI document.
    checkResponsesOf(match[1] as string);
    return { bin, url: match[1] as string };
  } catch (err) {
    bin.kill();
    throw err;
  }
}

/** What `startPostgresBin` needs of the shared database (see support/postgres.ts). */
export interface SharedPostgres {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

/** The temporary password every `startPostgresBin` process bootstraps its admin with. */
export const BIN_BOOTSTRAP_PASSWORD = 'bootstrap-password-1';

/**
 * Starts `logkeep serve` (startServing) against a shared PostgreSQL
 * database, with the same JWT secret as every other process it starts
 * (tokens issued by one work on the others), rate limiting off and
 * `extraArgs` appended; resolves once it listens.
 */
export function startPostgresBin(pg: SharedPostgres, extraArgs: readonly string[] = []): Promise<{ bin: RunningBin; url: string }> {
  return startServing(
    [
      ...['--db-backend', 'server', '--db-server-host', pg.host, '--db-server-port', String(pg.port)],
      ...['--db-server-database', pg.database, '--db-server-username', pg.user, '--db-server-ssl-mode', 'disable'],
      '--no-rate-limit-enabled',
      ...extraArgs,
    ],
    {
      SERVICE_JWT_SECRET: 'processes-test-secret-0123456789abcdef',
      SERVICE_DB_SERVER_PASSWORD: pg.password,
      SERVICE_BOOTSTRAP_ADMIN_PASSWORD: BIN_BOOTSTRAP_PASSWORD,
    },
  );
}
