/**
 * A real OpenID provider in-process (`oidc-provider`) for the single
 * sign-on tests. It listens on a loopback port before it is configured, so
 * a logkeep service can be started with its issuer, and the provider then
 * registers that service's callback address as its client's redirect URI.
 *
 * The interaction (login and consent) finishes by itself as whichever
 * account the test chose with `signInAs`, so a flow runs without a form; a
 * browser sees the same redirects. `tamperIdToken` rewrites the ID token of
 * the next token answers, for the tests of what logkeep must refuse.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import Provider from 'oidc-provider';

export const TEST_CLIENT_ID = 'logkeep-test';
export const TEST_CLIENT_SECRET = 'logkeep-test-secret-0123456789abcdef';

export interface TestAccount {
  preferred_username?: string;
  name?: string;
  email?: string;
  email_verified?: boolean;
  groups?: string[];
}

export interface TestProvider {
  issuer: string;
  /** Registers the relying party's redirect URI; call once, before the first sign-in. */
  registerClient(redirectUris: string[]): Promise<void>;
  /** The account the next interactions sign in as (its claims may change between sign-ins). */
  signInAs(subject: string, account?: TestAccount): void;
  /** Rewrites the ID token of every token answer until cleared (null). */
  tamperIdToken(edit: ((claims: Record<string, unknown>) => Record<string, unknown>) | null, options?: { foreignKey?: boolean }): void;
  stop(): Promise<void>;
}

async function signingKey(kid: string): Promise<{ privateJwk: JWK; key: CryptoKey }> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  return { privateJwk, key: privateKey as CryptoKey };
}

export async function startTestProvider(): Promise<TestProvider> {
  let provider: Provider | null = null;
  const server: Server = createServer((req, res) => {
    if (provider === null) {
      res.statusCode = 503;
      res.end();
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      finishInteraction(req, res).catch((err) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, TestAccount>();
  let current = 'alice-sub';
  let tamper: { edit: (claims: Record<string, unknown>) => Record<string, unknown>; foreignKey: boolean } | null = null;
  const real = await signingKey('test-key');
  const foreign = await signingKey('test-key');

  async function finishInteraction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const p = provider as Provider;
    const details = await p.interactionDetails(req, res);
    const grant = new p.Grant({ accountId: current, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await p.interactionFinished(req, res, { login: { accountId: current }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  return {
    issuer,
    async registerClient(redirectUris) {
      provider = new Provider(issuer, {
        clients: [
          {
            client_id: TEST_CLIENT_ID,
            client_secret: TEST_CLIENT_SECRET,
            redirect_uris: redirectUris,
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        jwks: { keys: [real.privateJwk] },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        scopes: ['openid', 'profile', 'email', 'groups'],
        claims: { profile: ['name', 'preferred_username'], email: ['email', 'email_verified'], groups: ['groups'] },
        conformIdTokenClaims: false,
        ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        findAccount: (_ctx, sub) => ({
          accountId: sub,
          claims: () => ({ sub, ...(accounts.get(sub) ?? {}) }),
        }),
      });
      provider.use(async (ctx, next) => {
        await next();
        const body = ctx.body as Record<string, unknown> | undefined;
        if (tamper === null || ctx.path !== '/token' || typeof body?.id_token !== 'string') return;
        const claims = tamper.edit(decodeJwt(body.id_token) as Record<string, unknown>);
        body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(tamper.foreignKey ? foreign.key : real.key);
      });
    },
    signInAs(subject, account = {}) {
      current = subject;
      accounts.set(subject, account);
    },
    tamperIdToken(edit, options = {}) {
      tamper = edit === null ? null : { edit, foreignKey: options.foreignKey ?? false };
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Cookies per origin, enough for one flow through logkeep and the provider. */
export class CookieJar {
  private readonly byOrigin = new Map<string, Map<string, string>>();

  header(url: URL): string | undefined {
    const jar = this.byOrigin.get(url.origin);
    return jar && jar.size > 0 ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }

  store(url: URL, response: Response): void {
    const jar = this.byOrigin.get(url.origin) ?? new Map<string, string>();
    this.byOrigin.set(url.origin, jar);
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }

  get(origin: string, name: string): string | undefined {
    return this.byOrigin.get(origin)?.get(name);
  }

  set(origin: string, name: string, value: string): void {
    const jar = this.byOrigin.get(origin) ?? new Map<string, string>();
    this.byOrigin.set(origin, jar);
    jar.set(name, value);
  }
}

/** One GET with the jar's cookies, no redirect followed; returns the answer and its Location. */
export async function step(jar: CookieJar, url: string): Promise<{ status: number; location: string | null; response: Response }> {
  const target = new URL(url);
  const cookie = jar.header(target);
  const response = await fetch(target, { redirect: 'manual', headers: cookie === undefined ? {} : { cookie } });
  jar.store(target, response);
  await response.arrayBuffer();
  const location = response.headers.get('location');
  return { status: response.status, location: location === null ? null : new URL(location, target).href, response };
}

/** Follows redirects from `url` until one leaves for an address `stop` accepts (or an answer is not a redirect). */
export async function followUntil(jar: CookieJar, url: string, stop: (url: string) => boolean): Promise<string> {
  let next = url;
  for (let hops = 0; hops < 20; hops++) {
    const answer = await step(jar, next);
    if (answer.location === null) throw new Error(`no redirect from ${next}: ${answer.status}`);
    if (stop(answer.location)) return answer.location;
    next = answer.location;
  }
  throw new Error('too many redirects');
}
