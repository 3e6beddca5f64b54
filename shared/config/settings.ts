import * as z from '../zod.ts';

/**
 * One way to read configuration. A module that reads environment variables
 * declares exactly those, with a zod schema, in a `settings.ts` beside it, and
 * reads them through the reader `defineSettings` returns. A function is then
 * asked for the settings of the modules its bundle holds and nothing else (one
 * schema for every function once made 13 of 25 deployed functions fail to
 * start), and the CDK app checks each function's environment against the same
 * declarations at synth (infra/settings.ts). Declarations import only zod and
 * this file, so the CDK app can load them without the code they configure.
 */

/** A variable that is on when set to `1` or `true` (unset: off). */
export const flag = z.pipe(
  z.optional(z.enum(['0', '1', 'true', 'false'])),
  z.transform((v) => v === '1' || v === 'true'),
);

/** Thrown when a module's settings are missing or invalid; the message names the function, the variables and the module. */
export class InvalidSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSettingsError';
  }
}

export interface Settings<T> {
  /** The validated values, read from `process.env` at the first call and kept, as a cold start would; throws InvalidSettingsError. */
  (): T;
  /** The module that reads these settings, relative to the project root: named in errors, and the CDK app requires them of every bundle that includes it. */
  readonly module: string;
  readonly schema: z.ZodMiniObject;
  /** What is wrong with `vars` for this module, one phrase per variable ("TABLE_NAME is required"); empty when nothing is. */
  problems(vars: Readonly<Record<string, string | undefined>>): string[];
}

const DECLARED = Symbol.for('support-desk.settings');

/** Whether a value (e.g. an export of a `settings.ts`) is a settings declaration. */
export const isSettings = (value: unknown): value is Settings<unknown> => typeof value === 'function' && DECLARED in value;

/** The message of a settings failure, the same at cold start and at synth. */
export const invalidSettingsMessage = (module: string, problems: readonly string[], functionName?: string): string =>
  `Invalid environment${functionName ? ` for function ${functionName}` : ''}: ${problems.join('; ')} (${module})`;

/** Each declaration's kept values, forgotten by forgetReadSettings. */
const kept = new Set<{ cached?: unknown }>();

/**
 * Read every module's settings from `process.env` again at their next call. For the test runner, where one process
 * runs test files one after another and a file's environment is its own (test/support/setup-env.ts); a function
 * reads its settings once, as a cold start does.
 */
export function forgetReadSettings(): void {
  for (const k of kept) k.cached = undefined;
}

/**
 * Declare the settings `module` reads. Nothing is read until the reader is
 * first called, so a module that reads them at load fails at init, and one
 * that reads them on first use fails there; either way the error names the
 * function (AWS_LAMBDA_FUNCTION_NAME), the variable and the module.
 */
export function defineSettings<S extends z.ZodMiniObject>(module: string, schema: S): Settings<z.output<S>> {
  // Only the declared variables, and an empty one counts as unset (as a shell's `X=` means "no X").
  const input = (vars: Readonly<Record<string, string | undefined>>) => Object.fromEntries(Object.keys(schema.shape).map((k) => [k, vars[k] === '' ? undefined : vars[k]]));
  const check = (vars: Readonly<Record<string, string | undefined>>) => {
    const given = input(vars);
    const parsed = schema.safeParse(given);
    return { parsed, problems: parsed.success ? [] : describe(parsed.error, given) };
  };
  const state: { cached?: { value: z.output<S> } } = {};
  kept.add(state);
  const read = () => {
    if (!state.cached) {
      const { parsed, problems } = check(process.env);
      if (!parsed.success) throw new InvalidSettingsError(invalidSettingsMessage(module, problems, process.env.AWS_LAMBDA_FUNCTION_NAME));
      state.cached = { value: parsed.data };
    }
    return state.cached.value;
  };
  return Object.assign(read, { module, schema, problems: (vars: Readonly<Record<string, string | undefined>>) => check(vars).problems, [DECLARED]: true });
}

/** One phrase per variable; values are never echoed, since some are secrets. */
function describe(error: z.core.$ZodError, given: Record<string, string | undefined>): string[] {
  const phrases = error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '');
    // Cross-variable rules (refine) word their own message, e.g. "EMAIL_FROM is required with EMAIL_TRANSPORT=ses".
    if (issue.code === 'custom' || !name) return issue.message;
    return given[name] === undefined ? `${name} is required` : `${name} is invalid: ${issue.message}`;
  });
  return [...new Set(phrases)];
}

/** The AWS Parameters and Secrets extension (shared/config/secrets.ts), at the first secret read through it. */
export const secretsExtensionSettings = defineSettings(
  'shared/config/secrets.ts',
  z.object({
    /** The extension layer's port (its default); the local stack gives each function with the layer its own. */
    PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(65535)), 2773),
    /** Set by Lambda itself (and the local stack); the extension checks it on every call. */
    AWS_SESSION_TOKEN: z.optional(z.string().check(z.minLength(1))),
  }),
);
