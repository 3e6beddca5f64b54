import * as z from 'zod';
import { defineSettings } from '#shared/config/settings.ts';

/** The outbox sweeper (sweeper.ts). */
export const sweeperSettings = defineSettings(
  'functions/outbox-publisher/sweeper.ts',
  z.object({
    /** Republish outbox items older than this (the stream normally publishes them within a second). */
    OUTBOX_SWEEP_AGE_SECONDS: z.coerce.number().int().min(0).default(60),
  }),
);
