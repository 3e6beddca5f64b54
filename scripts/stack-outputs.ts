import type { Plan } from '#shared/auth/principal.ts';

/**
 * Deployed stacks only: the admin CLI finds what it works on from the
 * stack's outputs (infra/stack.ts), so a dev and a prod stack in one account
 * never touch each other's table, secret or usage plans. Usage plans are
 * named `<stackName>-<plan>`; their ids are the `UsagePlan-<plan>` outputs.
 */

/** CloudFormation as the CLI needs it; `awsStackOutputs` implements it with the SDK, tests with a fake. */
export interface StackOutputsPort {
  /** The outputs of a stack by key; throws when there is no such stack. */
  outputs(stackName: string): Promise<Record<string, string>>;
}

/** The environment values the stack's outputs supply when they are not set explicitly. */
const FROM_OUTPUTS = {
  TABLE_NAME: 'TableName',
  SESSION_SECRET_ARN: 'SessionSecretArn',
  EVENT_BUS_NAME: 'EventBusName',
  EVENT_BUS_ARN: 'EventBusArn',
  EVENT_ARCHIVE_ARN: 'EventArchiveArn',
  // admin reindex --background
  REINDEX_QUEUE_URL: 'ReindexQueueUrl',
  // revoke-api-key and set-plan flush the stage's authorizer cache (shared/auth/authorizer-cache.ts).
  AUTHORIZER_CACHE_REST_API_ID: 'RestApiId',
  AUTHORIZER_CACHE_STAGE: 'ApiStageName',
  AUTHORIZER_CACHE_TTL_SECONDS: 'AuthorizerCacheTtlSeconds',
} as const;

export interface DeployedTarget {
  /** TABLE_NAME, SESSION_SECRET_ARN, EVENT_BUS_NAME, EVENT_BUS_ARN, EVENT_ARCHIVE_ARN, the AUTHORIZER_CACHE_* of the API: explicit values first, then the stack's outputs. */
  env: Partial<Record<keyof typeof FROM_OUTPUTS, string>>;
  /** The id of a tier's usage plan (from the stack's `UsagePlan-<plan>` output). */
  planId(plan: Plan): Promise<string>;
}

/**
 * Resolve the deployed target from STACK_NAME (one DescribeStacks); values
 * set explicitly win. Without STACK_NAME, TABLE_NAME and SESSION_SECRET_ARN
 * must be set, and commands that touch usage plans fail saying to set it.
 */
export async function resolveDeployedTarget(vars: Record<string, string | undefined>, stacks: StackOutputsPort): Promise<DeployedTarget> {
  const stackName = vars.STACK_NAME?.trim() || undefined;
  const env: DeployedTarget['env'] = {};
  for (const name of Object.keys(FROM_OUTPUTS) as (keyof typeof FROM_OUTPUTS)[]) if (vars[name]) env[name] = vars[name];
  let outputs: Promise<Record<string, string>> | undefined;
  const read = () => {
    if (!stackName) throw new Error("set STACK_NAME (e.g. SupportDesk-prod) to find the stack's usage plans");
    outputs ??= stacks.outputs(stackName);
    return outputs;
  };
  if (stackName) {
    const out = await read();
    for (const [name, key] of Object.entries(FROM_OUTPUTS) as [keyof typeof FROM_OUTPUTS, string][]) env[name] ??= out[key];
  }
  for (const name of ['TABLE_NAME', 'SESSION_SECRET_ARN'] as const) {
    if (env[name]) continue;
    throw new Error(
      stackName
        ? `stack ${stackName} has no output ${FROM_OUTPUTS[name]}; is it deployed from this version?`
        : 'with ADMIN_TARGET=aws, set STACK_NAME (e.g. SupportDesk-prod), or TABLE_NAME and SESSION_SECRET_ARN',
    );
  }
  return {
    env,
    async planId(plan) {
      const id = (await read())[`UsagePlan-${plan}`];
      if (!id) throw new Error(`stack ${stackName} has no output UsagePlan-${plan}; is it deployed from this version?`);
      return id;
    },
  };
}

/** The SDK implementation (loaded only by the deployed-stack path of the CLI). */
export async function awsStackOutputs(): Promise<StackOutputsPort> {
  const sdk = await import('@aws-sdk/client-cloudformation');
  const client = new sdk.CloudFormationClient({});
  return {
    async outputs(stackName) {
      let stack;
      try {
        stack = (await client.send(new sdk.DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
      } catch (err) {
        // CloudFormation answers a missing stack with a ValidationError "Stack with id … does not exist".
        if ((err as Error).name === 'ValidationError') throw new Error(`stack ${stackName} not found in this account and region: ${(err as Error).message}`, { cause: err });
        throw err;
      }
      if (!stack) throw new Error(`stack ${stackName} not found in this account and region`);
      const out: Record<string, string> = {};
      for (const o of stack.Outputs ?? []) if (o.OutputKey && o.OutputValue !== undefined) out[o.OutputKey] = o.OutputValue;
      return out;
    },
  };
}
