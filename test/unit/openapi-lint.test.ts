import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '#app/openapi/document.ts';

const run = promisify(execFile);

describe('OpenAPI document under lint', () => {
  const doc = openApiDocument() as any;

  it('passes `redocly lint` (recommended rules) with no errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      // The pinned devDependency, offline: no telemetry, no update check.
      const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
      const out = await run(join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'redocly'), ['lint', file, '--format=json'], { env, maxBuffer: 64 * 1024 * 1024 }).catch((err) => err);
      const report = JSON.parse(out.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
      expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('states in the schemas the rules that used to live only in descriptions', () => {
    const s = doc.components.schemas;
    expect(s.CreateUserRequest.properties.role.enum).toEqual(['admin', 'member', 'viewer']);
    expect(s.CreateOrganizationRequest.properties.organizationalDomain).toMatchObject({ format: 'hostname', pattern: expect.any(String) });
    expect(new RegExp(s.CreateOrganizationRequest.properties.organizationalDomain.pattern).test('Acme.co.uk')).toBe(true);
    expect(new RegExp(s.CreateOrganizationRequest.properties.organizationalDomain.pattern).test('https://acme.com')).toBe(false);
    const targetUrl = s.CreateWebhookRequest.properties.webhook.properties.targetUrl;
    expect(targetUrl).toMatchObject({ format: 'uri' });
    expect(new RegExp(targetUrl.pattern).test('https://hooks.example/x')).toBe(true);
    expect(new RegExp(targetUrl.pattern).test('http://hooks.example/x')).toBe(false);
    expect(s.AutomationCondition.properties.field.anyOf[0].enum).toContain('requesterEmail');
    expect(s.AutomationAction.properties.field.anyOf[0].enum).toContain('addTags');
    expect(JSON.stringify(s)).toContain('"enum":["priority","type","status","tags","assignee_id","requester_domain"]');
  });

  it('documents /health, X-Request-Id and the rate-limit headers; webhooks need none of our credentials', () => {
    expect(doc.paths['/health'].get.security).toEqual([]);
    for (const hook of Object.values(doc.webhooks) as any[]) expect(hook.post.security).toEqual([]);
    const create = doc.paths['/helpdesk/api/uploads'].post;
    expect(create.parameters.map((p: { name: string }) => p.name)).toContain('X-Request-Id');
    expect(Object.keys(create.responses[201].headers)).toEqual(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(Object.keys(create.responses[429].headers)).toContain('Retry-After');
    expect(Object.keys(create.responses[401].headers)).toEqual(['X-Request-Id']);
    expect(doc.components.headers['X-RateLimit-Reset'].schema.type).toBe('integer');
  });
});
