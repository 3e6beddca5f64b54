import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import type { AuditChange } from '../audits/model.ts';
import type { Principal } from '../auth/principal.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import { newId } from '../ids.ts';
import { redeliver } from './delivery.ts';
import type { CreateWebhookInput, Delivery, DeliveryAttempt, UpdateWebhookInput, Webhook } from './model.ts';
import * as repo from './repository.ts';
import type { DeliveryRecord, WebhookRecord } from './repository.ts';
import { newSigningSecret } from './signing.ts';

export const toWebhookDto = ({ accountId: _a, signingSecret: _s, version: _v, ...w }: WebhookRecord): Webhook => w;

export const toDeliveryDto = (d: DeliveryRecord): Delivery => ({
  deliveryId: d.deliveryId,
  webhookId: d.webhookId,
  eventId: d.eventId,
  eventType: d.eventType,
  state: d.state,
  attempts: d.attempts,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

/** What a webhook's audit lists (decisions §15): never its signing secret. */
const AUDITED = ['name', 'targetUrl', 'events', 'active'] as const;

const webhookAudit = (p: Principal, id: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}) =>
  auditWrite({ accountId: p.accountId, resource: { type: 'webhook', id }, actor: userActor(p), via: 'api', changes, ...opts });

/** A webhook of the caller's account; another account's answers 404 like a missing one (decisions §1). */
async function ownWebhook(p: Principal, id: string): Promise<WebhookRecord> {
  const w = await repo.getWebhook(p.accountId, id, true);
  if (!w) throw new NotFoundError('Webhook');
  return w;
}

/** Create a webhook; its signing secret is returned here and never again. */
export async function createWebhook(p: Principal, input: CreateWebhookInput): Promise<Webhook & { signingSecret: string }> {
  const now = new Date().toISOString();
  const record: WebhookRecord = {
    id: newId('whk'),
    accountId: p.accountId,
    name: input.name,
    targetUrl: input.targetUrl,
    events: input.events,
    active: input.active,
    signingSecret: newSigningSecret(),
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await repo.putWebhook(record, [webhookAudit(p, record.id, diffFields(null, record, AUDITED), { at: now })]);
  return { ...toWebhookDto(record), signingSecret: record.signingSecret };
}

export const getWebhook = async (p: Principal, id: string): Promise<Webhook> => toWebhookDto(await ownWebhook(p, id));

export const listWebhooks = async (p: Principal): Promise<Webhook[]> => (await repo.listWebhooks(p.accountId)).map(toWebhookDto);

/** Only the given fields change; a concurrent change in between is a 409, never a lost update. */
export async function updateWebhook(p: Principal, id: string, input: UpdateWebhookInput): Promise<Webhook> {
  const current = await ownWebhook(p, id);
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as UpdateWebhookInput;
  if (!Object.keys(given).length) return toWebhookDto(current);
  const next: WebhookRecord = { ...current, ...given, updatedAt: new Date().toISOString(), version: current.version + 1 };
  // The same values given again still write (as ever) but record no audit: nothing changed.
  const changes = diffFields(current, next, AUDITED);
  await repo.replaceWebhook(next, current.version, changes.length ? [webhookAudit(p, id, changes, { at: next.updatedAt })] : []);
  return toWebhookDto(next);
}

export async function deleteWebhook(p: Principal, id: string): Promise<void> {
  await repo.deleteWebhook(p.accountId, id, [webhookAudit(p, id, [], { deleted: true })]);
}

/** The webhook's recent delivery attempts, newest first. */
export async function listDeliveryAttempts(p: Principal, id: string, limit: number): Promise<DeliveryAttempt[]> {
  await ownWebhook(p, id);
  return repo.listAttempts(p.accountId, id, limit);
}

/** Send a finished delivery again, same body and webhook-id, under a fresh retry schedule. */
export async function redeliverDelivery(p: Principal, id: string, deliveryId: string, queueUrl: string): Promise<Delivery> {
  const webhook = await ownWebhook(p, id);
  const delivery = await repo.getDelivery(p.accountId, id, deliveryId);
  if (!delivery) throw new NotFoundError('Delivery');
  if (!webhook.active) throw new ConflictError('The webhook is inactive; activate it before redelivering');
  return toDeliveryDto(await redeliver(delivery, queueUrl));
}
