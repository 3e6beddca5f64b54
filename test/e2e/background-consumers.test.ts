import { mkdtempSync } from 'node:fs';
import { fileSqsEndpoint } from '../support/file-sqs.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pipeline } from '../../local/pipeline.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { eventually } from '../support/wait.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { localLambda } from '../support/lambda.ts';
import { readOutbox } from '../support/mail.ts';

// The local stack writes the email sender's messages here instead of sending them through SES (localOverlay).
const outbox = mkdtempSync(join(tmpdir(), 'sd-emails-'));
process.env.EMAIL_OUTBOX_DIR = outbox;
const { client } = useGateway();
let pipeline: Pipeline;
const mine = new Set<string>();
const account = async (): Promise<TestAccount> => {
  const a = await createTestAccount();
  mine.add(a.accountId);
  return a;
};

beforeAll(async () => {
  const { startPipeline } = await import('../../local/pipeline.ts');
  pipeline = await startPipeline({
    lambda: await localLambda(),
    dynamodbEndpoint: inject('dynamodbEndpoint'),
    sqsEndpoint: fileSqsEndpoint(),
    tableName: LOCAL_TABLE,
    queues: ['email-sender', 'enrichment'],
    pollIntervalMs: 50,
    accounts: mine,
  });
});
afterAll(async () => pipeline?.stop());

const allEmails = () => readOutbox(outbox);
const emailsFor = async (ticketId: string) => (await allEmails()).filter((e) => e.subject.includes(ticketId));

describe('background consumers through the pipeline (outbox -> bus -> SQS)', () => {
  it('enriches a new organization in the background, filling only empty fields', async () => {
    const acct = await account();
    const created = await client.request('POST', '/helpdesk/api/organizations', { token: acct.ownerKey, body: { name: 'Our name for them', organizationalDomain: 'Spotify.com' } });
    expect(created.status).toBe(201);
    expect(created.body.data.country).toBeNull();
    const enriched = await eventually(
      async () => {
        const res = await client.request('GET', `/helpdesk/api/organizations/${created.body.data.id}`, { token: acct.ownerKey });
        return res.body.data.country ? res.body.data : null;
      },
      15_000,
      'background enrichment',
    );
    expect(enriched).toMatchObject({ name: 'Our name for them', country: 'Sweden', industry: 'Music Streaming', employeeCount: '9200' });
  });

  it('emails a response to the requester and ccs, but never a note or a response with send_email false', async () => {
    const acct = await account();
    const session = await acct.session(acct.ownerId);
    const ticket = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Where is my order', requesterEmail: 'buyer@shop.example' } } });
    const ticketId = ticket.body.ticket.id;
    const post = (body: Record<string, unknown>) => client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticketId, ...body } });
    expect((await post({ type: 'note', content: '<p>internal</p>' })).status).toBe(201);
    expect((await post({ type: 'response', content: '<p>quiet</p>', send_email: false })).status).toBe(201);
    expect((await post({ type: 'response', content: '<p>On its way &amp; soon</p>', ccs: [{ email: 'boss@shop.example', name: 'Boss' }] })).status).toBe(201);
    const emails = await eventually(async () => ((await emailsFor(ticketId)).length ? emailsFor(ticketId) : null), 15_000, 'the response email');
    const email = emails![0];
    expect(email).toMatchObject({ to: ['buyer@shop.example'], cc: [{ email: 'boss@shop.example', name: 'Boss' }], subject: `Re: Where is my order [${ticketId}]`, text: 'On its way & soon' });
    // Once the pipeline has handled the other two messages' events, they have been (not) sent.
    await pipeline.drained();
    expect(await emailsFor(ticketId)).toHaveLength(1);
  });

  it('emails an invitation when a user is created with send_invitation (the default), and not with false', async () => {
    const acct = await account();
    const invited = await client.request('POST', '/playbook/api/v1/users', { token: acct.ownerKey, body: { email: 'new.hire@corp.example', name: 'New Hire', role: 'viewer' } });
    const quiet = await client.request('POST', '/playbook/api/v1/users', { token: acct.ownerKey, body: { email: 'quiet.hire@corp.example', name: 'Quiet', send_invitation: false } });
    expect([invited.status, quiet.status]).toEqual([201, 201]);
    const mail = await eventually(async () => (await allEmails()).find((e) => e.to[0] === 'new.hire@corp.example'), 15_000, 'the invitation');
    expect(mail).toMatchObject({ subject: 'You are invited to the support desk', cc: [] });
    expect(mail!.text).toContain('as viewer');
    expect(mail!.header('auto-submitted')).toBe('auto-generated');
    await pipeline.drained();
    expect((await allEmails()).some((e) => e.to[0] === 'quiet.hire@corp.example')).toBe(false);
  });
});
