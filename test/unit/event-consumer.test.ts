import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventConsumer } from '#shared/events/consumer.ts';
import { sqs } from '#shared/events/sqs-client.ts';
import { GroupEventDetailSchema } from '#shared/groups/events.ts';
import { baseLogger } from '#shared/observability.ts';

const record = (messageId: string, body: unknown): SQSRecord =>
  ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:group-distribution',
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;

/** A group event as the bus delivers it to the group-distribution queue. */
const envelope = (eventId: string, event: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  version: '0',
  id: `bus-${eventId}`,
  'detail-type': event,
  source: 'support-desk.groups',
  account: '000000000000',
  time: '2026-01-05T09:00:00Z',
  region: 'us-east-1',
  resources: [],
  detail: { eventId, accountId: 'acc_1', correlationId: `req-${eventId}`, event, timestamp: '2026-01-05T09:00:00.000Z', data },
  ...extra,
});

afterEach(() => vi.restoreAllMocks());

describe('eventConsumer parses each message with its queue schema', () => {
  it('reports a malformed detail as a batch item failure, backs it off, logs it, and handles the well-formed ones of the batch', async () => {
    // Arrange
    const backOffs: string[] = [];
    vi.spyOn(sqs, 'send').mockImplementation(async (command: unknown) => {
      if (command instanceof ChangeMessageVisibilityCommand) backOffs.push(command.input.ReceiptHandle!);
      return {};
    });
    const errors: Record<string, unknown>[] = [];
    vi.spyOn(baseLogger, 'error').mockImplementation((message, ...data) => void errors.push({ message, ...(data[0] as object) }));
    const handled: unknown[] = [];
    const consume = eventConsumer('group-distribution', GroupEventDetailSchema, async (detail) => {
      handled.push(detail.event === 'group.deleted' ? ['deleted', detail.data.groupId] : ['capacity', detail.data.groupIds]);
    });

    // Act
    const res = await consume({
      Records: [
        record('ok-deleted', envelope('evt_1', 'group.deleted', { groupId: 'grp_1' })),
        record('no-group-id', envelope('evt_2', 'group.deleted', {})),
        record('ok-capacity', envelope('evt_3', 'group.capacity.changed', { groupIds: ['grp_2', 'grp_3'], userId: 'usr_1' })),
        record('ids-not-a-list', envelope('evt_4', 'group.capacity.changed', { groupIds: 'grp_2' })),
        record('unknown-event', envelope('evt_5', 'group.renamed', { groupId: 'grp_1' })),
        record('no-detail-type', { ...envelope('evt_6', 'group.deleted', { groupId: 'grp_1' }), 'detail-type': undefined }),
        record('not-json', '{"detail": '),
      ],
    });

    // Assess
    const failed = ['no-group-id', 'ids-not-a-list', 'unknown-event', 'no-detail-type', 'not-json'];
    expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([...failed].sort());
    expect(handled).toEqual(
      expect.arrayContaining([
        ['deleted', 'grp_1'],
        ['capacity', ['grp_2', 'grp_3']],
      ]),
    );
    expect(handled).toHaveLength(2);
    // Retried with backoff like any failure (then the queue's redrive parks it in the DLQ).
    expect(backOffs.sort()).toEqual(failed.map((m) => `rh-${m}`).sort());
    const malformed = errors.find((l) => l.message === 'group-distribution: malformed message' && l.messageId === 'no-group-id');
    expect(malformed).toMatchObject({ eventId: 'evt_2', detailType: 'group.deleted', correlationId: 'req-evt_2' });
    expect(String((malformed!.err as Error).message)).toContain('groupId');
  });

  it('hands the handler the typed detail and the envelope with the fields EventBridge added', async () => {
    // Arrange
    let seen: { detail: unknown; envelope: Record<string, unknown> } | undefined;
    const consume = eventConsumer('group-distribution', GroupEventDetailSchema, async (detail, envelope) => {
      seen = { detail, envelope };
    });

    // Act
    const res = await consume({ Records: [record('m1', envelope('evt_1', 'group.deleted', { groupId: 'grp_1' }, { 'replay-name': 'r1' }))] });

    // Assess
    expect(res.batchItemFailures).toEqual([]);
    expect(seen!.detail).toEqual({ eventId: 'evt_1', accountId: 'acc_1', correlationId: 'req-evt_1', event: 'group.deleted', timestamp: '2026-01-05T09:00:00.000Z', data: { groupId: 'grp_1' } });
    expect(seen!.envelope).toMatchObject({ id: 'bus-evt_1', 'detail-type': 'group.deleted', account: '000000000000', 'replay-name': 'r1' });
  });
});
