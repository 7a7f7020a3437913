/**
 * Live-stream news between logkeep processes sharing one PostgreSQL:
 * "entries up to id N were committed for projects P…" and "project P was
 * blocked". Messages carry ids only; every process reads the rows itself.
 * A process ignores its own messages (it acted on them locally already).
 */
import { randomBytes } from 'node:crypto';
import type { ServiceLogger } from '../core/logger.js';
import type { SignalListener, StorageSignals } from '../storage/storage-signals.js';

export const ENTRIES_CHANNEL = 'logkeep_logs';
export const BLOCKS_CHANNEL = 'logkeep_blocks';

/** PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more; stay well below. */
const MAX_PAYLOAD = 7_000;
/** Written instead of the project list when it would not fit: "any project". */
const ANY_PROJECT = '*';

/** What another process reported. */
export interface LiveNews {
  /** Entries up to `maxId` were committed for these projects (null: any project). */
  entriesCommitted(projectIds: number[] | null, maxId: number): void;
  projectBlocked(projectId: number): void;
  /** A credential was revoked (an access key): every stream is re-checked now. */
  credentialsRevoked(): void;
  /** The link was down for a while: news may have been missed. */
  newsMayBeMissing(): void;
}

/** This process's side of the link. */
export interface LiveSignalLink {
  publishEntries(projectIds: readonly number[], maxId: number): void;
  publishBlocked(projectId: number): void;
  publishRevoked(): void;
  close(): Promise<void>;
}

/** Starts listening for other processes' news and returns the way to send ours. */
export async function linkProcesses(signals: StorageSignals, news: LiveNews, logger: ServiceLogger): Promise<LiveSignalLink> {
  const self = randomBytes(9).toString('base64url');
  const listener: SignalListener = await signals.listen([ENTRIES_CHANNEL, BLOCKS_CHANNEL], {
    onMessage(channel, payload) {
      const message = channel === ENTRIES_CHANNEL ? decodeEntries(payload) : decodeBlocked(payload);
      if (!message || message.sender === self) return;
      if ('maxId' in message) news.entriesCommitted(message.projectIds, message.maxId);
      else if (message.projectId === REVOKED) news.credentialsRevoked();
      else news.projectBlocked(message.projectId);
    },
    onConnected(reconnected) {
      if (reconnected) news.newsMayBeMissing();
    },
  });
  const send = (channel: string, payload: string) => {
    signals.notify(channel, payload).catch((err: unknown) => {
      // Other processes catch up at their next heartbeat.
      logger.warn('live streams: cannot notify other processes', { channel, error: String(err) });
    });
  };
  return {
    publishEntries: (projectIds, maxId) => send(ENTRIES_CHANNEL, encodeEntries(self, projectIds, maxId)),
    publishBlocked: (projectId) => send(BLOCKS_CHANNEL, `${self} ${projectId}`),
    publishRevoked: () => send(BLOCKS_CHANNEL, `${self} ${REVOKED_TEXT}`),
    close: () => listener.close(),
  };
}

/** `<sender> <maxId> <p1,p2,…>`, or `*` for the projects when the list is too long. */
export function encodeEntries(sender: string, projectIds: readonly number[], maxId: number): string {
  const payload = `${sender} ${maxId} ${projectIds.join(',')}`;
  return payload.length <= MAX_PAYLOAD && projectIds.length > 0 ? payload : `${sender} ${maxId} ${ANY_PROJECT}`;
}

export function decodeEntries(payload: string): { sender: string; maxId: number; projectIds: number[] | null } | null {
  const [sender, maxText, projects] = payload.split(' ');
  const maxId = Number(maxText);
  if (!sender || !projects || !Number.isSafeInteger(maxId)) return null;
  if (projects === ANY_PROJECT) return { sender, maxId, projectIds: null };
  const projectIds = projects.split(',').map(Number);
  return projectIds.every((id) => Number.isSafeInteger(id) && id > 0) ? { sender, maxId, projectIds } : null;
}

/** Sent on the blocks channel instead of a project id: "a credential was revoked", read as project id REVOKED. */
const REVOKED_TEXT = 'revoked';
const REVOKED = -1;

export function decodeBlocked(payload: string): { sender: string; projectId: number } | null {
  const [sender, idText] = payload.split(' ');
  if (sender && idText === REVOKED_TEXT) return { sender, projectId: REVOKED };
  const projectId = Number(idText);
  return sender && Number.isSafeInteger(projectId) && projectId > 0 ? { sender, projectId } : null;
}
