import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import * as accounts from '#shared/accounts/service.ts';
import type { Plan } from '#shared/auth/principal.ts';
import { newId } from '#shared/ids.ts';
import { changePlan, provisionAccount, type AccountsPort, type GatewayPort } from '../../scripts/usage-plans.ts';
import { storedKeyLookup } from '../support/store.ts';

type Step = 'planId' | 'createKey' | 'deleteKey' | 'addKeyToPlan' | 'keyInPlan' | 'keysNamed';

/**
 * API Gateway as the CLI sees it, in memory: keys, usage plans, and the rule
 * that a key sits in at most one plan of the stage. `failOnce` makes the next
 * call of a step throw, like a throttled or interrupted SDK call.
 */
class FakeGateway implements GatewayPort {
  keys = new Map<string, { name: string; value: string }>();
  plans = new Map<string, Set<string>>([
    ['plan-free', new Set()],
    ['plan-paid', new Set()],
    ['plan-enterprise', new Set()],
  ]);
  private failing = new Set<Step>();
  failOnce(step: Step) {
    this.failing.add(step);
  }
  private step(s: Step) {
    if (this.failing.delete(s)) throw new Error(`${s} failed (injected)`);
  }
  async planId(plan: Plan) {
    this.step('planId');
    return `plan-${plan}`;
  }
  async createKey(name: string, value: string) {
    this.step('createKey');
    const id = newId('gwk');
    this.keys.set(id, { name, value });
    return id;
  }
  async deleteKey(keyId: string) {
    this.step('deleteKey');
    this.keys.delete(keyId);
    for (const members of this.plans.values()) members.delete(keyId);
  }
  async addKeyToPlan(planId: string, keyId: string) {
    this.step('addKeyToPlan');
    if ([...this.plans].some(([id, members]) => id !== planId && members.has(keyId))) throw new Error('ConflictException: key already in a plan of this stage');
    this.plans.get(planId)!.add(keyId);
  }
  async keyInPlan(planId: string, keyId: string) {
    this.step('keyInPlan');
    return this.plans.get(planId)!.has(keyId);
  }
  async keysNamed(name: string) {
    this.step('keysNamed');
    return [...this.keys].filter(([, k]) => k.name === name).map(([id]) => id);
  }
  planOf(keyId: string) {
    return [...this.plans].filter(([, m]) => m.has(keyId)).map(([id]) => id);
  }
}

/** The tenant works: its stored key exists, carries the stored value, and sits in exactly the stored plan's usage plan. */
async function expectUsable(gw: FakeGateway, accountId: string, plan: Plan) {
  const a = await accounts.getAccount(accountId);
  expect(a?.plan).toBe(plan);
  expect(gw.keys.get(a!.usageKeyId!)?.value).toBe(a!.usageKeyValue);
  expect(gw.planOf(a!.usageKeyId!)).toEqual([`plan-${plan}`]);
}

const input = (plan: Plan = 'free') => ({ accountId: newId('acct'), name: 'Tenant', plan, ownerEmail: `owner-${Math.random().toString(36).slice(2)}@tenant.example` });
const failingCreate: typeof accounts.createAccount = async () => {
  throw new Error('TransactionCanceled (injected)');
};

describe('create-account on a deployed stack: key in its plan before the account exists', () => {
  it("the owner's first API key is throttled by the account's usage key from its first request", async () => {
    const gw = new FakeGateway();
    const created = await provisionAccount(gw, accounts.createAccount, input('paid'));
    const lookup = await storedKeyLookup(created.apiKey);
    expect(lookup?.usageKeyValue).toBe((await accounts.getAccount(created.accountId))!.usageKeyValue);
    expect(lookup?.usageKeyValue).toEqual(expect.any(String));
  });

  it.each(['createKey', 'planId', 'addKeyToPlan'] as Step[])('a failure at %s leaves no account and no key; running again succeeds', async (step) => {
    const gw = new FakeGateway();
    const inp = input('paid');
    gw.failOnce(step);
    await expect(provisionAccount(gw, accounts.createAccount, inp)).rejects.toThrow(/injected/);
    expect(await accounts.getAccount(inp.accountId)).toBeNull();
    expect(gw.keys.size).toBe(0);

    await provisionAccount(gw, accounts.createAccount, inp);
    await expectUsable(gw, inp.accountId, 'paid');
  });

  it('a failed account write deletes the key it made; if that delete fails too the error says what is left over', async () => {
    const gw = new FakeGateway();
    const inp = input();
    await expect(provisionAccount(gw, failingCreate, inp)).rejects.toThrow(/TransactionCanceled/);
    expect(gw.keys.size).toBe(0);
    gw.failOnce('deleteKey');
    await expect(provisionAccount(gw, failingCreate, inp)).rejects.toThrow(/left over, unused/);
    expect(await accounts.getAccount(inp.accountId)).toBeNull();

    const created = await provisionAccount(gw, accounts.createAccount, inp);
    expect(created).toMatchObject({ accountId: inp.accountId, plan: 'free', apiKey: expect.any(String) });
    await expectUsable(gw, inp.accountId, 'free');
  });
});

describe('set-plan on a deployed stack: make before break', () => {
  async function tenant(gw: FakeGateway, plan: Plan = 'free') {
    const inp = input(plan);
    await provisionAccount(gw, accounts.createAccount, inp);
    return inp.accountId;
  }
  const failingUpdate: AccountsPort = { getAccount: accounts.getAccount, updateAccount: async () => Promise.reject(new Error('update failed (injected)')) };

  it.each(['planId', 'createKey', 'addKeyToPlan', 'keyInPlan'] as Step[])('a failure at %s keeps the old plan working; running again moves it', async (step) => {
    const gw = new FakeGateway();
    const id = await tenant(gw);
    gw.failOnce(step);
    await expect(changePlan(gw, accounts, id, 'enterprise')).rejects.toThrow(/injected/);
    await expectUsable(gw, id, 'free');
    expect(gw.keys.size).toBe(1);

    await changePlan(gw, accounts, id, 'enterprise');
    await expectUsable(gw, id, 'enterprise');
    expect(gw.keys.size).toBe(1);
  });

  it('a failed account update deletes the new key and keeps the old plan and key', async () => {
    const gw = new FakeGateway();
    const id = await tenant(gw, 'paid');
    await expect(changePlan(gw, failingUpdate, id, 'free')).rejects.toThrow(/injected/);
    await expectUsable(gw, id, 'paid');
    expect(gw.keys.size).toBe(1);
  });

  it('a failure retiring the old key leaves the account on its new plan; running again removes the old key', async () => {
    const gw = new FakeGateway();
    const id = await tenant(gw);
    gw.failOnce('deleteKey');
    await expect(changePlan(gw, accounts, id, 'paid')).rejects.toThrow(/injected/);
    await expectUsable(gw, id, 'paid');
    expect(gw.keys.size).toBe(2);

    await changePlan(gw, accounts, id, 'paid');
    await expectUsable(gw, id, 'paid');
    expect(gw.keys.size).toBe(1);
  });

  it('moving to the plan it already has changes nothing', async () => {
    const gw = new FakeGateway();
    const id = await tenant(gw, 'enterprise');
    const before = await accounts.getAccount(id);
    await changePlan(gw, accounts, id, 'enterprise');
    expect((await accounts.getAccount(id))?.usageKeyId).toBe(before?.usageKeyId);
    await expectUsable(gw, id, 'enterprise');
  });
});

describe('admin CLI help', () => {
  it.each([['--help'], ['-h'], ['help']])('`npm run --silent admin -- %s` prints the usage on stdout and exits 0', (arg) => {
    const out = spawnSync('npm', ['run', '--silent', 'admin', '--', arg], { cwd: `${import.meta.dirname}/../..`, encoding: 'utf8', timeout: 20_000 });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^usage: npm run --silent admin -- <command>/);
    expect(out.stdout).toContain('set-plan');
  });
});
