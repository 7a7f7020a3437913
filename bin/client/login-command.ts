/**
 * `logkeep login`: stores a service URL and a credential under a profile
 * (the file is created 0600). With `--key` (or the key on standard input)
 * it stores an access key; with `--username` it signs in with the
 * password read from standard input and stores the refresh token (the
 * password is never stored). The service is asked first, so a wrong URL
 * or password is said at once.
 */
import { ApiSession, USER_AGENT, send } from './api.js';
import { CliError, EXIT, httpError, usageError } from './errors.js';
import { parseCommand } from './filters.js';
import { DEFAULT_PROFILE, saveProfile, type StoredProfile } from './profile.js';

export const LOGIN_HELP = `Usage: logkeep login --url <url> (--key <key> | --key-stdin | --username <name> --password-stdin) [--profile <name>]

Stores where the service is and how to sign in, in a per-user file
(~/.config/logkeep/config.json, mode 0600; LOGKEEP_CONFIG names another).

Options:
      --url <url>               The service's address (default: LOGKEEP_URL)
      --key <key>               An access key (lka_…), or a project secret key (slk_…) for ingest only
      --key-stdin               Read the key from standard input (keeps it out of the shell's history)
      --username <name>         Sign in with a password instead; the refresh token is stored, never the password
      --password-stdin          Read that password from standard input
      --profile <name>          Store under this name (default: "default"); commands take --profile too`;

export async function runLogin(argv: readonly string[]): Promise<void> {
  const { values } = parseCommand(argv, {
    url: { type: 'string' },
    key: { type: 'string' },
    'key-stdin': { type: 'boolean' },
    username: { type: 'string' },
    'password-stdin': { type: 'boolean' },
  });
  if (values.help) return void process.stdout.write(`${LOGIN_HELP}\n`);
  const rawUrl = (values.url as string | undefined) ?? process.env.LOGKEEP_URL;
  if (!rawUrl) throw usageError('--url is required (or set LOGKEEP_URL)');
  let url: string;
  try {
    const parsed = new URL(rawUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
    url = parsed.toString().replace(/\/+$/, '');
  } catch {
    throw usageError(`--url must be an http or https URL (got '${rawUrl}')`);
  }
  const profileName = (values.profile as string | undefined) ?? DEFAULT_PROFILE;
  let profile: StoredProfile;
  if (values.username !== undefined) {
    if (!values['password-stdin']) throw usageError('--username needs --password-stdin (the password is read from standard input)');
    const password = (await readStdin()).replace(/\r?\n$/, '');
    profile = { url, refreshToken: await signIn(url, values.username as string, password) };
  } else {
    const key = values['key-stdin'] ? (await readStdin()).trim() : (values.key as string | undefined);
    if (!key) throw usageError('give --key, --key-stdin or --username');
    if (!key.startsWith('lka_') && !key.startsWith('slk_')) throw usageError('the key must be an access key (lka_…) or a project secret key (slk_…)');
    await checkReachable(url);
    profile = { url, key };
  }
  const path = await saveProfile(profileName, profile);
  process.stdout.write(`stored profile '${profileName}' for ${url} in ${path}\n`);
  // A signed-in profile is checked once more through the stored refresh token, as every later command will use it.
  if (profile.refreshToken) await new ApiSession({ url, key: null, refreshToken: profile.refreshToken, profile: profileName }).bearer();
}

async function signIn(url: string, username: string, password: string): Promise<string> {
  const res = await send(`${url}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  const body = (await res.json().catch(() => null)) as { refresh_token?: string } | null;
  if (!res.ok || typeof body?.refresh_token !== 'string') {
    const error = httpError(res.status === 400 ? 401 : res.status, body, 'sign-in');
    throw new CliError(error.message, res.status === 400 ? EXIT.unauthorized : error.exitCode);
  }
  return body.refresh_token;
}

async function checkReachable(url: string): Promise<void> {
  const res = await send(`${url}/healthz`, { headers: { 'user-agent': USER_AGENT } });
  if (!res.ok) throw new CliError(`${url} does not look like a logkeep service (GET /healthz answered ${res.status})`, EXIT.failure);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
