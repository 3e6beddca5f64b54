/**
 * Issue 29's figures for the email channel: what one inbound mail costs the
 * store, counted by the proxy the functions reach DynamoDB Local through.
 * Mails go over SMTP to the local server, which stores the raw message and
 * invokes the inbound function's bundle as the receipt rule does, and is
 * answered once the function returned: so each mail's requests are exactly
 * the ones between two resets. Three kinds: a new ticket from a new sender,
 * a reply threaded by In-Reply-To, and a duplicate delivery. The bundle's size
 * and init time are in the bundles section with every other function.
 */
import { createTransport } from 'nodemailer';
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';

const MAILS = 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function runEmailBench(opts: { store: DynamoDbProxy; lambda: LocalLambda; createAccount: () => Promise<{ accountId: string }> }) {
  const { startLocalSmtp } = await import('../local/smtp.ts');
  // The SMTP server's warning says why a mail was refused (451): shown while this section runs.
  const level = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = 'warn';
  const smtp = await startLocalSmtp({ port: 0, lambda: opts.lambda });
  try {
    const transport = createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, pool: false });
    const { accountId } = await opts.createAccount();
    const to = `${accountId.toLowerCase()}@${smtp.domain}`;
    const rows: Record<string, { requests: number[]; byCommand: Record<string, number> }> = {};
    const measure = async (kind: string, send: () => Promise<unknown>) => {
      opts.store.reset();
      await send();
      const s = opts.store.reset();
      rows[kind] ??= { requests: [], byCommand: {} };
      rows[kind].requests.push(s.requests);
      rows[kind].byCommand = s.byCommand;
    };
    // Warm the function (its first invocation is a cold start and reads nothing more).
    await transport.sendMail({ from: 'warm@customer.example', to, subject: 'warm', text: 'warm', messageId: '<warm@bench>' });
    for (let i = 0; i < MAILS; i++) {
      const first = `<first-${i}@bench.example>`;
      await measure('new ticket (new sender)', () => transport.sendMail({ from: `buyer${i}@customer.example`, to, subject: `Order ${i}`, text: 'Where is it?', messageId: first }));
      await measure('reply (In-Reply-To)', () =>
        transport.sendMail({ from: `buyer${i}@customer.example`, to, subject: `Re: Order ${i}`, text: 'Still waiting', inReplyTo: first, messageId: `<reply-${i}@bench.example>` }),
      );
      await measure('duplicate delivery', () => transport.sendMail({ from: `buyer${i}@customer.example`, to, subject: `Order ${i}`, text: 'Where is it?', messageId: first }));
    }
    console.log('\nInbound mail (issue 29): DynamoDB requests per mail, SMTP to the inbound function, median of', MAILS);
    for (const [kind, r] of Object.entries(rows)) {
      const commands = Object.entries(r.byCommand)
        .map(([c, n]) => `${c} ${n}`)
        .join(', ');
      console.log(`  ${kind.padEnd(26)} ${String(median(r.requests)).padStart(3)} requests  (last: ${commands})`);
    }
  } finally {
    process.env.LOG_LEVEL = level;
    await smtp.stop();
  }
}
