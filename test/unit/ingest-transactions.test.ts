import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ingestTransactionsAtOnce, MAX_SERVER_INGEST_TRANSACTIONS } from '../../lib/logs/ingestion.js';

describe('ingestTransactionsAtOnce', () => {
  it('writes with one transaction at a time on the file backend, whatever the machine', () => {
    assert.equal(ingestTransactionsAtOnce('file', 10, null, 16), 1);
    assert.equal(ingestTransactionsAtOnce('file', 10, null, 1), 1);
  });

  it('on PostgreSQL, takes half the pool at most, at least one, and never more than the ceiling', () => {
    assert.equal(ingestTransactionsAtOnce('server', 10, 'db.example.net', 2), MAX_SERVER_INGEST_TRANSACTIONS);
    assert.equal(ingestTransactionsAtOnce('server', 64, 'db.example.net', 64), MAX_SERVER_INGEST_TRANSACTIONS);
    assert.equal(ingestTransactionsAtOnce('server', 4, 'db.example.net', 16), 2);
    assert.equal(ingestTransactionsAtOnce('server', 1, 'db.example.net', 16), 1);
  });

  it('on a PostgreSQL of this machine, no more transactions than the machine has cores', () => {
    for (const host of [null, '127.0.0.1', '127.1.2.3', 'localhost', 'LocalHost', 'db.localhost', '::1', '[::1]', '/var/run/postgresql']) {
      assert.equal(ingestTransactionsAtOnce('server', 10, host, 2), 2, String(host));
      assert.equal(ingestTransactionsAtOnce('server', 10, host, 1), 1, String(host));
      assert.equal(ingestTransactionsAtOnce('server', 10, host, 8), MAX_SERVER_INGEST_TRANSACTIONS, String(host));
      assert.equal(ingestTransactionsAtOnce('server', 2, host, 8), 1, String(host));
    }
  });

  it('takes a host that only looks local for a remote one', () => {
    for (const host of ['10.0.0.5', '127.example.com', 'localhost.example.com', '1270.0.0.1']) {
      assert.equal(ingestTransactionsAtOnce('server', 10, host, 2), MAX_SERVER_INGEST_TRANSACTIONS, host);
    }
  });
});
