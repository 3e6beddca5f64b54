import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_BUDGET_KB, BUNDLE_BUDGET_KB_BY_ENTRY, BUNDLE_CEILING_KB_BY_ENTRY, BUNDLE_FILE, CHUNK_DIR, initFiles } from '../../infra/bundling.ts';
import { functionCode, PROJECT_ROOT } from '../../infra/service-function.ts';
import { buildBundles, bundlesAt } from '../../local/lambda/build.ts';
import { readDeployment, type Deployment, type FunctionDef } from '../../local/lambda/deployment.ts';
import { LocalFunction } from '../../local/lambda/runtime.ts';
import { synthesizeStage, type Template } from '../../local/lambda/template.ts';
import { schemasAtInit } from '../support/schemas-at-init.ts';
import { runDeployment } from '../support/deployment.ts';

/**
 * What `cdk deploy` ships is what runs locally and in every test: the local
 * builder's bundles are the bytes of the assets `cdk synth` stages, and every function
 * of every stage initialises from its bundle with exactly the environment its
 * template gives it (references become placeholder strings, as AWS fills them
 * with names and ARNs).
 */

const stages = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context.stages as Record<string, object>;

/** Every function a stage deploys, its nested stacks' (the email channel's inbound function) included; one synth per stage for the file (prod's serves two tests). */
const synthesized = new Map<string, Promise<Deployment>>();
function synthStage(stage: string): Promise<Deployment> {
  if (!synthesized.has(stage))
    synthesized.set(
      stage,
      synthesizeStage({ ...stages[stage], stage }).then(({ stackName, template }) => readDeployment(stackName, template)),
    );
  return synthesized.get(stage)!;
}

/** A function's environment as AWS runs it: its template's variables (references as opaque strings), plus what Lambda sets. */
const lambdaEnv = (def: FunctionDef): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(def.environment).map(([k, v]) => [k, typeof v === 'string' ? v : `placeholder-${k.toLowerCase()}`])),
  AWS_REGION: 'eu-west-1',
  AWS_LAMBDA_FUNCTION_NAME: def.name,
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'x',
});

/**
 * The zod schemas each function of prod builds at a cold start (test/support/schemas-at-init.ts), recorded when the
 * functions stopped building other domains' API schemas (a model's limits, resource and event payloads apart from
 * its request schemas) and moved to zod/mini (shared/zod.ts): no function may build more. Building schemas is most
 * of what zod costs a cold start (docs/performance.md, "Stop 56"); a change that lowers a count lowers it here.
 */
const SCHEMAS_AT_INIT: Record<string, number> = {
  AuthorizerFunction: 117,
  'Consumer-attachment-cleanup': 125,
  'Consumer-automation-time-rules': 171,
  'Consumer-automations': 191,
  'Consumer-bulk-jobs': 174,
  'Consumer-email-sender': 331,
  'Consumer-enrichment': 137,
  'Consumer-group-distribution': 169,
  'Consumer-reindex': 167,
  'Consumer-sla': 336,
  'Consumer-sla-recompute': 187,
  'Consumer-view-counts': 194,
  'Consumer-view-recount': 183,
  'Consumer-webhook-delivery': 123,
  'Consumer-webhook-fanout': 141,
  EmailInbound: 227,
  'Group-automations': 372,
  'Group-contacts': 192,
  'Group-groups': 393,
  'Group-history': 459,
  'Group-jobs': 519,
  'Group-messages': 480,
  'Group-organizations': 247,
  'Group-satisfaction': 259,
  'Group-slaPolicies': 469,
  'Group-ticketFields': 276,
  'Group-tickets': 307,
  'Group-users': 282,
  'Group-views': 620,
  'Group-webhooks': 329,
  NotFound: 0,
  OutboxPublisher: 75,
  OutboxSweeper: 81,
  'Schedule-automation-time-rules': 170,
  'Schedule-retention-sweep': 137,
  'Schedule-sla-breach-check': 178,
  'Schedule-view-time-pass': 178,
};

const started: LocalFunction[] = [];
afterAll(async () => Promise.all(started.map((f) => f.stop())));

describe('deployed artifacts', () => {
  it("the local builder's bundle is byte for byte the function's asset, for the same entry", async () => {
    // messages: a bundle with chunks that load on first use (sanitize-html, S3, re2js).
    const entries = ['functions/not-found/handler.ts', 'functions/authorizer/handler.ts', 'functions/messages/handler.ts'];
    // CDK bundles each function as it is constructed, here afresh: not from the bundles kept by the local builder
    // (infra/bundle-cache.ts), so that the two builders are compared, not one folder with itself.
    process.env.SUPPORT_DESK_BUNDLE_CACHE = 'off';
    let assembly;
    try {
      const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:enable-asset-metadata': true } });
      const stack = new Stack(app, 'BundleParity');
      for (const [i, entry] of entries.entries()) {
        new LambdaFunction(stack, `F${i}`, { code: functionCode(entry), handler: 'index.handler', runtime: Runtime.NODEJS_24_X });
      }
      assembly = app.synth();
    } finally {
      delete process.env.SUPPORT_DESK_BUNDLE_CACHE;
    }
    const template = assembly.getStackByName('BundleParity').template as Template;
    // The bundles this test run uses (global setup), built by the local builder.
    const local = bundlesAt(runDeployment().bundleDir);
    // Every file, source maps included (they name their sources by path in the project, wherever they are written).
    const code = (dir: string) =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .flatMap((d) => (d.isFile() ? [relative(dir, join(d.parentPath, d.name))] : []))
        .sort();
    for (const [i, entry] of entries.entries()) {
      const id = Object.keys(template.Resources).find((k) => k.startsWith(`F${i}`) && template.Resources[k].Type === 'AWS::Lambda::Function')!;
      const assetDir = join(assembly.directory, template.Resources[id].Metadata!['aws:asset:path']);
      const localDir = join(local.file(entry), '..');
      expect(code(assetDir), entry).toEqual(code(localDir));
      expect(code(assetDir)).toContain(BUNDLE_FILE);
      for (const f of code(assetDir)) expect(readFileSync(join(assetDir, f)).equals(readFileSync(join(localDir, f))), `${entry}: ${f}`).toBe(true);
    }
    // Code that only some calls need is a chunk of its own, out of what messages loads at a cold start.
    const messages = local.file(entries[2]);
    const chunks = readdirSync(join(messages, '..', CHUNK_DIR)).filter((f) => f.endsWith('.mjs'));
    const atInit = [...initFiles(messages).keys()].map((f) => relative(join(messages, '..'), f));
    expect(chunks.filter((c) => !atInit.includes(`${CHUNK_DIR}/${c}`)).length).toBeGreaterThan(0);
    // Its map names our sources only, by their paths in the project (infra/source-map-trim.ts).
    const map = JSON.parse(readFileSync(`${messages}.map`, 'utf8')) as { sources: string[] };
    expect(map.sources).toContain('shared/messages/service.ts');
    expect(map.sources.filter((s) => s.includes('node_modules') || s.startsWith('..'))).toEqual([]);
  }, 180_000);

  // The goal where it is met, else the ceiling recorded for the function (no growth while the goal is missed).
  it('what each function of prod loads at a cold start is within its size budget (≤ 300 KB; messages and email inbound ≤ 400 KB) or its recorded ceiling', async () => {
    const d = await synthStage('prod');
    const bundles = await buildBundles([...d.functions.values()].map((f) => f.entry));
    const over = [...d.functions.values()].flatMap((def) => {
      const kb = [...initFiles(bundles.file(def.entry)).values()].reduce((a, b) => a + b, 0) / 1024;
      const budget = BUNDLE_CEILING_KB_BY_ENTRY[def.entry] ?? BUNDLE_BUDGET_KB_BY_ENTRY[def.entry] ?? BUNDLE_BUDGET_KB;
      return kb > budget ? [`${def.name} (${def.entry}): ${kb.toFixed(1)} KB > ${budget} KB`] : [];
    });
    expect(over).toEqual([]);
  }, 180_000);

  it('what each function of prod builds at a cold start: no consumer, schedule or authorizer builds a request schema of the API, and no function more schemas than recorded', async () => {
    const d = await synthStage('prod');
    const bundles = await buildBundles([...d.functions.values()].map((f) => f.entry));
    const defs = [...d.functions.values()];
    const built = new Map<string, Awaited<ReturnType<typeof schemasAtInit>>>();
    // Two processes at a time (2 cores).
    for (let i = 0; i < defs.length; i += 2) await Promise.all(defs.slice(i, i + 2).map(async (def) => built.set(def.name, await schemasAtInit(bundles.file(def.entry), lambdaEnv(def)))));
    // A request schema (`...Request`) is for a route's body: only an API group's function validates one.
    const requestsOutsideTheApi = defs
      .filter((def) => !def.name.startsWith('Group-'))
      .flatMap((def) =>
        built
          .get(def.name)!
          .ids.filter((id) => id.endsWith('Request'))
          .map((id) => `${def.name}: ${id}`),
      );
    expect(requestsOutsideTheApi).toEqual([]);
    const over = defs.flatMap((def) => {
      const { schemas } = built.get(def.name)!;
      const recorded = SCHEMAS_AT_INIT[def.name];
      return recorded === undefined || schemas > recorded ? [`${def.name}: ${schemas} schemas (recorded: ${recorded ?? 'none'})`] : [];
    });
    expect(over).toEqual([]);
    // The tickets function builds its own request schemas, not the groups', fields' or contacts' it calls into.
    expect(built.get('Group-tickets')!.ids.filter((id) => id.endsWith('Request'))).toEqual(['CreateTicketRequest', 'UpdateTicketRequest']);
  }, 180_000);

  for (const stage of Object.keys(stages)) {
    it(`every function of ${stage} initialises from its bundle with its template's environment`, async () => {
      const d = await synthStage(stage);
      const bundles = await buildBundles([...d.functions.values()].map((f) => f.entry));
      const failures: string[] = [];
      for (const def of d.functions.values()) {
        const fn = new LocalFunction(def, bundles.file(def.entry), lambdaEnv(def));
        started.push(fn);
        await fn.warm().catch((err: Error) => failures.push(`${def.name}: ${err.message}`));
        await fn.stop();
      }
      expect(failures).toEqual([]);
      expect(d.functions.size).toBeGreaterThanOrEqual(25);
    }, 120_000);
  }
});
