/**
 * `createAdmin` (and the bin's `create-admin` command built on it) applies
 * the username and password rules of `POST /v1/users` on both backends:
 * a refused name creates nothing, and the command exits 1 with the rule in
 * its message instead of storing the name or crashing.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../lib/admin/create-admin.js';
import { LogServiceError } from '../../lib/core/errors.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { silentLogger } from '../../lib/core/logger.js';
import { runCreateAdmin } from '../../bin/create-admin-command.js';
import { describeEachBackend, newTestDatabase } from '../support/backends.js';
import { TEST_SCRYPT_LOG_N } from '../support/service.js';

describeEachBackend('createAdmin username rules', (backend) => {
  it('refuses the usernames POST /v1/users refuses, naming the field, and creates nothing', async () => {
    const database = await newTestDatabase(backend);
    try {
      for (const [username, reason] of [
        ['', 'required'],
        ['tab\there', 'invalid'],
        ['nul\u0000name', 'invalid'],
        ['line\nbreak', 'invalid'],
        ['x'.repeat(129), 'too_long'],
      ] as const) {
        await assert.rejects(createAdmin(database.config, { username, password: 'admin-password-1', passwordHashLogN: TEST_SCRYPT_LOG_N }), (err: unknown) => {
          assert.ok(err instanceof LogServiceError, String(err));
          assert.equal(err.code, 'invalid_request');
          assert.deepEqual([err.details?.field, err.details?.reason], ['username', reason], JSON.stringify(username));
          return true;
        });
      }
      await assert.rejects(
        createAdmin(database.config, { username: 'nul-password', password: 'admin-password-1\u0000', passwordHashLogN: TEST_SCRYPT_LOG_N }),
        {
          code: 'invalid_request',
          details: { field: 'password', reason: 'invalid' },
        },
      );
      const storage = await openStorage(database.config, { logger: silentLogger });
      try {
        assert.equal(await storage.countUsers(), 0);
      } finally {
        await storage.close();
      }
      const made = await createAdmin(database.config, { username: 'x'.repeat(128), passwordHashLogN: TEST_SCRYPT_LOG_N });
      assert.equal(made.user.username.length, 128);
    } finally {
      await database.cleanup();
    }
  });

  it('the create-admin command exits 1 with the rule in its message', async (t) => {
    const database = await newTestDatabase(backend);
    const written: string[] = [];
    t.mock.method(process.stderr, 'write', (chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const exitCode = process.exitCode;
    try {
      await runCreateAdmin({ database: database.config, username: 'x'.repeat(129), password: 'admin-password-1', warnings: [] });
      assert.equal(process.exitCode, 1);
      assert.match(written.join(''), /cannot create the administrator: The username must be at most 128 characters/);
      process.exitCode = exitCode;
      written.length = 0;
      await runCreateAdmin({ database: database.config, username: 'tab\there', password: 'admin-password-1', warnings: [] });
      assert.equal(process.exitCode, 1);
      assert.match(written.join(''), /no control characters/);
    } finally {
      process.exitCode = exitCode;
      await database.cleanup();
    }
  });
});
