import * as z from '#shared/zod.ts';
import { defineSettings, flag } from '#shared/config/settings.ts';

/**
 * The delivery consumer (handler.ts). The relaxations (private targets,
 * insecure TLS, retry scale) default to the safe, deployed behaviour.
 */
export const deliverySettings = defineSettings(
  'functions/webhook-delivery/handler.ts',
  z.object({
    /** A retry is a new message on this same queue. */
    WEBHOOK_DELIVERY_QUEUE_URL: z.string().check(z.minLength(1)),
    /** After the last attempt the delivery is dead-lettered here explicitly. */
    WEBHOOK_DELIVERY_DLQ_URL: z.string().check(z.minLength(1)),
    /** Local stack only: allow targets on loopback/private addresses (the SSRF guard is on otherwise). */
    WEBHOOK_ALLOW_PRIVATE_TARGETS: flag,
    /** Local stack only: accept self-signed TLS certificates of targets. */
    WEBHOOK_ALLOW_INSECURE_TLS: flag,
    /** Multiplies every retry delay (tests use 0.00001 so the schedule runs in about a second). */
    WEBHOOK_RETRY_SCALE: z._default(z.coerce.number().check(z.positive(), z.lte(1)), 1),
  }),
);
