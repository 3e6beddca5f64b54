import { APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteUsagePlanKeyCommand, GetUsagePlansCommand } from '@aws-sdk/client-api-gateway';
import type { Plan } from '../shared/auth/principal.ts';
import * as accounts from '../shared/accounts/repository.ts';
import { randomBase62 } from '../shared/ids.ts';

/** Deployed stacks only: each account has an API Gateway key in its tier's usage plan (the authorizer names it per request). */
const client = new APIGatewayClient({});

async function planId(plan: Plan): Promise<string> {
  const name = `support-desk-${plan}`;
  let position: string | undefined;
  do {
    const out = await client.send(new GetUsagePlansCommand({ position, limit: 500 }));
    const found = out.items?.find((p) => p.name === name);
    if (found?.id) return found.id;
    position = out.position;
  } while (position);
  throw new Error(`usage plan ${name} not found; is the stack deployed in this region?`);
}

export async function attachAccountKey(accountId: string, plan: Plan): Promise<void> {
  const value = randomBase62(40);
  const key = await client.send(new CreateApiKeyCommand({ name: accountId, enabled: true, value }));
  await client.send(new CreateUsagePlanKeyCommand({ usagePlanId: await planId(plan), keyId: key.id!, keyType: 'API_KEY' }));
  await accounts.updateAccount(accountId, { usageKeyId: key.id!, usageKeyValue: value });
}

export async function moveAccountKey(accountId: string, plan: Plan): Promise<void> {
  const account = await accounts.getAccount(accountId);
  if (!account?.usageKeyId) return attachAccountKey(accountId, plan);
  for (const other of ['free', 'paid', 'enterprise'] as Plan[]) {
    if (other === plan) continue;
    await client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: await planId(other), keyId: account.usageKeyId })).catch((err: Error) => {
      if (err.name !== 'NotFoundException') throw err;
    });
  }
  await client.send(new CreateUsagePlanKeyCommand({ usagePlanId: await planId(plan), keyId: account.usageKeyId, keyType: 'API_KEY' })).catch((err: Error) => {
    if (err.name !== 'ConflictException') throw err;
  });
}
