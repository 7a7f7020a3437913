/**
 * Where the command line keeps what `logkeep login` stored: one JSON file
 * per user (`$XDG_CONFIG_HOME/logkeep/config.json`, else
 * `~/.config/logkeep/config.json`; `LOGKEEP_CONFIG` names another),
 * created with mode 0600 in a 0700 folder, holding one entry per profile:
 * the service's URL and either an access key or a refresh token from a
 * password sign-in. `LOGKEEP_URL` and `LOGKEEP_KEY` override the stored
 * values, so a CI job needs no file at all.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from './errors.js';

export const DEFAULT_PROFILE = 'default';

export interface StoredProfile {
  url: string;
  /** An access key (`lka_…`), or a project secret key (`slk_…`) for `ingest` only. */
  key?: string;
  /** A refresh token from `login --username`: each use rotates it and the file is rewritten. */
  refreshToken?: string;
}

interface ConfigFile {
  profiles: Record<string, StoredProfile>;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOGKEEP_CONFIG) return env.LOGKEEP_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'logkeep', 'config.json');
}

async function readConfig(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`, EXIT.failure);
  }
  try {
    const parsed = JSON.parse(text) as ConfigFile;
    return typeof parsed.profiles === 'object' && parsed.profiles !== null ? parsed : { profiles: {} };
  } catch {
    throw new CliError(`${path} is not valid JSON; fix or remove it, then run 'logkeep login' again`, EXIT.failure);
  }
}

/** Writes the whole file atomically (a temporary file renamed over it), 0600 from its creation. */
async function writeConfig(path: string, config: ConfigFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

export async function saveProfile(name: string, profile: StoredProfile, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const path = configPath(env);
  const config = await readConfig(path);
  config.profiles[name] = profile;
  await writeConfig(path, config);
  return path;
}

/** What a command runs with: the URL and one credential, after the environment's overrides. */
export interface Credentials {
  url: string;
  key: string | null;
  refreshToken: string | null;
  profile: string;
}

export async function loadCredentials(profileName: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Credentials> {
  const name = profileName ?? env.LOGKEEP_PROFILE ?? DEFAULT_PROFILE;
  const stored = (await readConfig(configPath(env))).profiles[name];
  const url = env.LOGKEEP_URL || stored?.url;
  if (!url) {
    throw new CliError(
      `no service URL: run 'logkeep login --url <url>${name === DEFAULT_PROFILE ? '' : ` --profile ${name}`}' or set LOGKEEP_URL`,
      EXIT.unauthorized,
    );
  }
  const key = env.LOGKEEP_KEY || (env.LOGKEEP_URL && !stored ? undefined : stored?.key);
  const refreshToken = env.LOGKEEP_KEY ? undefined : stored?.refreshToken;
  if (!key && !refreshToken) throw new CliError(`no credentials: run 'logkeep login' or set LOGKEEP_KEY`, EXIT.unauthorized);
  return { url: url.replace(/\/+$/, ''), key: key ?? null, refreshToken: refreshToken ?? null, profile: name };
}

/** Stores the refresh token a refresh grant rotated to, so the next run can sign in with it. */
export async function storeRotatedRefreshToken(profileName: string, refreshToken: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const path = configPath(env);
  const config = await readConfig(path);
  const profile = config.profiles[profileName];
  if (!profile) return;
  profile.refreshToken = refreshToken;
  await writeConfig(path, config);
}
