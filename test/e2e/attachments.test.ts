import { randomBytes } from 'node:crypto';
import { fileSqsEndpoint } from '../support/file-sqs.ts';
import { HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionByEntry } from '../../local/lambda/deployment.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, expectDeskError, expectValidation, MESSAGES, must, newTicket, type Api, type Json } from '../support/helpdesk.ts';
import { localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';

/**
 * Uploads and attachments (decisions §14) end to end, with real bytes: the
 * API through the local gateway in front of the deployed functions, the
 * client's PUT and GET on the presigned URLs against the S3 emulator
 * (fauxqs), and ticket deletion through the event pipeline.
 */
const { client } = useGateway();
const { account } = usePipeline(['attachment-cleanup']);

const UPLOADS = '/helpdesk/api/uploads';
const ATTACHMENTS = '/helpdesk/api/attachments';

let s3: S3Client;
let bucket: string;
/** The S3 endpoint the functions are given (local/s3-front.ts in front of fauxqs); presigned URLs point there. */
let s3Endpoint: string;
beforeAll(async () => {
  const lambda = await localLambda();
  const env = lambda.environment(functionByEntry(lambda.deployment, 'functions/messages/handler.ts').logicalId);
  bucket = env.UPLOADS_BUCKET;
  s3Endpoint = env.AWS_ENDPOINT_URL_S3;
  s3 = new S3Client({ region: 'us-east-1', endpoint: fileSqsEndpoint(), forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});

interface Desk {
  acct: TestAccount;
  /** Owner's session token (messages take only session tokens). */
  session: Api;
  /** Owner's API key (uploads take either). */
  key: Api;
  ticket: Json;
}

async function desk(acct?: TestAccount): Promise<Desk> {
  acct ??= await account();
  const key = as(client, acct.ownerKey);
  return { acct, key, session: as(client, await acct.session(acct.ownerId)), ticket: await newTicket(key) };
}

async function startUpload(d: Api, name: string, bytes: Buffer, contentType = 'application/octet-stream'): Promise<Json> {
  return must(await d.post(UPLOADS, { name, size: bytes.length, contentType }), 201, 'create upload').data;
}

/** PUT the bytes to the presigned URL with the headers it was signed with. */
async function put(upload: Json, bytes: Buffer): Promise<Response> {
  return fetch(upload.uploadUrl, { method: upload.uploadMethod, headers: upload.uploadHeaders, body: bytes });
}

async function uploaded(d: Api, name: string, bytes: Buffer, contentType?: string): Promise<Json> {
  const upload = await startUpload(d, name, bytes, contentType);
  const res = await put(upload, bytes);
  expect(res.status, await res.text()).toBe(200);
  return upload;
}

const message = (d: Desk, attachments: unknown[], extra: Record<string, unknown> = {}) =>
  d.session.post(MESSAGES, { ticket_id: d.ticket.id, type: 'note', content: 'see attached', attachments, ...extra });

async function messageCount(d: Desk): Promise<number> {
  return must(await d.session.get(`${MESSAGES}?ticket_id=${d.ticket.id}`), 200, 'list messages').meta.total;
}

async function objectsUnder(prefix: string): Promise<string[]> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

const ticketPrefix = (d: Desk) => `attachments/${d.acct.accountId}/${d.ticket.id}/`;

describe('uploads and attachments', () => {
  it('uploads straight to S3, attaches once, and downloads the same bytes as a file', async () => {
    const d = await desk();
    const bytes = randomBytes(300_000);
    const upload = await startUpload(d.key, 'Screenshot <1> é.svg', bytes, 'image/svg+xml');
    expect(upload).toMatchObject({ token: expect.stringMatching(/^upl_/), name: 'Screenshot <1> é.svg', size: bytes.length, contentType: 'image/svg+xml', uploadMethod: 'PUT' });
    expect(new URL(upload.uploadUrl).origin).toBe(new URL(s3Endpoint).origin);
    expect(upload.uploadHeaders).toEqual({ 'Content-Type': 'image/svg+xml', 'Content-Disposition': `attachment; filename="Screenshot <1> _.svg"; filename*=UTF-8''Screenshot%20%3C1%3E%20%C3%A9.svg` });
    expect(Date.parse(upload.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(upload.tokenExpiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect((await put(upload, bytes)).status).toBe(200);

    const created = await message(d, [{ token: upload.token, name: upload.name, size: bytes.length }]);
    expect(created.status, created.text).toBe(201);
    const [att] = created.body.data.attachments;
    expect(att).toEqual({ id: expect.stringMatching(/^att_/), name: upload.name, size: bytes.length, contentType: 'image/svg+xml', url: expect.any(String), urlExpiresAt: expect.any(String) });
    expect(att).not.toHaveProperty('key');

    const download = await fetch(att.url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename=.*filename\*=UTF-8''Screenshot%20%3C1%3E%20%C3%A9\.svg$/);

    // Every read signs a fresh URL; GET /attachments/:id answers the same object (viewer or above, API key too).
    const one = must(await d.session.get(`${MESSAGES}/${created.body.data.id}`), 200, 'get message').data;
    const list = must(await d.session.get(`${MESSAGES}?ticket_id=${d.ticket.id}`), 200, 'list').data;
    const byId = must(await d.key.get(`${ATTACHMENTS}/${att.id}`), 200, 'get attachment').data;
    for (const a of [one.attachments[0], list[0].attachments[0], byId]) expect(a).toMatchObject({ id: att.id, name: upload.name, size: bytes.length, contentType: 'image/svg+xml' });
    expect(Buffer.from(await (await fetch(byId.url)).arrayBuffer()).equals(bytes)).toBe(true);
    // The attachment is a copy under its ticket; nothing a message points at is under the expiring uploads/ prefix.
    expect(await objectsUnder(ticketPrefix(d))).toHaveLength(1);
  });

  it('a plain PUT without the signed headers (`curl -T file "$uploadUrl"`, which the emulator takes) still downloads as a file of the declared type', async () => {
    const d = await desk();
    const bytes = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const upload = await startUpload(d.key, 'logo.svg', bytes, 'image/svg+xml');
    expect((await fetch(upload.uploadUrl, { method: 'PUT', body: bytes })).status).toBe(200);
    const att = must(await message(d, [{ token: upload.token }]), 201, 'message').data.attachments[0];
    const download = await fetch(att.url);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    expect(download.headers.get('content-type')).toBe('image/svg+xml');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="logo.svg"; filename*=UTF-8''logo.svg`);
  });

  it('takes a 25 MiB upload in one PUT locally too (the emulator alone stops at 11 MiB)', async () => {
    const d = await desk();
    const bytes = randomBytes(25 * 1024 * 1024);
    const upload = await uploaded(d.key, 'big.bin', bytes);
    const att = must(await message(d, [{ token: upload.token }]), 201, 'message').data.attachments[0];
    expect(att.size).toBe(bytes.length);
    expect(Buffer.from(await (await fetch(att.url)).arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('a token used twice is refused the second time, and the second message is not written', async () => {
    const d = await desk();
    const upload = await uploaded(d.key, 'log.txt', Buffer.from('hello'), 'text/plain');
    expect((await message(d, [{ token: upload.token }])).status).toBe(201);
    const again = await message(d, [{ token: upload.token }]);
    expectValidation(again, 'attachments.0.token');
    expect(again.body.error.details[0].message).toMatch(/used once/);
    expect(await messageCount(d)).toBe(1);
    expect(await objectsUnder(ticketPrefix(d))).toHaveLength(1);
  });

  it('refuses a token never uploaded, bytes shorter than declared, an unknown or malformed token, and names the entry', async () => {
    const d = await desk();
    const good = await uploaded(d.key, 'a.bin', randomBytes(10));
    const never = await startUpload(d.key, 'b.bin', randomBytes(10));
    const short = await startUpload(d.key, 'c.bin', randomBytes(100));
    // The emulator does not check the signed Content-Length; S3 refuses the PUT. Either way the attach checks the stored size.
    expect((await fetch(short.uploadUrl, { method: 'PUT', headers: short.uploadHeaders, body: randomBytes(60) })).status).toBe(200);

    const notUploaded = await message(d, [{ token: good.token }, { token: never.token }]);
    expectValidation(notUploaded, 'attachments.1.token');
    expect(notUploaded.body.error.details).toHaveLength(1);
    expectValidation(await message(d, [{ token: short.token }]), 'attachments.0.token');
    expectValidation(await message(d, [{ token: 'upl_01J00000000000000000000000' }]), 'attachments.0.token');
    expectValidation(await message(d, [{ token: 'nonsense' }]), 'attachments.0.token');
    expectValidation(await message(d, [{ token: good.token }, { token: good.token }]), 'attachments.1.token');
    expectValidation(await message(d, [{ token: good.token, size: 11 }]), 'attachments.0.size');
    expectValidation(await message(d, [{ token: good.token, name: 'other.bin' }]), 'attachments.0.name');
    // Nothing was written, and no request left a copy behind; the good token still works.
    expect(await messageCount(d)).toBe(0);
    expect(await objectsUnder(ticketPrefix(d))).toEqual([]);
    expect((await message(d, [{ token: good.token }])).status).toBe(201);
  });

  it("another account's token cannot be attached, and another account's attachment is not found", async () => {
    const mine = await desk();
    const theirs = await desk(await createTestAccount());
    const upload = await uploaded(theirs.key, 'secret.pdf', randomBytes(50), 'application/pdf');
    expectValidation(await message(mine, [{ token: upload.token }]), 'attachments.0.token');
    const att = must(await message(theirs, [{ token: upload.token }]), 201, 'their message').data.attachments[0];
    expectDeskError(await mine.key.get(`${ATTACHMENTS}/${att.id}`), 404, 'NOT_FOUND');
    expectDeskError(await mine.key.get(`${ATTACHMENTS}/att_nonsense`), 404, 'NOT_FOUND');
    expect((await theirs.key.get(`${ATTACHMENTS}/${att.id}`)).status).toBe(200);
  });

  it('checks names, sizes and content types; viewers cannot upload but can read', async () => {
    const d = await desk();
    const up = (body: Record<string, unknown>) => d.key.post(UPLOADS, { name: 'f.txt', size: 1, contentType: 'text/plain', ...body });
    expectValidation(await up({ size: 0 }), 'size');
    expectValidation(await up({ size: 25 * 1024 * 1024 + 1 }), 'size');
    expectValidation(await up({ size: 1.5 }), 'size');
    expect((await up({ size: 25 * 1024 * 1024 })).status).toBe(201);
    expectValidation(await up({ name: '' }), 'name');
    expectValidation(await up({ name: 'x'.repeat(256) }), 'name');
    expectValidation(await up({ name: 'a/b.txt' }), 'name');
    expectValidation(await up({ name: 'a\\b.txt' }), 'name');
    expectValidation(await up({ name: 'a\nb.txt' }), 'name');
    // Issue 33: the fuzzer's name (a right-to-left override and a lone surrogate) answered 500; each alone is a 422 too.
    expectValidation(await up({ name: 'report\u202E\ud800fdp.exe' }), 'name');
    expectValidation(await up({ name: 'invoice\u202Efdp.exe' }), 'name');
    expectValidation(await up({ name: 'half \ud83d.txt' }), 'name');
    expectValidation(await up({ name: '\ude00.txt' }), 'name');
    for (const bidi of ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u2066', '\u2067', '\u2068', '\u2069']) expectValidation(await up({ name: `a${bidi}b.txt` }), 'name');
    // Right-to-left scripts and emoji (surrogate pairs) are names.
    expect((await up({ name: 'مستند 🙂.txt' })).status).toBe(201);
    expect((await up({ name: 'ü'.repeat(255) })).status).toBe(201);
    expectValidation(await up({ contentType: 'text' }), 'contentType');
    expectValidation(await up({ contentType: 'text/plain\r\nX-Evil: 1' }), 'contentType');
    expect((await up({ contentType: 'text/plain; charset=utf-8' })).status).toBe(201);
    expectDeskError(await d.key.post(UPLOADS, []), 400, 'BAD_REQUEST');
    expectValidation(
      await message(
        d,
        Array.from({ length: 21 }, () => ({ token: 'upl_x' })),
      ),
      'attachments',
    );

    const viewer = as(client, (await d.acct.addUser('viewer')).key);
    expectDeskError(await viewer.post(UPLOADS, { name: 'f.txt', size: 1, contentType: 'text/plain' }), 403, 'FORBIDDEN');
    const upload = await uploaded(d.key, 'f.txt', Buffer.from('x'), 'text/plain');
    // attachments[].name is a file name too: refused by the same rule before it is compared with the upload's.
    for (const name of ['f\u202Etxt.exe', 'f\ud800.txt']) {
      const refused = await message(d, [{ token: upload.token, name }]);
      expectValidation(refused, 'attachments.0.name');
      expect(refused.body.error.details).toEqual([{ field: 'attachments.0.name', message: expect.stringMatching(/bidirectional controls/) }]);
    }
    const att = must(await message(d, [{ token: upload.token }]), 201, 'message').data.attachments[0];
    expect((await viewer.get(`${ATTACHMENTS}/${att.id}`)).status).toBe(200);
  });

  it('twenty concurrent messages racing for one token: exactly one wins, the others are 422 and leave nothing', async () => {
    const d = await desk();
    const upload = await uploaded(d.key, 'race.bin', randomBytes(1000));
    const answers = await Promise.all(Array.from({ length: 20 }, () => message(d, [{ token: upload.token }])));
    const statuses = answers.map((a) => a.status).sort();
    expect(
      statuses.filter((s) => s === 201),
      JSON.stringify(answers.filter((a) => a.status !== 201 && a.status !== 422).map((a) => a.text)),
    ).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) expectValidation(a, 'attachments.0.token');
    expect(await messageCount(d)).toBe(1);
    expect(await objectsUnder(ticketPrefix(d))).toHaveLength(1);
  });

  it('deleting the ticket deletes its messages, their attachments and the objects, in the background', async () => {
    const d = await desk();
    const upload = await uploaded(d.key, 'gone.txt', Buffer.from('bye'), 'text/plain');
    const msg = must(await message(d, [{ token: upload.token }]), 201, 'message').data;
    const att = msg.attachments[0];
    expect(await objectsUnder(ticketPrefix(d))).toHaveLength(1);
    expect((await d.key.del(`/helpdesk/api/v1/tickets/${d.ticket.id}`)).status).toBe(204);
    await expect.poll(() => objectsUnder(ticketPrefix(d)), { timeout: 15_000, interval: 100 }).toEqual([]);
    expectDeskError(await d.key.get(`${ATTACHMENTS}/${att.id}`), 404, 'NOT_FOUND');
    expectDeskError(await d.session.get(`${MESSAGES}/${msg.id}`), 404, 'NOT_FOUND');
    expect((await fetch(att.url)).status).toBe(404);
    // The uploaded original stays under uploads/ until the bucket's lifecycle rule deletes it (a day).
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `uploads/${d.acct.accountId}/${upload.token.slice(4)}` }))).ContentLength).toBe(3);
  });
});
