import type { Plan } from '#shared/auth/principal.ts';
import { PLANS } from '#shared/auth/principal.ts';
import { randomBase62 } from '#shared/ids.ts';

/**
 * Deployed stacks only: each account has an API Gateway key in its tier's
 * usage plan (the authorizer names it per request as usageIdentifierKey).
 *
 * Every step is ordered so that a failure anywhere leaves the tenant usable
 * and the command safe to run again: the key is made and placed in its plan
 * before the account (or its new plan) points at it, a failed later step
 * deletes what the earlier ones made, and an old key is retired only after
 * the account uses the new one. (A key cannot sit in two usage plans of the
 * same API stage, so a plan change uses a new key: make before break.)
 */

/** The API Gateway operations the admin CLI needs; `awsGateway` implements them with the SDK, tests with a fake. */
export interface GatewayPort {
  planId(plan: Plan): Promise<string>;
  /** Create an enabled key named after its account; answers its id. */
  createKey(name: string, value: string): Promise<string>;
  deleteKey(keyId: string): Promise<void>;
  /** Put a key in a usage plan (already there is fine). */
  addKeyToPlan(planId: string, keyId: string): Promise<void>;
  keyInPlan(planId: string, keyId: string): Promise<boolean>;
  /** Ids of the keys with this name (an account's current key and any left by an interrupted run). */
  keysNamed(name: string): Promise<string[]>;
}

/** The account reads and writes set-plan relies on (the accounts service in the CLI, which audits the change). */
export interface AccountsPort {
  getAccount(accountId: string): Promise<{ accountId: string; plan: Plan; usageKeyId?: string } | null>;
  /** One write: plan and usage key change together. */
  updateAccount(accountId: string, changes: { plan?: Plan; usageKeyId?: string; usageKeyValue?: string }): Promise<void>;
}

export interface NewAccountInput {
  accountId: string;
  name: string;
  plan: Plan;
  ownerEmail: string;
  ownerName?: string;
}

/** Writes the account, its owner and the given usage key in one transaction (the accounts service in the CLI). */
export type CreateAccount<T> = (input: NewAccountInput & { usage: { keyId: string; keyValue: string } }) => Promise<T>;

/** Run a compensation; if it fails too, say what is left over (harmless: nothing points at it). */
async function undo(what: string, step: () => Promise<void>, cause: unknown): Promise<never> {
  try {
    await step();
  } catch (err) {
    throw new Error(`${(cause as Error).message} (and undoing failed: ${what} is left over, unused: ${(err as Error).message})`, { cause: err });
  }
  throw cause;
}

/** Make a key in a plan; if placing it fails, the key is deleted again. */
async function keyInPlan(gateway: GatewayPort, name: string, plan: Plan) {
  const keyValue = randomBase62(40);
  const keyId = await gateway.createKey(name, keyValue);
  try {
    await gateway.addKeyToPlan(await gateway.planId(plan), keyId);
  } catch (err) {
    return undo(`API key ${keyId}`, () => gateway.deleteKey(keyId), err);
  }
  return { keyId, keyValue };
}

/** Delete an account's keys other than its current one (left by a run that stopped after switching). */
async function retireOtherKeys(gateway: GatewayPort, accountId: string, current: string) {
  for (const keyId of await gateway.keysNamed(accountId)) if (keyId !== current) await gateway.deleteKey(keyId);
}

/**
 * create-account: key made and placed in the plan first, then the account
 * written with it in one transaction. A failure before the write deletes the
 * key; no account exists without its key.
 */
export async function provisionAccount<T>(gateway: GatewayPort, createAccount: CreateAccount<T>, input: NewAccountInput): Promise<T> {
  const usage = await keyInPlan(gateway, input.accountId, input.plan);
  try {
    return await createAccount({ ...input, usage });
  } catch (err) {
    return undo(`API key ${usage.keyId}`, () => gateway.deleteKey(usage.keyId), err);
  }
}

/**
 * set-plan: a new key in the new plan first, then the account switched to
 * the new plan and key in one write, then the old key deleted. Until the
 * switch the account keeps its old plan and key; after it, the new ones.
 * Running it again finishes what an interrupted run left.
 */
export async function changePlan(gateway: GatewayPort, accounts: AccountsPort, accountId: string, plan: Plan): Promise<{ accountId: string; plan: Plan }> {
  if (!(PLANS as readonly string[]).includes(plan)) throw new Error(`unknown plan ${plan}`);
  const account = await accounts.getAccount(accountId);
  if (!account) throw new Error(`account ${accountId} not found`);
  if (account.usageKeyId && (await gateway.keyInPlan(await gateway.planId(plan), account.usageKeyId))) {
    // Already switched (maybe by an interrupted run): make the stored plan agree and tidy up.
    if (account.plan !== plan) await accounts.updateAccount(accountId, { plan });
    await retireOtherKeys(gateway, accountId, account.usageKeyId);
    return { accountId, plan };
  }
  const usage = await keyInPlan(gateway, accountId, plan);
  try {
    await accounts.updateAccount(accountId, { plan, usageKeyId: usage.keyId, usageKeyValue: usage.keyValue });
  } catch (err) {
    return undo(`API key ${usage.keyId}`, () => gateway.deleteKey(usage.keyId), err);
  }
  await retireOtherKeys(gateway, accountId, usage.keyId);
  return { accountId, plan };
}

/**
 * The SDK implementation (loaded only by the deployed-stack path of the CLI);
 * plan ids come from the stack's outputs (scripts/stack-outputs.ts), never
 * from a plan's name, which another stack in the account could share.
 */
export async function awsGateway(planIds: (plan: Plan) => Promise<string>): Promise<GatewayPort> {
  const sdk = await import('@aws-sdk/client-api-gateway');
  const client = new sdk.APIGatewayClient({});
  const ignore = (name: string) => (err: Error) => {
    if (err.name !== name) throw err;
  };
  const gateway: GatewayPort = {
    planId: (plan) => planIds(plan),
    async createKey(name, value) {
      return (await client.send(new sdk.CreateApiKeyCommand({ name, enabled: true, value }))).id!;
    },
    async deleteKey(keyId) {
      await client.send(new sdk.DeleteApiKeyCommand({ apiKey: keyId })).catch(ignore('NotFoundException'));
    },
    async addKeyToPlan(usagePlanId, keyId) {
      try {
        await client.send(new sdk.CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: 'API_KEY' }));
      } catch (err) {
        // Conflict is "already in this plan" (a re-run) or "in another plan of the stage": only the first is fine.
        if ((err as Error).name !== 'ConflictException' || !(await gateway.keyInPlan(usagePlanId, keyId))) throw err;
      }
    },
    async keyInPlan(usagePlanId, keyId) {
      try {
        await client.send(new sdk.GetUsagePlanKeyCommand({ usagePlanId, keyId }));
        return true;
      } catch (err) {
        if ((err as Error).name === 'NotFoundException') return false;
        throw err;
      }
    },
    async keysNamed(name) {
      const found: string[] = [];
      let position: string | undefined;
      do {
        const out = await client.send(new sdk.GetApiKeysCommand({ nameQuery: name, position, limit: 500 }));
        for (const k of out.items ?? []) if (k.name === name && k.id) found.push(k.id);
        position = out.position;
      } while (position);
      return found;
    },
  };
  return gateway;
}
