import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { BUNDLE_FILE, BUNDLING } from '../../infra/bundling.ts';
import { stageConfig, stackNameOf } from '../../infra/config.ts';
import { PROJECT_ROOT } from '../../infra/service-function.ts';
import { SupportDeskStack } from '../../infra/stack.ts';
import { buildBundles, bundlesAt } from '../../local/lambda/build.ts';
import { readDeployment, type Deployment } from '../../local/lambda/deployment.ts';
import { LocalFunction } from '../../local/lambda/runtime.ts';
import type { Template } from '../../local/lambda/template.ts';

/**
 * What `cdk deploy` ships is what runs locally and in every test: the local
 * builder's bundles are the bytes NodejsFunction produces, and every function
 * of every stage initialises from its bundle with exactly the environment its
 * template gives it (references become placeholder strings, as AWS fills them
 * with names and ARNs).
 */

const stages = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context.stages as Record<string, object>;

function synthStage(stage: string): Deployment {
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true } });
  const name = stackNameOf(stage);
  new SupportDeskStack(app, name, { config: stageConfig({ ...stages[stage], stage }) });
  return readDeployment(name, app.synth().getStackByName(name).template as Template);
}

const started: LocalFunction[] = [];
afterAll(async () => Promise.all(started.map((f) => f.stop())));

describe('deployed artifacts', () => {
  it("the local builder's bundle is byte for byte NodejsFunction's, for the same entry", async () => {
    const entries = ['functions/not-found/handler.ts', 'functions/authorizer/handler.ts'];
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:enable-asset-metadata': true } });
    const stack = new Stack(app, 'BundleParity');
    for (const [i, entry] of entries.entries()) {
      new NodejsFunction(stack, `F${i}`, {
        entry: join(PROJECT_ROOT, entry),
        runtime: Runtime.NODEJS_24_X,
        projectRoot: PROJECT_ROOT,
        depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
        bundling: BUNDLING,
      });
    }
    const assembly = app.synth();
    const template = assembly.getStackByName('BundleParity').template as Template;
    // The bundles this test run uses (global setup), built by the local builder in one esbuild run for every entry.
    const local = bundlesAt(inject('deployment').bundleDir);
    for (const [i, entry] of entries.entries()) {
      const id = Object.keys(template.Resources).find((k) => k.startsWith(`F${i}`) && template.Resources[k].Type === 'AWS::Lambda::Function')!;
      const assetDir = join(assembly.directory, template.Resources[id].Metadata!['aws:asset:path']);
      expect(readdirSync(assetDir)).toContain(BUNDLE_FILE);
      expect(readFileSync(join(assetDir, BUNDLE_FILE)).equals(readFileSync(local.file(entry))), entry).toBe(true);
    }
  }, 120_000);

  for (const stage of Object.keys(stages)) {
    it(`every function of ${stage} initialises from its bundle with its template's environment`, async () => {
      const d = synthStage(stage);
      const bundles = await buildBundles([...d.functions.values()].map((f) => f.entry));
      const failures: string[] = [];
      for (const def of d.functions.values()) {
        // As AWS runs it: its template's variables (references as opaque strings), plus what Lambda sets.
        const env: Record<string, string> = {
          ...Object.fromEntries(Object.entries(def.environment).map(([k, v]) => [k, typeof v === 'string' ? v : `placeholder-${k.toLowerCase()}`])),
          AWS_REGION: 'eu-west-1',
          AWS_LAMBDA_FUNCTION_NAME: def.name,
          AWS_ACCESS_KEY_ID: 'x',
          AWS_SECRET_ACCESS_KEY: 'x',
        };
        const fn = new LocalFunction(def, bundles.file(def.entry), env);
        started.push(fn);
        await fn.warm().catch((err: Error) => failures.push(`${def.name}: ${err.message}`));
        await fn.stop();
      }
      expect(failures).toEqual([]);
      expect(d.functions.size).toBeGreaterThanOrEqual(25);
    }, 120_000);
  }
});
