/**
 * zod as every schema of the codebase uses it: `zod/mini`, the functional API.
 *
 * A cold start builds every schema its modules declare at top level. With zod's
 * classic API (methods on every schema) that was the largest part of a function's
 * init after the SDK; mini builds the same schemas from the same core, with the
 * same parsing, issues and JSON Schema, at about half the cost, and its functions
 * tree-shake (docs/performance.md, "Stop 56").
 *
 * What classic did that mini does not, kept here so that nothing the API
 * answers changes:
 * - zod's English messages (classic loads them at import; mini leaves every
 *   message "Invalid input"): loaded once, here, before any schema parses;
 * - `meta` and `describe` as classic's methods: a clone registered with the
 *   metadata (mini's `z.meta()` and `z.describe()` are checks, which stay in the
 *   schema and run, as no-ops, at every parse).
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

z.config(en());

export * from 'zod/mini';

/** The schema with `data` (an OpenAPI component `id`, a `description`, ...) in the global registry: a clone, as classic's `.meta()`. */
export function meta<T extends z.ZodMiniType>(schema: T, data: z.core.GlobalMeta): T {
  const clone = schema.clone() as T;
  z.globalRegistry.add(clone, data);
  return clone;
}

/** The schema with a description: a clone, as classic's `.describe()`. */
export function describe<T extends z.ZodMiniType>(schema: T, description: string): T {
  const clone = schema.clone() as T;
  z.globalRegistry.add(clone, { description });
  return clone;
}

/** What the global registry holds for a schema (classic's `.meta()` without arguments). */
export const metaOf = (schema: z.ZodMiniType): z.core.GlobalMeta | undefined => z.globalRegistry.get(schema);

/**
 * An issue raised from a transform (the message, as a custom issue on the value), as classic's `ctx.addIssue` raised
 * it: mini's transform gets the parse payload, which has no such method.
 */
export function addIssue(payload: z.core.ParsePayload, message: string): void {
  payload.issues.push({ code: 'custom', input: payload.value, message });
}
