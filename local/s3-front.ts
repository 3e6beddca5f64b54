import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The S3 endpoint of the local stack: fauxqs's S3, as is, except where it is
 * stricter than S3. fauxqs refuses any request body over 11 MiB (its server's
 * limit), where S3 takes a single PUT of up to 5 GB and the contract promises
 * 25 MiB uploads; so a larger object PUT (a client's upload to its presigned
 * URL) is stored here as a multipart upload of 8 MiB parts, which fauxqs
 * takes. Everything else (the functions' SDK calls, downloads) passes through
 * unchanged, so presigned URLs point here.
 */
export interface LocalS3 {
  endpoint: string;
  stop(): Promise<void>;
}

/** Bodies above this go to fauxqs in parts. */
const SINGLE_PUT_MAX = 10 * 1024 * 1024;
const PART_BYTES = 8 * 1024 * 1024;

export async function startLocalS3(upstream: string): Promise<LocalS3> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const length = Number(req.headers['content-length'] ?? 0);
    const url = new URL(req.url ?? '/', 'http://local');
    const objectPut = req.method === 'PUT' && url.pathname.split('/').filter(Boolean).length >= 2 && !url.searchParams.has('uploadId') && !req.headers['x-amz-copy-source'];
    const work = objectPut && length > SINGLE_PUT_MAX ? putInParts(target, url.pathname, req, res, length) : pass(target, req, res);
    work.catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/xml' });
      res.end(`<Error><Code>InternalError</Code><Message>${err.message.replace(/[<&]/g, '')}</Message></Error>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // The functions' SDK keeps sockets alive; they must not hold the stop.
        server.closeAllConnections();
      }),
  };
}

/** The request as it came, to fauxqs, and its answer back. */
function pass(target: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res).on('finish', resolve).on('error', reject);
    });
    up.on('error', reject);
    req.pipe(up);
  });
}

/** One request to fauxqs, whole answer read. */
function call(target: URL, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const up = httpRequest({ host: target.hostname, port: target.port, method, path, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, text: Buffer.concat(chunks).toString('utf8') }));
      answer.on('error', reject);
    });
    up.on('error', reject);
    up.end(body);
  });
}

/** A large PUT as CreateMultipartUpload, UploadPart per 8 MiB, CompleteMultipartUpload: the same object, headers kept. */
async function putInParts(target: URL, path: string, req: IncomingMessage, res: ServerResponse, length: number): Promise<void> {
  const kept = Object.fromEntries(
    Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && /^(content-type|content-disposition|cache-control|content-language|x-amz-meta-.*|x-amz-tagging)$/.test(k)),
  ) as Record<string, string>;
  const created = await call(target, 'POST', `${path}?uploads`, kept);
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created.text)?.[1];
  if (created.status !== 200 || !uploadId) {
    res.writeHead(created.status, { 'content-type': 'application/xml' });
    res.end(created.text);
    return;
  }
  const q = (extra: string) => `${path}?uploadId=${encodeURIComponent(uploadId)}${extra}`;
  const etags: string[] = [];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let received = 0;
  const flush = async () => {
    const part = await call(target, 'PUT', q(`&partNumber=${etags.length + 1}`), {}, Buffer.concat(pending, pendingBytes));
    if (part.status !== 200) throw new Error(`part ${etags.length + 1}: ${part.status}`);
    etags.push(String(part.headers.etag));
    pending = [];
    pendingBytes = 0;
  };
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      received += chunk.length;
      if (pendingBytes >= PART_BYTES) await flush();
    }
    if (received !== length) throw new Error(`received ${received} of ${length} bytes`);
    if (pendingBytes) await flush();
    const xml = `<CompleteMultipartUpload>${etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${e}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    const done = await call(target, 'POST', q(''), { 'content-type': 'application/xml' }, Buffer.from(xml));
    if (done.status !== 200) throw new Error(`complete: ${done.status} ${done.text.slice(0, 200)}`);
    res.writeHead(200, { etag: /<ETag>([^<]+)<\/ETag>/.exec(done.text)?.[1] ?? '' });
    res.end();
  } catch (err) {
    await call(target, 'DELETE', q(''), {}).catch(() => undefined);
    throw err;
  }
}
