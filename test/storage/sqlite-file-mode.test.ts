/**
 * The SQLite database holds password hashes and every log entry, so a new
 * one is created readable and writable by its owner only, and its `-wal`
 * and `-shm` files (which SQLite creates with the database file's mode) are
 * too. An existing file keeps its mode; a mode open to others is warned
 * about at start. Only the file backend has files.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import { newTestDatabase } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { signInAdmin } from '../support/actors.js';
import { silentLogger, type ServiceLogger } from '../../lib/core/logger.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('SQLite file modes', () => {
  it('creates the database, -wal and -shm files with mode 0600 (SQLite alone makes them 0644 under umask 022)', async () => {
    const database = await newTestDatabase('file');
    const path = database.config.dbPath!;
    const previous = process.umask(0o022);
    let svc: RunningService;
    try {
      svc = await startService('file', { database });
    } finally {
      process.umask(previous);
    }
    try {
      // A write so the WAL surely has content, and the shared-memory index exists.
      const admin = await signInAdmin(svc.url);
      assert.equal((await api(svc.url, 'POST', '/v1/groups', { token: admin.token, json: { name: 'g' } })).status, 201);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        assert.ok(existsSync(file), `${file} exists`);
        assert.equal(modeOf(file).toString(8), '600', file);
      }
    } finally {
      await svc.stop({ dropDatabase: true });
    }
  });

  it('keeps the mode of an existing database file, and warns when others may read it', async () => {
    const database = await newTestDatabase('file');
    const path = database.config.dbPath!;
    closeSync(openSync(path, 'w'));
    chmodSync(path, 0o640);
    const warnings: string[] = [];
    const logger: ServiceLogger = { ...silentLogger, warn: (msg) => warnings.push(msg) };
    const svc = await startService('file', { database, logger });
    try {
      assert.equal(modeOf(path).toString(8), '640');
      assert.equal(modeOf(`${path}-wal`).toString(8), '640');
      assert.ok(
        warnings.some((w) => w.includes(path) && /mode 0640/.test(w) && /chmod 600/.test(w)),
        warnings.join('\n'),
      );
    } finally {
      await svc.stop({ dropDatabase: true });
    }
  });

  it('says nothing about an owner-only file', async () => {
    const database = await newTestDatabase('file');
    const warnings: string[] = [];
    const svc = await startService('file', { database, logger: { ...silentLogger, warn: (msg) => warnings.push(msg) } });
    try {
      assert.deepEqual(
        warnings.filter((w) => w.includes('database file')),
        [],
      );
    } finally {
      await svc.stop({ dropDatabase: true });
    }
  });
});
