import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The outbox sweeper (sweeper.ts). */
export const sweeperSettings = defineSettings(
  'functions/outbox-publisher/sweeper.ts',
  z.object({
    /** Republish outbox items older than this (the stream normally publishes them within a second). */
    OUTBOX_SWEEP_AGE_SECONDS: z._default(z.coerce.number().check(z.int(), z.gte(0)), 60),
  }),
);
