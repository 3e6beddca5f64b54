import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as z from '#shared/zod.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_GROUPS, type ApiGroup } from '#app/registry.ts';
import { openApiDocument } from '#app/openapi/document.ts';
import type { RouteContract } from '#shared/http/contract.ts';
import { CATCH_ALL_PREFIXES } from '../../infra/api.ts';
import { stageConfig, stackNameOf } from '../../infra/config.ts';
import { PROJECT_ROOT } from '../../infra/service-function.ts';
import { SupportDeskStack } from '../../infra/stack.ts';
import { readDeployment } from '../../local/lambda/deployment.ts';
import type { Template as CfnTemplate } from '../../local/lambda/template.ts';
import { deployedTemplate } from '../support/template.ts';

/**
 * API Gateway defined by the OpenAPI document (infra/api-definition.ts): the templates of every stage stay far from
 * CloudFormation's 500 resources, a route adds none, and a changed route is a new deployment of the stage.
 */

const stages = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context.stages as Record<string, object>;
/**
 * CloudFormation refuses a stack over 500 resources; issue 37 set 330 for the main template, room for what a round
 * adds. A feature that adds several functions or queues is a part of its own (infra/parts.ts, a nested stack).
 */
const MAX_RESOURCES = 330;

/** A public route added to the tickets group: what a new endpoint changes in the template. */
const probeRoute: RouteContract = {
  operationId: 'frameApiProbe',
  method: 'GET',
  path: '/helpdesk/api/v1/frame-api-probe/{token}',
  group: 'tickets',
  summary: 'A route only this test adds',
  params: z.object({ token: z.string() }),
  success: { status: 200, description: 'OK' },
  public: { rateLimit: 3, burstLimit: 7 },
};
const withProbe: ApiGroup[] = API_GROUPS.map((g) => (g.name === 'tickets' ? { ...g, routes: [...g.routes, probeRoute] } : g));

/** A stage's main template, and everything it deploys (its nested stacks folded in: test/support/template.ts). */
const synth = (stage: string, apiGroups?: readonly ApiGroup[]) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new SupportDeskStack(app, stackNameOf(stage), { config: stageConfig({ ...stages[stage], stage }), apiGroups });
  return { main: Template.fromStack(stack).toJSON() as CfnTemplate, deployed: deployedTemplate(stack) };
};
const ofType = (t: CfnTemplate, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);
const bodyOf = (t: CfnTemplate) => ofType(t, 'AWS::ApiGateway::RestApi')[0][1].Properties!.Body as { paths: Record<string, Record<string, any>>; [k: string]: any };

const templates: Record<string, CfnTemplate> = {};
let [prod, probe]: CfnTemplate[] = [];
beforeAll(() => {
  for (const stage of Object.keys(stages)) {
    const { main, deployed } = synth(stage);
    templates[stage] = main;
    if (stage === 'prod') prod = deployed;
  }
  probe = synth('prod', withProbe).deployed;
}, 180_000);

describe('API Gateway from the OpenAPI document', () => {
  it(`keeps every stage's main template under ${MAX_RESOURCES} resources, with no API Gateway Method or Resource`, () => {
    expect(Object.keys(templates).sort()).toEqual(Object.keys(stages).sort());
    for (const [stage, t] of Object.entries(templates)) {
      const count = Object.keys(t.Resources).length;
      expect(count, `${stage}: ${count} resources`).toBeLessThanOrEqual(MAX_RESOURCES);
      expect(ofType(t, 'AWS::ApiGateway::Method').length + ofType(t, 'AWS::ApiGateway::Resource').length, stage).toBe(0);
      expect(ofType(t, 'AWS::ApiGateway::Authorizer').length + ofType(t, 'AWS::ApiGateway::GatewayResponse').length, stage).toBe(0);
      // The views part (app/topology.ts StackPart) is a nested stack: none of its functions is in the main template.
      const views = ofType(t, 'AWS::Lambda::Function').filter(([id]) => /^(Groupviews|Consumerview|Scheduleviewtimepass)/.test(id));
      expect(
        views.map(([id]) => id),
        stage,
      ).toEqual([]);
      expect(
        ofType(t, 'AWS::CloudFormation::Stack')
          .map(([id]) => id)
          .filter((id) => id.startsWith('Views')).length,
        stage,
      ).toBe(1);
    }
  });

  it('adds no template resource for a route, and deploys the stage anew when the definition changes', () => {
    const deployment = (t: CfnTemplate) => ofType(t, 'AWS::ApiGateway::Deployment').map(([id]) => id);
    // The same resources, but for the deployment, whose logical id is a hash of the RestApi and its Body.
    expect(Object.keys(probe.Resources).length).toBe(Object.keys(prod.Resources).length);
    expect(Object.keys(probe.Resources).filter((id) => !(id in prod.Resources))).toEqual(deployment(probe));
    expect(deployment(probe)).toHaveLength(1);
    expect(deployment(probe)).not.toEqual(deployment(prod));
    const [, stage] = ofType(probe, 'AWS::ApiGateway::Stage')[0];
    expect(stage.Properties!.DeploymentId).toEqual({ Ref: deployment(probe)[0] });
    // A public route: no authorizer, no API key, its own throttle in the stage's method settings.
    const op = bodyOf(probe).paths[probeRoute.path].get;
    expect(op).toMatchObject({ operationId: probeRoute.operationId, security: [] });
    expect(stage.Properties!.MethodSettings).toContainEqual(
      expect.objectContaining({ HttpMethod: 'GET', ResourcePath: '/~1helpdesk~1api~1v1~1frame-api-probe~1{token}', ThrottlingRateLimit: 3, ThrottlingBurstLimit: 7 }),
    );
    // The local gateway routes by the same definition: the tickets function, without the authorizer.
    const route = readDeployment('SupportDesk-prod', probe).api.routes.find((r) => r.path === probeRoute.path)!;
    expect(route).toMatchObject({ method: 'GET', authorized: false });
    expect(probe.Resources[route.functionId].Metadata!['SupportDesk::Entry']).toBe('functions/tickets/handler.ts');
  });

  it("is the served document's paths, operations, parameters and statuses, plus the catch-alls", () => {
    const doc = openApiDocument();
    const body = bodyOf(templates.prod);
    expect(body.openapi).toBe('3.0.1');
    const catchAlls = CATCH_ALL_PREFIXES.map((p) => `${p}/{proxy+}`);
    expect(Object.keys(body.paths).sort()).toEqual([...Object.keys(doc.paths), ...catchAlls].sort());
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        const gw = body.paths[path][method];
        expect(gw, `${method} ${path}`).toMatchObject({ operationId: op.operationId, summary: op.summary, tags: op.tags });
        expect((gw.parameters ?? []).map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(op.parameters?.map((p: { name: string; in: string }) => `${p.in}:${p.name}`) ?? []);
        expect(Object.keys(gw.responses)).toEqual(Object.keys(op.responses));
        expect(gw['x-amazon-apigateway-integration'].type).toBe(path === '/health' ? 'mock' : 'aws_proxy');
      }
    }
    for (const path of catchAlls) expect(body.paths[path]['x-amazon-apigateway-any-method']).toMatchObject({ security: [] });
    // API Gateway's import wants every variable of a path declared as a path parameter, and no other.
    for (const [path, item] of Object.entries(body.paths)) {
      const variables = [...path.matchAll(/\{(\w+)\+?\}/g)].map((m) => m[1]).sort();
      for (const op of Object.values(item)) {
        const declared = ((op.parameters ?? []) as { in: string; name: string }[]).filter((p) => p.in === 'path').map((p) => p.name);
        expect(declared.sort(), path).toEqual(variables);
      }
    }
  });

  it('names each function by a stage variable, and gives it one invoke permission on the live stage', () => {
    const t = prod;
    const [[, stage]] = ofType(t, 'AWS::ApiGateway::Stage');
    const variables = stage.Properties!.Variables as Record<string, { Ref: string }>;
    const uris = JSON.stringify(bodyOf(t)).match(/\$\{stageVariables\.\w+\}/g)!;
    const named = new Set(uris.map((u) => u.slice('${stageVariables.'.length, -1)));
    expect([...named].sort()).toEqual(Object.keys(variables).sort());
    const functions = Object.values(variables).map((v) => v.Ref);
    for (const id of functions) expect(t.Resources[id].Type).toBe('AWS::Lambda::Function');
    const permissions = ofType(t, 'AWS::Lambda::Permission').filter(([, p]) => p.Properties!.Principal === 'apigateway.amazonaws.com');
    expect(permissions.map(([, p]) => p.Properties!.FunctionName['Fn::GetAtt'][0]).sort()).toEqual([...functions].sort());
    for (const [, p] of permissions) expect(JSON.stringify(p.Properties!.SourceArn)).toMatch(/\/live\/\*\/\*"|\/authorizers\/\*"/);
  });
});
