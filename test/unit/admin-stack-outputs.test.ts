import { describe, expect, it } from 'vitest';
import { resolveDeployedTarget, type StackOutputsPort } from '../../scripts/stack-outputs.ts';

/** CloudFormation as the CLI sees it: stacks by name with their outputs; counts DescribeStacks calls. */
class FakeStacks implements StackOutputsPort {
  calls: string[] = [];
  constructor(private stacks: Record<string, Record<string, string>>) {}
  async outputs(stackName: string) {
    this.calls.push(stackName);
    const out = this.stacks[stackName];
    if (!out) throw new Error(`stack ${stackName} not found in this account and region`);
    return out;
  }
}

const outputsOf = (stage: string) => ({
  ApiUrl: `https://${stage}.example/prod/`,
  TableName: `SupportDesk-${stage}-Table`,
  SessionSecretArn: `arn:aws:secretsmanager:eu-west-1:1:secret:${stage}`,
  EventBusName: `SupportDesk-${stage}-events`,
  'UsagePlan-free': `${stage}-free-id`,
  'UsagePlan-paid': `${stage}-paid-id`,
  'UsagePlan-enterprise': `${stage}-ent-id`,
});
// Two stages in one account: the CLI must only ever see the one it was pointed at.
const stacks = () => new FakeStacks({ 'SupportDesk-dev': outputsOf('dev'), 'SupportDesk-prod': outputsOf('prod') });

describe('admin CLI: the deployed target from stack outputs', () => {
  it('takes the table, secret, bus and plan ids of STACK_NAME from one DescribeStacks', async () => {
    const fake = stacks();
    const target = await resolveDeployedTarget({ STACK_NAME: 'SupportDesk-prod' }, fake);
    expect(target.env).toEqual({ TABLE_NAME: 'SupportDesk-prod-Table', SESSION_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:prod', EVENT_BUS_NAME: 'SupportDesk-prod-events' });
    expect(await target.planId('paid')).toBe('prod-paid-id');
    expect(await target.planId('enterprise')).toBe('prod-ent-id');
    expect(fake.calls).toEqual(['SupportDesk-prod']);
  });

  it('explicit values win over the outputs; plan ids still come from the stack', async () => {
    const target = await resolveDeployedTarget({ STACK_NAME: 'SupportDesk-dev', TABLE_NAME: 'my-table' }, stacks());
    expect(target.env.TABLE_NAME).toBe('my-table');
    expect(target.env.SESSION_SECRET_ARN).toBe('arn:aws:secretsmanager:eu-west-1:1:secret:dev');
    expect(await target.planId('free')).toBe('dev-free-id');
  });

  it('without STACK_NAME: explicit table and secret work, plan ids ask for STACK_NAME', async () => {
    const fake = stacks();
    const target = await resolveDeployedTarget({ TABLE_NAME: 't', SESSION_SECRET_ARN: 's' }, fake);
    expect(target.env).toEqual({ TABLE_NAME: 't', SESSION_SECRET_ARN: 's' });
    await expect(target.planId('free')).rejects.toThrow(/set STACK_NAME/);
    expect(fake.calls).toEqual([]);
    await expect(resolveDeployedTarget({ TABLE_NAME: 't' }, fake)).rejects.toThrow(/set STACK_NAME .* or TABLE_NAME and SESSION_SECRET_ARN/);
  });

  it('a missing stack or output is a clear error', async () => {
    await expect(resolveDeployedTarget({ STACK_NAME: 'SupportDesk-staging' }, stacks())).rejects.toThrow(/SupportDesk-staging not found/);
    const partial = new FakeStacks({ Old: { TableName: 't', SessionSecretArn: 's' } });
    const target = await resolveDeployedTarget({ STACK_NAME: 'Old' }, partial);
    await expect(target.planId('paid')).rejects.toThrow('stack Old has no output UsagePlan-paid');
    await expect(resolveDeployedTarget({ STACK_NAME: 'Old2' }, new FakeStacks({ Old2: { TableName: 't' } }))).rejects.toThrow('stack Old2 has no output SessionSecretArn');
  });
});
