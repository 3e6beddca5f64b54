import * as z from '#shared/zod.ts';
import { defineSettings, flag } from '#shared/config/settings.ts';

/**
 * The webhooks API (handler.ts): redelivery puts a message on the delivery
 * queue; a test delivery POSTs to the target under the same relaxations as
 * the delivery consumer, which default to the safe, deployed behaviour.
 */
export const webhooksSettings = defineSettings(
  'functions/webhooks/handler.ts',
  z.object({
    WEBHOOK_DELIVERY_QUEUE_URL: z.string().check(z.minLength(1)),
    /** Local stack only: allow targets on loopback/private addresses (the SSRF guard is on otherwise). */
    WEBHOOK_ALLOW_PRIVATE_TARGETS: flag,
    /** Local stack only: accept self-signed TLS certificates of targets. */
    WEBHOOK_ALLOW_INSECURE_TLS: flag,
  }),
);
