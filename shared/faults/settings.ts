import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** The services whose SDK calls can be made to fail (decisions §19). */
export const FAULT_SERVICES = ['dynamodb', 'events', 'sqs', 's3'] as const;
/** What a failed call does: the service's throttling error, a 500/503, a hang past the client's time-out, or (PutEvents) some entries refused. */
export const FAULT_KINDS = ['throttle', 'error', 'timeout', 'partial'] as const;

export type FaultService = (typeof FAULT_SERVICES)[number];
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One entry of FAULTS: this fraction of the service's calls fail this way. */
export interface Fault {
  service: FaultService;
  kind: FaultKind;
  rate: number;
}

/** What an invalid FAULTS setting is refused with: the entry and what is wrong with it. */
export class InvalidFaultsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidFaultsError';
  }
}

const FORMAT = 'service:kind:rate, e.g. dynamodb:throttle:0.05';

/**
 * Parse a FAULTS setting (`service:kind:rate,...`; empty or unset: none).
 * Throws InvalidFaultsError naming the first entry it cannot take, so a typo
 * fails at start rather than running a stack without the faults asked for.
 */
export function parseFaults(spec: string | undefined): Fault[] {
  const faults: Fault[] = [];
  for (const raw of (spec ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const refuse = (why: string) => new InvalidFaultsError(`Invalid FAULTS entry "${entry}": ${why} (expected ${FORMAT})`);
    const parts = entry.split(':');
    if (parts.length !== 3) throw refuse('not three parts');
    const [service, kind, rateText] = parts.map((p) => p.trim());
    if (!(FAULT_SERVICES as readonly string[]).includes(service)) throw refuse(`unknown service "${service}" (one of ${FAULT_SERVICES.join(', ')})`);
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) throw refuse(`unknown kind "${kind}" (one of ${FAULT_KINDS.join(', ')})`);
    if (kind === 'partial' && service !== 'events') throw refuse('partial applies to events only (PutEvents)');
    const rate = Number(rateText);
    if (!/^\d*\.?\d+$/.test(rateText) || !(rate >= 0 && rate <= 1)) throw refuse(`rate "${rateText}" is not a number from 0 to 1`);
    if (faults.some((f) => f.service === service && f.kind === kind)) throw refuse(`${service}:${kind} is given twice`);
    faults.push({ service: service as FaultService, kind: kind as FaultKind, rate });
  }
  // The kinds of one call are exclusive (one draw per call), so a service's rates cannot add up past every call.
  for (const service of FAULT_SERVICES) {
    const perCall = faults.filter((f) => f.service === service && f.kind !== 'partial').reduce((sum, f) => sum + f.rate, 0);
    if (perCall > 1 + 1e-9) throw new InvalidFaultsError(`Invalid FAULTS: the rates of ${service} add up to ${perCall}, more than every call`);
  }
  return faults;
}

/** The setting as `npm start` prints it: `none`, or the entries in effect. */
export const describeFaults = (faults: readonly Fault[]): string => (faults.length ? faults.map((f) => `${f.service}:${f.kind}:${f.rate}`).join(',') : 'none');

/** Injected faults (shared/faults/inject.ts), read when a client is created. Only the local stack sets FAULTS; no deployed template carries it. */
export const faultSettings = defineSettings(
  'shared/faults/inject.ts',
  z.object({
    /** `service:kind:rate,...` (decisions §19). */
    FAULTS: z.pipe(
      z.optional(z.string()),
      z.transform((spec, ctx) => {
        try {
          return parseFaults(spec);
        } catch (err) {
          z.addIssue(ctx, (err as Error).message);
          return z.NEVER;
        }
      }),
    ),
    /** Set by Lambda itself: faults hit the functions only, never the local stack's own tools, the admin CLI or test fixtures that share these clients. */
    AWS_LAMBDA_FUNCTION_NAME: z.optional(z.string().check(z.minLength(1))),
  }),
);
