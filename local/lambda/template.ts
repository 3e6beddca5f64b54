import type { NestedStack as CdkNestedStack, Stack as CdkStack } from 'aws-cdk-lib';
import { cachedSynthesis } from './template-cache.ts';

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
  /** decisions §17: mail to `<account id>@inbound.localhost` reaches the local SMTP server (local/smtp.ts). */
  inboundDomain: 'inbound.localhost',
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
  Parameters?: Record<string, unknown>;
  Outputs?: Record<string, { Value: unknown }>;
}

export interface SynthesizedStack {
  stackName: string;
  template: Template;
}

/**
 * Synthesize the local stage in this process. Bundling is skipped (the local
 * builder bundles with the same options, local/lambda/build.ts) and so is the
 * CloudFormation validation plugin (4 s of WebAssembly; `cdk synth` in CI runs
 * it on the real stages). A template made before from the same sources is
 * taken from the cache instead (local/lambda/template-cache.ts).
 */
export function synthesizeLocalStack(overrides: Partial<typeof LOCAL_STAGE> = {}): Promise<SynthesizedStack> {
  const stage = { ...LOCAL_STAGE, ...overrides };
  const description = 'Support Desk (local)';
  return cachedSynthesis([stage, description], () => synthesizeStage(stage, description));
}

/**
 * Synthesize a stage (the settings cdk.json gives it) into one template, its
 * nested stacks folded in, as the local stack runs it and as the bundle tests
 * read every function a stage deploys (the email channel's included).
 */
export async function synthesizeStage(stage: Record<string, unknown>, description?: string): Promise<SynthesizedStack> {
  const [{ App, NestedStack }, { stageConfig, stackNameOf }, { SupportDeskStack }, { mkdtempSync, readFileSync, rmSync }, { tmpdir }, { join }] = await Promise.all([
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
    const config = stageConfig(stage as Parameters<typeof stageConfig>[0]);
    const stackName = stackNameOf(config.stage);
    const stack = new SupportDeskStack(app, stackName, { config, ...(description ? { description } : {}) });
    const assembly = app.synth();
    // The nested stacks' templates (the email channel's, the alarms', the parts') are files of the assembly.
    const template = foldNestedStacks(stack, assembly.getStackByName(stackName).template as Template, NestedStack, (nested) =>
      JSON.parse(readFileSync(join(assembly.directory, nested.templateFile), 'utf8')),
    );
    return { stackName, template };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * A stack's template with its nested stacks (and theirs) folded in by flattenNestedStacks: `own` is the stack's
 * template, `templateOf` reads a nested stack's (a file of the assembly, or Template.fromStack in the infra tests).
 * `NestedStack` is aws-cdk-lib's class, passed in: the local stack loads the CDK only when it synthesizes.
 */
export function foldNestedStacks(stack: CdkStack, own: Template, NestedStack: typeof CdkNestedStack, templateOf: (nested: CdkNestedStack) => Template): Template {
  const nestedOf = (parent: CdkStack): Map<string, Template> =>
    new Map(
      parent.node
        .findAll()
        .filter((c): c is CdkNestedStack => NestedStack.isNestedStack(c) && c.nestedStackParent === parent)
        .map((nested) => [parent.getLogicalId(nested.nestedStackResource!), flattenNestedStacks(templateOf(nested), nestedOf(nested))]),
    );
  return flattenNestedStacks(own, nestedOf(stack));
}

/**
 * One template out of a stack's and its nested stacks' (the email channel's, the alarms'), as the local stack runs
 * one deployment: each nested stack's resources join the parent's under their own logical ids, a Ref to one of its
 * parameters becomes the value the parent passes it, and the parent's `Fn::GetAtt [<nested stack>, Outputs.X]`
 * becomes that output's value. The nested stack resources themselves go.
 */
export function flattenNestedStacks(template: Template, nested: ReadonlyMap<string, Template>): Template {
  if (!nested.size) return template;
  const resources: Record<string, CfnResource> = {};
  const outputs = new Map<string, unknown>();
  for (const [stackId, child] of nested) {
    const given = (template.Resources[stackId]?.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const inParent = (v: unknown): unknown => mapIntrinsics(v, (ref) => (Object.hasOwn(given, ref) ? given[ref] : undefined));
    for (const [id, r] of Object.entries(child.Resources)) {
      if (id in template.Resources || id in resources) throw new Error(`Logical id ${id} of nested stack ${stackId} is also used in its parent`);
      resources[id] = inParent(r) as CfnResource;
    }
    for (const [name, o] of Object.entries(child.Outputs ?? {})) outputs.set(`${stackId}.Outputs.${name}`, inParent(o.Value));
  }
  const resolveOutputs = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolveOutputs);
    if (!v || typeof v !== 'object') return v;
    const att = (v as Record<string, unknown>)['Fn::GetAtt'];
    if (Array.isArray(att) && nested.has(String(att[0]))) {
      const key = `${att[0]}.${att[1]}`;
      if (!outputs.has(key)) throw new Error(`No output ${att[1]} in nested stack ${att[0]}`);
      return outputs.get(key);
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveOutputs(x)]));
  };
  const own = Object.fromEntries(Object.entries(template.Resources).filter(([id]) => !nested.has(id)));
  return { ...template, Resources: resolveOutputs({ ...own, ...resources }) as Record<string, CfnResource>, Outputs: resolveOutputs(template.Outputs) as Template['Outputs'] };
}

/** A copy of `v` with each `{Ref: name}` that `replace` answers for replaced by its answer. */
function mapIntrinsics(v: unknown, replace: (ref: string) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => mapIntrinsics(x, replace));
  if (!v || typeof v !== 'object') return v;
  const entries = Object.entries(v);
  if (entries.length === 1 && entries[0][0] === 'Ref' && typeof entries[0][1] === 'string') {
    const replaced = replace(entries[0][1]);
    if (replaced !== undefined) return replaced;
  }
  return Object.fromEntries(entries.map(([k, x]) => [k, mapIntrinsics(x, replace)]));
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
