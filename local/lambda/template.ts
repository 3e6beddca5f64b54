/**
 * The local stack's one source of truth: the CloudFormation template that the
 * CDK app synthesizes for a `local` stage. Functions (entry, environment,
 * timeout, concurrency), queues (attributes, redrive), event-source mappings,
 * bus rules, schedules and API routes are all read from it, so what runs
 * locally is what `cdk deploy` would create; nothing here keeps a second list.
 */

/** The local stage: the same app, with the account and region of the emulators. */
export const LOCAL_STAGE = {
  stage: 'local',
  account: '000000000000',
  region: 'us-east-1',
  emailFrom: 'support@local.support-desk.example',
  alarms: { email: 'oncall@local.support-desk.example' },
  enrichment: { provider: 'none' as const },
  authorizerCacheTtlSeconds: 300,
  logRetentionDays: 7 as const,
};

export type Intrinsic = string | number | boolean | null | { [k: string]: unknown } | unknown[];

export interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
  Metadata?: Record<string, any>;
}

export interface Template {
  Resources: Record<string, CfnResource>;
}

export interface SynthesizedStack {
  stackName: string;
  template: Template;
}

/**
 * Synthesize the local stage in this process. Bundling is skipped (the local
 * builder bundles with the same options, local/lambda/build.ts) and so is the
 * CloudFormation validation plugin (4 s of WebAssembly; `cdk synth` in CI runs
 * it on the real stages).
 */
export async function synthesizeLocalStack(overrides: Partial<typeof LOCAL_STAGE> = {}): Promise<SynthesizedStack> {
  const [{ App }, { stageConfig, stackNameOf }, { SupportDeskStack }, { mkdtempSync, rmSync }, { tmpdir }, { join }] = await Promise.all([
    import('aws-cdk-lib'),
    import('../../infra/config.ts'),
    import('../../infra/stack.ts'),
    import('node:fs'),
    import('node:os'),
    import('node:path'),
  ]);
  const outdir = mkdtempSync(join(tmpdir(), 'support-desk-synth-'));
  try {
    const app = new App({ outdir, builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true } });
    const config = stageConfig({ ...LOCAL_STAGE, ...overrides });
    const stackName = stackNameOf(config.stage);
    new SupportDeskStack(app, stackName, { config, description: 'Support Desk (local)' });
    const template = app.synth().getStackByName(stackName).template as Template;
    return { stackName, template };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The construct id a resource was created with (the path segment before `/Resource`), e.g. a queue's name. */
export function constructId(resource: CfnResource): string | undefined {
  const path = resource.Metadata?.['aws:cdk:path'] as string | undefined;
  if (!path) return undefined;
  const parts = path.split('/');
  return parts[parts.length - 1] === 'Resource' ? parts[parts.length - 2] : parts[parts.length - 1];
}

export const resourcesOf = (t: Template, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);

/** What a `Ref` / `Fn::GetAtt` of a resource resolves to in the running local stack. */
export interface LocalValues {
  ref(logicalId: string): string | undefined;
  getAtt(logicalId: string, attribute: string): string | undefined;
  region: string;
  account: string;
}

/**
 * Resolve a template value with the intrinsics the app uses (Ref, Fn::GetAtt,
 * Fn::Join, Fn::Select, Fn::Split, Fn::Sub and the pseudo parameters) against
 * the local resources. An unknown reference throws: a function must never
 * start with a setting the local stack could not fill.
 */
export function resolveValue(v: unknown, values: LocalValues): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`Cannot resolve ${JSON.stringify(v)}`);
  const [[fn, arg]] = Object.entries(v);
  const pseudo: Record<string, string> = {
    'AWS::Region': values.region,
    'AWS::AccountId': values.account,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::NoValue': '',
  };
  switch (fn) {
    case 'Ref': {
      const id = arg as string;
      const out = pseudo[id] ?? values.ref(id);
      if (out === undefined) throw new Error(`No local value for Ref ${id}`);
      return out;
    }
    case 'Fn::GetAtt': {
      const [id, attr] = Array.isArray(arg) ? (arg as string[]) : String(arg).split('.');
      const out = values.getAtt(id, attr);
      if (out === undefined) throw new Error(`No local value for Fn::GetAtt ${id}.${attr}`);
      return out;
    }
    case 'Fn::Join': {
      const [sep, parts] = arg as [string, unknown[]];
      return parts.map((p) => resolveValue(p, values)).join(sep);
    }
    case 'Fn::Select': {
      const [i, list] = arg as [number, unknown];
      const items = Array.isArray(list) ? list.map((x) => resolveValue(x, values)) : resolveValue(list, values).split(',');
      return items[Number(i)];
    }
    case 'Fn::Split': {
      throw new Error('Fn::Split outside Fn::Select is not supported locally');
    }
    case 'Fn::Sub': {
      const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [arg as string, {}];
      return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
        if (name in vars) return resolveValue(vars[name], values);
        if (name in pseudo) return pseudo[name];
        const [id, attr] = name.split('.');
        return resolveValue(attr ? { 'Fn::GetAtt': [id, attr] } : { Ref: id }, values);
      });
    }
    default:
      throw new Error(`Unsupported intrinsic ${fn}`);
  }
}
