import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import type { AuditChange } from '../audits/model.ts';
import type { Principal } from '../auth/principal.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import { createAnswerWrites, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import { redeliver, sendTestDelivery } from './delivery.ts';
import { WEBHOOK_TEST } from './events.ts';
import type { CreateWebhookInput, Delivery, DeliveryAttempt, TestDelivery, UpdateWebhookInput, Webhook } from './model.ts';
import * as repo from './repository.ts';
import type { DeliveryRecord, WebhookRecord } from './repository.ts';
import { newSigningSecret } from './signing.ts';
import type { TargetPolicy } from './target.ts';

/** The webhook resource: never a secret, nor the failing rule's count. */
export const toWebhookDto = (w: WebhookRecord): Webhook => ({
  id: w.id,
  name: w.name,
  targetUrl: w.targetUrl,
  events: w.events,
  active: w.active,
  disabledReason: w.disabledReason ?? null,
  signingSecretRotatedAt: w.signingSecretRotatedAt ?? null,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

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

/** What a webhook's audit lists (decisions §15): never its signing secrets, only when they were rotated. */
const AUDITED = ['name', 'targetUrl', 'events', 'active', 'disabledReason', 'signingSecretRotatedAt'] as const;

const webhookAudit = (p: Principal, id: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}) =>
  auditWrite({ accountId: p.accountId, resource: { type: 'webhook', id }, actor: userActor(p), via: 'api', changes, ...opts });

/** A webhook of the caller's account; another account's answers 404 like a missing one (decisions §1). */
async function ownWebhook(p: Principal, id: string): Promise<WebhookRecord> {
  const w = await repo.getWebhook(p.accountId, id, true);
  if (!w) throw new NotFoundError('Webhook');
  return w;
}

export type CreatedWebhook = Webhook & { signingSecret: string };

/** Create a webhook; its signing secret is returned here and never again. */
export async function createWebhook(p: Principal, input: CreateWebhookInput, opts: CreateAnswer<CreatedWebhook> = {}): Promise<CreatedWebhook> {
  const now = new Date().toISOString();
  const record: WebhookRecord = {
    id: newId('whk'),
    accountId: p.accountId,
    name: input.name,
    targetUrl: input.targetUrl,
    events: input.events,
    active: input.active,
    disabledReason: null,
    signingSecret: newSigningSecret(),
    previousSigningSecret: null,
    signingSecretRotatedAt: null,
    consecutiveFailures: 0,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const created = { ...toWebhookDto(record), signingSecret: record.signingSecret };
  // A commit whose answer is lost must not let the client's retry with its key make a second webhook (each event
  // would then be delivered twice): the key holds the answer from the same transaction (docs/decisions.md
  // "Ambiguous writes").
  await repo.putWebhook(record, [webhookAudit(p, record.id, diffFields(null, record, AUDITED), { at: now }), ...createAnswerWrites(opts, created)]);
  return created;
}

export const getWebhook = async (p: Principal, id: string): Promise<Webhook> => toWebhookDto(await ownWebhook(p, id));

export const listWebhooks = async (p: Principal): Promise<Webhook[]> => (await repo.listWebhooks(p.accountId)).map(toWebhookDto);

/**
 * Only the given fields change; a concurrent change in between is a 409,
 * never a lost update. Switching a webhook on or off by hand clears why the
 * service switched it off and its count of consecutive failures (decisions §18).
 */
export async function updateWebhook(p: Principal, id: string, input: UpdateWebhookInput): Promise<Webhook> {
  const current = await ownWebhook(p, id);
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as UpdateWebhookInput;
  if (!Object.keys(given).length) return toWebhookDto(current);
  const switched = given.active !== undefined && given.active !== current.active ? { disabledReason: null, consecutiveFailures: 0 } : {};
  const next: WebhookRecord = { ...current, ...given, ...switched, updatedAt: new Date().toISOString(), version: current.version + 1 };
  // The same values given again still write (as ever) but record no audit: nothing changed.
  const changes = diffFields(current, next, AUDITED);
  await repo.replaceWebhook(next, current.version, changes.length ? [webhookAudit(p, id, changes, { at: next.updatedAt })] : []);
  return toWebhookDto(next);
}

/**
 * A new signing secret, shown here once (decisions §18). The one it replaces
 * keeps signing deliveries beside it for 24 hours (liveSecrets), so receivers
 * switch without downtime; a second rotation within them drops the oldest.
 * The audit shows when, never a secret; a concurrent change is a 409.
 */
export async function rotateSigningSecret(p: Principal, id: string): Promise<Webhook & { signingSecret: string }> {
  const current = await ownWebhook(p, id);
  const now = new Date().toISOString();
  const next: WebhookRecord = {
    ...current,
    signingSecret: newSigningSecret(),
    previousSigningSecret: current.signingSecret,
    signingSecretRotatedAt: now,
    updatedAt: now,
    version: current.version + 1,
  };
  await repo.replaceWebhook(next, current.version, [webhookAudit(p, id, diffFields(current, next, AUDITED), { at: now })]);
  return { ...toWebhookDto(next), signingSecret: next.signingSecret };
}

/** Send one signed webhook.test to the webhook's target now, under the SSRF policy; logged, never retried. */
export async function testWebhook(p: Principal, id: string, policy: TargetPolicy): Promise<TestDelivery> {
  return sendTestDelivery(await ownWebhook(p, id), policy);
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
  if (delivery.eventType === WEBHOOK_TEST) throw new ConflictError('A test delivery is never sent again; send a new test');
  if (!webhook.active) throw new ConflictError('The webhook is inactive; activate it before redelivering');
  return toDeliveryDto(await redeliver(delivery, queueUrl));
}
