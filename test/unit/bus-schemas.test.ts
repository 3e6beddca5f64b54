import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_EVENTS, PUBLISHED_SOURCES, registrySchema } from '#app/event-catalog.ts';
import { openApiDocument } from '#app/openapi/document.ts';
import { RULES } from '#app/bus-rules.ts';
import { currentEventsDoc, EVENTS_DOC, SUBSCRIBER_EXAMPLE } from '../../scripts/event-docs.ts';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('published event schemas: one generator for the registry, the OpenAPI document and docs/events.md', () => {
  it('publishes every ticket, message, organization, SLA and webhook detail-type once, and no internal one', () => {
    const types = PUBLISHED_EVENTS.map((e) => e.detailType);
    expect(new Set(types).size).toBe(types.length);
    expect(types).toEqual(
      expect.arrayContaining([
        'ticket.created',
        'ticket.updated',
        'ticket.assignment.changed',
        'ticket.resolved',
        'ticket.deleted',
        'ticket.merged',
        'ticket.rated',
        'message.created',
        'organization.created',
        'organization.deleted',
        'sla.breached',
        'webhook.disabled',
      ]),
    );
    expect(types).toHaveLength(12);
    expect(PUBLISHED_SOURCES).toEqual(['support-desk.tickets', 'support-desk.messages', 'support-desk.organizations', 'support-desk.sla', 'support-desk.webhooks']);
    // Group and user events are work items of our own consumers (distribution, invitation emails).
    const internal = RULES.flatMap((r) => r.pattern.source).filter((s) => !PUBLISHED_SOURCES.includes(s));
    expect(new Set(internal)).toEqual(new Set(['support-desk.users', 'support-desk.groups']));
  });

  it('registry schemas are draft-04 documents of the whole event, marked with its source and detail-type', () => {
    for (const e of PUBLISHED_EVENTS) {
      const s = registrySchema(e);
      expect(s.$schema).toBe('http://json-schema.org/draft-04/schema#');
      expect(s['x-amazon-events-source']).toBe(e.source);
      expect(s['x-amazon-events-detail-type']).toBe(e.detailType);
      expect(s.properties['detail-type'].enum).toEqual([e.detailType]);
      expect(s.required).toEqual(['version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'resources', 'detail']);
      // Every $ref points into the document's own definitions (the registry resolves nothing outside it).
      for (const ref of JSON.stringify(s).match(/"\$ref":"[^"]+"/g) ?? []) expect(s.definitions).toHaveProperty(ref.slice(ref.lastIndexOf('/') + 1, -1));
      expect(JSON.stringify(s)).not.toMatch(/"const"|"\$defs"/);
    }
  });

  it('the OpenAPI document has the same detail schemas, one component per detail-type', () => {
    const schemas = openApiDocument().components.schemas as Record<string, unknown>;
    for (const e of PUBLISHED_EVENTS) {
      const id = String(registrySchema(e).properties.detail.$ref).split('/').pop()!;
      expect(schemas, e.detailType).toHaveProperty(id);
    }
  });

  it('docs/events.md shows the current schema table and the subscriber example verbatim (npm run docs:events)', () => {
    const doc = read(EVENTS_DOC);
    expect(currentEventsDoc(doc, read(SUBSCRIBER_EXAMPLE)), 'run npm run docs:events').toBe(doc);
  });
});
