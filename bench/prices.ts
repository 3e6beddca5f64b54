/**
 * Public AWS prices, US East (N. Virginia), on-demand, past every free tier
 * and in the first volume tier, as the bill in `npm run bench` applies them
 * (bench/bill.ts). Each is dated by when it was read from its page: prices
 * change, so a figure computed from these says which date it holds for.
 * Not counted: CloudWatch Logs and X-Ray (what the functions log and trace),
 * DynamoDB storage and streams (reading a stream from Lambda is free), data
 * transfer, the Parameters and Secrets extension's few Secrets Manager calls
 * (cached), the KMS keys.
 */
export interface Price {
  /** US dollars per `per` units. */
  usd: number;
  per: number;
  unit: string;
  /** When the page was read (YYYY-MM-DD). */
  read: string;
  source: string;
}

export const PRICES = {
  /** Lambda on Arm (our functions are arm64), first 7.5 billion GB-seconds a month. */
  lambdaGbSecondArm: { usd: 0.0000133334, per: 1, unit: 'GB-second', read: '2025-07-01', source: 'https://aws.amazon.com/lambda/pricing/' },
  lambdaRequests: { usd: 0.2, per: 1_000_000, unit: 'invocations', read: '2025-07-01', source: 'https://aws.amazon.com/lambda/pricing/' },
  /** REST APIs, first 333 million requests a month. */
  apiGatewayRest: { usd: 3.5, per: 1_000_000, unit: 'REST API requests', read: '2025-07-01', source: 'https://aws.amazon.com/api-gateway/pricing/' },
  /** On-demand throughput since the cut of 1 November 2024 (Standard table class). */
  dynamodbWriteUnits: { usd: 0.625, per: 1_000_000, unit: 'write request units', read: '2025-07-01', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  dynamodbReadUnits: { usd: 0.125, per: 1_000_000, unit: 'read request units', read: '2025-07-01', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  /** Custom events put on a bus (each 64 KB chunk is one event); delivery to targets is not charged. */
  eventBridgeEvents: { usd: 1.0, per: 1_000_000, unit: 'custom events', read: '2025-07-01', source: 'https://aws.amazon.com/eventbridge/pricing/' },
  /** Standard queues (our fair queues are standard queues), first 100 billion requests a month; each 64 KB chunk is a request. */
  sqsRequests: { usd: 0.4, per: 1_000_000, unit: 'requests', read: '2025-07-01', source: 'https://aws.amazon.com/sqs/pricing/' },
  s3PutCopyPostList: { usd: 0.005, per: 1_000, unit: 'PUT, COPY, POST, LIST requests', read: '2025-07-01', source: 'https://aws.amazon.com/s3/pricing/' },
  s3GetAndOther: { usd: 0.0004, per: 1_000, unit: 'GET and other requests', read: '2025-07-01', source: 'https://aws.amazon.com/s3/pricing/' },
} satisfies Record<string, Price>;

/** For scale: what a help desk charges per agent and month (billed annually). */
export const ZENDESK_PER_AGENT_MONTH = {
  suiteTeam: { usd: 55, read: '2025-07-01', source: 'https://www.zendesk.com/pricing/' },
  suiteProfessional: { usd: 115, read: '2025-07-01', source: 'https://www.zendesk.com/pricing/' },
} as const;

/** Dollars for `units` of a price. */
export const cost = (price: Price, units: number) => (units / price.per) * price.usd;
