/**
 * The service as the command line talks to it: one bearer credential (an
 * access key as stored, or an access token obtained once per run from the
 * stored refresh token, whose rotation is written back), JSON requests, and
 * errors turned into words with their HTTP code.
 */
import { CliError, EXIT, httpError } from './errors.js';
import { storeRotatedRefreshToken, type Credentials } from './profile.js';

export const USER_AGENT = 'logkeep-cli';

export class ApiSession {
  private bearerValue: string | null;

  constructor(readonly credentials: Credentials) {
    this.bearerValue = credentials.key;
  }

  get url(): string {
    return this.credentials.url;
  }

  /** The Authorization value's credential: the key, or an access token from the refresh token (rotated and stored). */
  async bearer(): Promise<string> {
    if (this.bearerValue !== null) return this.bearerValue;
    const refreshToken = this.credentials.refreshToken;
    if (refreshToken === null) throw new CliError("no credentials: run 'logkeep login'", EXIT.unauthorized);
    const res = await send(`${this.url}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    });
    const body = await readJson(res);
    if (!res.ok) {
      const error = httpError(res.status === 400 ? 401 : res.status, body, 'signing in with the stored refresh token');
      throw new CliError(`${error.message} (run 'logkeep login' again)`, error.exitCode);
    }
    const tokens = body as { access_token: string; refresh_token: string };
    await storeRotatedRefreshToken(this.credentials.profile, tokens.refresh_token);
    this.bearerValue = tokens.access_token;
    return this.bearerValue;
  }

  /** GET a JSON answer; any error status becomes a CliError naming `what`. */
  async getJson(path: string, query: URLSearchParams, what: string, signal?: AbortSignal): Promise<unknown> {
    const res = await send(`${this.url}${path}?${query.toString()}`, {
      headers: { authorization: `Bearer ${await this.bearer()}`, 'user-agent': USER_AGENT, accept: 'application/json' },
      ...(signal ? { signal } : {}),
    });
    const body = await readJson(res);
    if (!res.ok) throw httpError(res.status, body, what);
    return body;
  }
}

/** fetch, with a failure to connect said in words. */
export async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(`cannot reach ${new URL(url).origin}: ${cause?.code ?? cause?.message ?? (err as Error).message}`, EXIT.failure);
  }
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    if (res.ok) throw new CliError(`the service answered ${res.status} with a body that is not JSON`, EXIT.failure);
    return null;
  }
}
