/**
 * The OpenID Connect relying party: discovery of the provider, the
 * authorization request (code flow, PKCE S256, `state`, `nonce`) and the
 * code's exchange with every check of the answer and its ID token (issuer,
 * audience, expiry, signature, `nonce`, the `iss` of the authorization
 * response), all by `openid-client`. Everything the provider sends is
 * bounded: each request's time and each answer's size.
 *
 * Between the start and the callback nothing is kept on the server: the
 * flow's secrets (`state`, `nonce`, the PKCE verifier) travel in a cookie
 * sealed with AES-256-GCM under a key derived from the signing secret,
 * HttpOnly, SameSite=Lax and scoped to the callback's path, so the flow
 * can only be finished by the browser that began it, on any process.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { isLoopbackUrl, type LogServiceConfig } from '../core/config.js';
import type { ServiceLogger } from '../core/logger.js';

/** Each request to the provider (discovery, keys, token, user info) gives up after this; a provider slower than this is down for a sign-in. */
export const OIDC_REQUEST_TIMEOUT_SECONDS = 10;
/** Largest answer read from the provider: discovery documents and key sets are a few KiB, a token answer with many groups tens of KiB. */
export const OIDC_MAX_RESPONSE_BYTES = 256 * 1024;
/** How long a person has between leaving for the provider and coming back: long enough to type a password and a second factor. */
export const OIDC_FLOW_TTL_SECONDS = 600;
/** The cookie that carries a flow's sealed secrets. */
export const OIDC_FLOW_COOKIE = 'logkeep_oidc_flow';
/** A sealed flow cookie is a few hundred bytes; anything longer is not ours. */
const MAX_FLOW_COOKIE_CHARS = 2048;
/** A failed discovery is retried at the next sign-in, but not before this, so a down provider is not hammered. */
const DISCOVERY_RETRY_MS = 5_000;

/** The provider's path back to this service, under `--public-url`. */
export const OIDC_CALLBACK_PATH = '/v1/auth/oidc/callback';

/** What a flow's cookie holds. */
interface FlowSecrets {
  state: string;
  nonce: string;
  verifier: string;
  expiresAt: number;
}

/** What the sign-in learned from the provider, checked. */
export interface VerifiedSignIn {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
}

/** Why a callback was refused; the console words each one. */
export type OidcFailure = 'flow_missing' | 'flow_expired' | 'state_mismatch' | 'provider_error' | 'provider_unreachable' | 'token_rejected';

export class OidcFlowError extends Error {
  constructor(
    readonly reason: OidcFailure,
    /** The provider's own error code (`access_denied`…), when it sent one. */
    readonly providerError: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(`single sign-on refused: ${reason}`, options);
  }
}

export interface OidcClient {
  readonly issuer: string;
  readonly callbackUrl: string;
  /** The provider's authorization address and the sealed cookie value to set with it. */
  begin(now: number): Promise<{ authorizationUrl: string; cookie: string }>;
  /** Exchanges the callback's code and checks everything; throws OidcFlowError. */
  finish(callbackQuery: URLSearchParams, cookie: string | null, now: number): Promise<VerifiedSignIn>;
}

/** A fetch that gives up after the timeout openid-client passes and reads at most OIDC_MAX_RESPONSE_BYTES. */
export const boundedFetch: oidc.CustomFetch = async (url, options) => {
  const response = await fetch(url, { ...options, redirect: 'manual' } as RequestInit);
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > OIDC_MAX_RESPONSE_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw new Error(`the provider's answer from ${new URL(url).origin} is larger than ${OIDC_MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(value);
    }
  }
  const body = response.status === 204 || response.status === 304 ? null : Buffer.concat(chunks);
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

/** Compares a presented value with the flow's, in time that does not depend on where they differ. */
function sameSecret(presented: string | null, expected: string): boolean {
  if (presented === null) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

function flowKey(secret: string): Buffer {
  return createHmac('sha256', 'logkeep-oidc-flow-v1').update(secret, 'utf8').digest();
}

function seal(key: Buffer, secrets: FlowSecrets): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function unseal(key: Buffer, sealed: string): FlowSecrets | null {
  if (sealed.length > MAX_FLOW_COOKIE_CHARS) return null;
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < 29) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    const value = JSON.parse(text) as Partial<FlowSecrets>;
    if (typeof value.state !== 'string' || typeof value.nonce !== 'string' || typeof value.verifier !== 'string' || typeof value.expiresAt !== 'number') {
      return null;
    }
    return value as FlowSecrets;
  } catch {
    return null;
  }
}

/** The client of the configured provider; discovery runs at the first sign-in (and again after a failure). */
export function createOidcClient(
  config: Pick<LogServiceConfig, 'oidcIssuer' | 'oidcClientId' | 'oidcClientSecret' | 'oidcScopes' | 'publicUrl' | 'jwtSecret'>,
  logger: ServiceLogger,
): OidcClient {
  const issuer = config.oidcIssuer as string;
  const callbackUrl = `${(config.publicUrl as string).replace(/\/+$/, '')}${OIDC_CALLBACK_PATH}`;
  const key = flowKey(config.jwtSecret);
  let discovered: Promise<oidc.Configuration> | null = null;
  let failedAt = 0;

  function configuration(now: number): Promise<oidc.Configuration> {
    if (discovered === null) {
      if (now - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(new OidcFlowError('provider_unreachable'));
      const issuerUrl = new URL(issuer);
      const auth = config.oidcClientSecret === null ? oidc.None() : oidc.ClientSecretBasic(config.oidcClientSecret);
      discovered = oidc
        .discovery(issuerUrl, config.oidcClientId as string, { redirect_uris: [callbackUrl] }, auth, {
          timeout: OIDC_REQUEST_TIMEOUT_SECONDS,
          [oidc.customFetch]: boundedFetch,
          ...(issuerUrl.protocol === 'http:' && isLoopbackUrl(issuerUrl) ? { execute: [oidc.allowInsecureRequests] } : {}),
        })
        .then((found) => {
          found.timeout = OIDC_REQUEST_TIMEOUT_SECONDS;
          found[oidc.customFetch] = boundedFetch;
          // The ID token's signature is checked against the provider's keys, not taken on TLS's word.
          oidc.enableNonRepudiationChecks(found);
          return found;
        })
        .catch((err: unknown) => {
          discovered = null;
          failedAt = now;
          logger.warn('OpenID Connect discovery failed', { err: String(err) });
          throw new OidcFlowError('provider_unreachable', null, { cause: err });
        });
    }
    return discovered;
  }

  return {
    issuer,
    callbackUrl,
    async begin(now) {
      const found = await configuration(now);
      const secrets: FlowSecrets = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        verifier: oidc.randomPKCECodeVerifier(),
        expiresAt: now + OIDC_FLOW_TTL_SECONDS * 1000,
      };
      const url = oidc.buildAuthorizationUrl(found, {
        redirect_uri: callbackUrl,
        scope: config.oidcScopes.join(' '),
        state: secrets.state,
        nonce: secrets.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(secrets.verifier),
        code_challenge_method: 'S256',
      });
      return { authorizationUrl: url.href, cookie: seal(key, secrets) };
    },
    async finish(query, cookie, now) {
      const secrets = cookie === null ? null : unseal(key, cookie);
      if (secrets === null) throw new OidcFlowError('flow_missing');
      if (secrets.expiresAt <= now) throw new OidcFlowError('flow_expired');
      const providerError = query.get('error');
      // The state is compared before anything else, the provider's own error included.
      if (!sameSecret(query.get('state'), secrets.state)) throw new OidcFlowError('state_mismatch');
      if (providerError !== null) throw new OidcFlowError('provider_error', providerError.slice(0, 64));
      const found = await configuration(now);
      const current = new URL(callbackUrl);
      for (const [name, value] of query) current.searchParams.append(name, value);
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(found, current, {
          pkceCodeVerifier: secrets.verifier,
          expectedState: secrets.state,
          expectedNonce: secrets.nonce,
          idTokenExpected: true,
        });
      } catch (err) {
        if (err instanceof oidc.AuthorizationResponseError) throw new OidcFlowError('provider_error', err.error.slice(0, 64), { cause: err });
        if (err instanceof oidc.ResponseBodyError) throw new OidcFlowError('provider_error', err.error.slice(0, 64), { cause: err });
        logger.warn('OpenID Connect sign-in refused', { err: String(err) });
        throw new OidcFlowError(err instanceof TypeError ? 'provider_unreachable' : 'token_rejected', null, { cause: err });
      }
      const claims = tokens.claims();
      if (!claims) throw new OidcFlowError('token_rejected');
      let merged: Record<string, unknown> = { ...claims };
      // Some providers (and scopes) put profile and group claims only in the user info.
      if (found.serverMetadata().userinfo_endpoint !== undefined) {
        try {
          const info = await oidc.fetchUserInfo(found, tokens.access_token, claims.sub);
          merged = { ...info, ...claims };
        } catch (err) {
          logger.warn('OpenID Connect user info could not be read; the ID token alone is used', { err: String(err) });
        }
      }
      return { issuer: found.serverMetadata().issuer, subject: claims.sub, claims: merged };
    },
  };
}
