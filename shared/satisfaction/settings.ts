import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/**
 * Where survey links point (decisions §24): the public base URL of the API,
 * `https://<api id>.execute-api.<region>.<suffix>/<stage>` in AWS (infra/api.ts),
 * `http://localhost:<PORT>` locally (local/stack.ts).
 */
export const surveySettings = defineSettings(
  'shared/satisfaction/survey.ts',
  z.object({
    // A reference at synth (the API's id), like the queue URLs: checked for presence only.
    PUBLIC_BASE_URL: z.pipe(
      z.string().check(z.minLength(1)),
      z.transform((u) => u.replace(/\/+$/, '')),
    ),
  }),
);
