/**
 * Alert delivery on both backends, to real receivers: a generic webhook
 * whose signature a receiver verifies with the secret shown once, a
 * Slack-compatible webhook, e-mail through an in-process SMTP server,
 * retries after a 5xx, a redirect not followed, a destination that hangs
 * while another rule's delivery and ingestion go on, and destinations on
 * private addresses refused unless the operator allows them.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, createGroup, createKey, createProject, refreshActor, signInAdmin, type TestActor } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { startMailReceiver, startWebhookReceiver, type MailReceiver, type WebhookReceiver } from '../support/receivers.js';

const START = Date.parse('2026-04-01T08:00:00.000Z');
const PUBLIC_URL = 'https://logs.example.com';
const entry = (event: string, extra: Record<string, unknown> = {}) => ({ level: 'error', event, timestamp: '2026-04-01T08:00:00Z', ...extra });

/** What a receiver does with `X-Logkeep-Signature` (as docs/alerts.md shows). */
function verify(secret: string, header: string, body: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1 ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describeEachBackend('alert delivery', (backend) => {
  let svc: RunningService;
  let url: string;
  let clock = START;
  let admin: TestActor;
  let project: number;
  let key: string;
  let hook: WebhookReceiver;
  let mail: MailReceiver;
  let serial = 0;

  before(async () => {
    hook = await startWebhookReceiver();
    mail = await startMailReceiver();
    svc = await startService(backend, {
      now: () => clock,
      settings: { alertAllowPrivateTargets: true, publicUrl: PUBLIC_URL, alertSmtpUrl: mail.url, alertEmailFrom: 'alerts@logkeep.test' },
    });
    url = svc.url;
    admin = await signInAdmin(url);
    const group = await createGroup(url, admin.token, 'delivering');
    project = await createProject(url, admin.token, group, 'shop');
    key = (await createKey(url, admin.token, project)).secret;
  });
  after(async () => {
    await svc.stop({ dropDatabase: true });
    await hook.close();
    await mail.close();
  });

  /** A saved search for a word of its own and an any_match rule on it sending to `destination`. */
  async function ruleFor(word: string, destination: Record<string, unknown>): Promise<any> {
    clock = START + ++serial * 7_200_000;
    hook.answers.length = 0;
    await refreshActor(url, admin);
    const search = await api(url, 'POST', '/v1/saved-searches', { token: admin.token, json: { name: word, project_id: project, query: `q=${word}` } });
    assertStatus(search, 201);
    const rule = await api(url, 'POST', '/v1/alert-rules', {
      token: admin.token,
      json: { saved_search_id: search.body.id, name: `${word} rule`, kind: 'any_match', quiet_seconds: 600, destination },
    });
    assertStatus(rule, 201);
    return rule.body;
  }

  async function notificationsOf(ruleId: number): Promise<any[]> {
    await svc.service.runAlertsDue();
    const res = await api(url, 'GET', `/v1/alert-rules/${ruleId}/notifications`, { token: admin.token });
    assertStatus(res, 200);
    return res.body.items;
  }

  it('a generic webhook gets the payload, signed with the secret shown once', async () => {
    const rule = await ruleFor('signed', { type: 'webhook', url: `${hook.url}?token=abc` });
    assert.equal(rule.destination.type, 'webhook');
    assert.equal(rule.destination.label, hook.url, 'the label leaves the query out');
    assert.match(rule.destination.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    const again = await api(url, 'GET', `/v1/alert-rules/${rule.id}`, { token: admin.token });
    assert.deepEqual(again.body.destination, { type: 'webhook', label: hook.url }, 'never shown again');
    const before = hook.requests.length;
    await ingestAll(url, key, [entry('signed order 1', { n: 1 }), entry('unrelated'), entry('signed order 2', { n: 2 })]);
    const [n] = await notificationsOf(rule.id);
    const received = (await hook.waitFor(before + 1))[before]!;
    assert.equal(received.path, '/hook?token=abc');
    assert.equal(received.headers['content-type'], 'application/json');
    assert.equal(received.headers['x-logkeep-delivery'], String(n.id));
    const signatureHeader = String(received.headers['x-logkeep-signature']);
    assert.match(signatureHeader, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(signatureHeader.split(',')[0], `t=${Math.floor(clock / 1000)}`);
    assert.ok(verify(rule.destination.secret, signatureHeader, received.body));
    assert.ok(!verify(rule.destination.secret, signatureHeader, received.body.replace('signed', 'forged')));
    const payload = JSON.parse(received.body);
    assert.deepEqual(payload.rule, { id: rule.id, name: 'signed rule', kind: 'any_match', saved_search_id: rule.saved_search_id });
    assert.deepEqual(payload.notification, { id: n.id, kind: 'fired', window_start: n.window_start, window_end: n.window_end, count: 2 });
    assert.deepEqual(
      payload.entries.map((e: any) => [e.event, e.n]),
      [
        ['signed order 1', 1],
        ['signed order 2', 2],
      ],
    );
    assert.equal(payload.link, `${PUBLIC_URL}/console/#/explore?project_id=${project}&q=signed`);
    assert.deepEqual(
      { ...n.delivery, delivered_at: n.delivery.delivered_at !== null },
      { state: 'delivered', attempts: 1, next_attempt_at: null, last_error: null, delivered_at: true },
    );
    // Delivered once: nothing more arrives on a later pass.
    await svc.service.runAlertsDue();
    assert.equal(hook.requests.filter((r) => r.headers['x-logkeep-delivery'] === String(n.id)).length, 1);
  });

  it('a 5xx is retried after a wait, a redirect is not followed, and each failure is said in words', async () => {
    const rule = await ruleFor('flaky', { type: 'webhook', url: hook.url });
    hook.answers.push(503, 302);
    const before = hook.requests.length;
    await ingestAll(url, key, [entry('flaky payment')]);
    let [n] = await notificationsOf(rule.id);
    assert.deepEqual([n.delivery.state, n.delivery.attempts, n.delivery.last_error], ['pending', 1, 'the destination answered 503']);
    assert.equal(n.delivery.next_attempt_at, new Date(clock + 5_000).toISOString());
    // Not before its time.
    [n] = await notificationsOf(rule.id);
    assert.equal(n.delivery.attempts, 1);
    clock += 5_000;
    [n] = await notificationsOf(rule.id);
    assert.deepEqual(
      [n.delivery.state, n.delivery.attempts, n.delivery.last_error],
      ['pending', 2, 'the destination answered 302; redirects are not followed'],
    );
    assert.equal(n.delivery.next_attempt_at, new Date(clock + 10_000).toISOString());
    clock += 10_000;
    [n] = await notificationsOf(rule.id);
    assert.deepEqual([n.delivery.state, n.delivery.attempts, n.delivery.last_error], ['delivered', 3, null]);
    assert.equal(hook.requests.length - before, 3);
  });

  it('gives up an hour after the notification, saying why', async () => {
    const rule = await ruleFor('hopeless', { type: 'webhook', url: hook.url });
    hook.answers.push(...Array<number>(20).fill(500));
    await ingestAll(url, key, [entry('hopeless case')]);
    let [n] = await notificationsOf(rule.id);
    const created = clock;
    while (n.delivery.state === 'pending') {
      clock = Date.parse(n.delivery.next_attempt_at);
      // Access tokens live 15 minutes of this clock.
      await refreshActor(url, admin);
      [n] = await notificationsOf(rule.id);
    }
    assert.deepEqual([n.delivery.state, n.delivery.last_error, n.delivery.next_attempt_at], ['failed', 'the destination answered 500', null]);
    assert.ok(clock - created <= 3_600_000);
    assert.ok(n.delivery.attempts >= 5);
  });

  it("a destination that hangs holds up neither ingestion nor another rule's delivery", async () => {
    const slow = await ruleFor('stuck', { type: 'webhook', url: hook.url });
    const other = await startWebhookReceiver();
    try {
      const search = await api(url, 'POST', '/v1/saved-searches', { token: admin.token, json: { name: 'also', project_id: project, query: 'q=stuck' } });
      const fast = await api(url, 'POST', '/v1/alert-rules', {
        token: admin.token,
        json: { saved_search_id: search.body.id, name: 'fast', kind: 'any_match', quiet_seconds: 600, destination: { type: 'webhook', url: other.url } },
      });
      assertStatus(fast, 201);
      hook.answers.push('hang');
      const before = hook.requests.length;
      await ingestAll(url, key, [entry('stuck queue')]);
      // The fast rule's receiver gets its request while the other hangs.
      await other.waitFor(1);
      await hook.waitFor(before + 1);
      assert.equal(JSON.parse(other.requests[0]!.body).rule.name, 'fast');
      // Ingestion answers meanwhile.
      await ingestAll(url, key, [entry('still ingesting')]);
      hook.release();
      const [n] = await notificationsOf(slow.id);
      assert.deepEqual([n.delivery.state, n.delivery.attempts, n.delivery.last_error], ['pending', 1, 'the connection was closed before an answer']);
    } finally {
      await other.close();
    }
  });

  it('a Slack-compatible webhook gets a text with the rule, the count and the link', async () => {
    const rule = await ruleFor('slacky', { type: 'slack', url: `${hook.url}/T000/B000/XXXX` });
    assert.deepEqual(rule.destination, { type: 'slack', label: `${new URL(hook.url).origin}/…` });
    const before = hook.requests.length;
    await ingestAll(url, key, [entry('slacky one'), entry('slacky two')]);
    await notificationsOf(rule.id);
    // A retry of an earlier test's webhook may reach the same receiver meanwhile: take the Slack path's request.
    let received: (typeof hook.requests)[number] | undefined;
    for (let n = before + 1; received === undefined; n++) {
      received = (await hook.waitFor(n)).slice(before).find((r) => r.path === '/hook/T000/B000/XXXX');
    }
    assert.equal(received.path, '/hook/T000/B000/XXXX');
    assert.equal(received.headers['x-logkeep-signature'], undefined);
    const { text } = JSON.parse(received.body);
    assert.match(text, /^slacky rule fired: 2 matching entries from /);
    assert.ok(text.includes(`<${PUBLIC_URL}/console/#/explore?project_id=${project}&q=slacky|Open in logkeep>`));
  });

  it('e-mail goes through the SMTP server to every address', async () => {
    const rule = await ruleFor('mailed', { type: 'email', to: ['ops@example.com', 'dev@example.com'] });
    assert.deepEqual(rule.destination, { type: 'email', label: 'ops@example.com, dev@example.com' });
    await ingestAll(url, key, [entry('mailed invoice', { invoice: 'INV-7' })]);
    const [n] = await notificationsOf(rule.id);
    assert.equal(n.delivery.state, 'delivered');
    const message = mail.messages.at(-1)!;
    assert.deepEqual([message.from, message.to], ['alerts@logkeep.test', ['ops@example.com', 'dev@example.com']]);
    assert.match(message.raw, /Subject: \[logkeep\] mailed rule fired: 1 matching entry/);
    assert.ok(message.raw.includes('INV-7'));
  });

  it('destinations are checked when set: shape, recipients, and PATCH replacing one with a new secret', async () => {
    const rule = await ruleFor('checked', { type: 'webhook', url: hook.url });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ type: 'webhook' }, 'destination.url', 'required'],
      [{ type: 'webhook', url: 'ftp://example.com/x' }, 'destination.url', 'invalid'],
      [{ type: 'webhook', url: 'https://user:pw@example.com/x' }, 'destination.url', 'invalid'],
      [{ type: 'email' }, 'destination.to', 'required'],
      [{ type: 'email', to: ['not-an-address'] }, 'destination.to', 'invalid'],
      [{ type: 'pager', url: hook.url }, 'destination.type', 'invalid'],
    ];
    for (const [destination, field, reason] of cases) {
      const res = await api(url, 'PATCH', `/v1/alert-rules/${rule.id}`, { token: admin.token, json: { destination } });
      assertStatus(res, 400, 'invalid_request', JSON.stringify(destination));
      assert.deepEqual(res.body.details, { field, reason }, JSON.stringify(destination));
    }
    const replaced = await api(url, 'PATCH', `/v1/alert-rules/${rule.id}`, { token: admin.token, json: { destination: { type: 'webhook', url: hook.url } } });
    assertStatus(replaced, 200);
    assert.notEqual(replaced.body.destination.secret, rule.destination.secret);
    const removed = await api(url, 'PATCH', `/v1/alert-rules/${rule.id}`, { token: admin.token, json: { destination: null } });
    assert.equal(removed.body.destination, null);
    await ingestAll(url, key, [entry('checked and recorded')]);
    const [n] = await notificationsOf(rule.id);
    assert.deepEqual(n.delivery, { state: 'none', attempts: 0, next_attempt_at: null, last_error: null, delivered_at: null });
  });
});

describeEachBackend('alert destinations on private addresses', (backend) => {
  let svc: RunningService;
  let admin: TestActor;
  let search: number;

  before(async () => {
    svc = await startService(backend);
    admin = await signInAdmin(svc.url);
    const group = await createGroup(svc.url, admin.token, 'guarded');
    const project = await createProject(svc.url, admin.token, group, 'inside');
    const res = await api(svc.url, 'POST', '/v1/saved-searches', { token: admin.token, json: { name: 'any', project_id: project } });
    search = res.body.id;
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('are refused unless the operator allows them: loopback, private, link-local and metadata, by address or by name', async () => {
    const targets = [
      'http://127.0.0.1:9/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/hook',
      'http://[fd00:ec2::254]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://localhost:8080/hook',
    ];
    for (const target of targets) {
      for (const type of ['webhook', 'slack']) {
        const res = await api(svc.url, 'POST', '/v1/alert-rules', {
          token: admin.token,
          json: { saved_search_id: search, name: 'inside', kind: 'any_match', quiet_seconds: 60, destination: { type, url: target } },
        });
        assertStatus(res, 400, 'invalid_request', target);
        assert.deepEqual(res.body.details, { field: 'destination.url', reason: 'invalid' }, target);
        assert.match(res.body.message, /--alert-allow-private-targets/);
      }
    }
    // E-mail needs an SMTP server configured.
    const mail = await api(svc.url, 'POST', '/v1/alert-rules', {
      token: admin.token,
      json: { saved_search_id: search, name: 'mail', kind: 'any_match', quiet_seconds: 60, destination: { type: 'email', to: ['a@example.com'] } },
    });
    assertStatus(mail, 400, 'invalid_request');
    assert.deepEqual(mail.body.details, { field: 'destination.type', reason: 'invalid' });
  });
});
