import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { invalidSettingsMessage, isSettings, type Settings } from '#shared/config/settings.ts';
import { bundles } from './imports.ts';
import { PROJECT_ROOT } from './service-function.ts';

export interface Declared {
  /** The `settings.ts` that declares it, relative to the project root. */
  file: string;
  settings: Settings<unknown>;
}

/**
 * Every settings declaration of the code the functions are built from: the
 * exports of each `settings.ts` under shared/ and functions/ (by convention,
 * so a new declaration is checked without being listed anywhere).
 */
export const DECLARED_SETTINGS: readonly Declared[] = await (async () => {
  const files = ['shared', 'functions'].flatMap((dir) =>
    readdirSync(join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => basename(f) === 'settings.ts')
      .map((f) => `${dir}/${f.split('\\').join('/')}`),
  );
  const loaded = await Promise.all(files.sort().map(async (file) => ({ file, exports: Object.values(await import(join(PROJECT_ROOT, file))) })));
  return loaded.flatMap(({ file, exports }) => exports.filter(isSettings).map((settings) => ({ file, settings })));
})();

/** The settings a function's bundle reads: those of every module it includes. */
export const settingsOf = (entry: string): Settings<unknown>[] => DECLARED_SETTINGS.filter((d) => bundles(entry, d.settings.module)).map((d) => d.settings);

/**
 * What a function finds wrong with its environment at init, one message per
 * module: the template's variables (a reference such as a queue URL stands for
 * the string AWS fills in) plus what the Lambda service itself sets in every
 * sandbox, which a template cannot (AWS_REGION is reserved).
 */
export function settingsProblems(functionName: string, entry: string, variables: Record<string, unknown>, region: string): string[] {
  const vars: Record<string, string> = { AWS_REGION: region, AWS_DEFAULT_REGION: region, AWS_LAMBDA_FUNCTION_NAME: functionName };
  for (const [k, v] of Object.entries(variables)) vars[k] = typeof v === 'string' ? v : 'resolved-at-deploy';
  return settingsOf(entry).flatMap((s) => {
    const problems = s.problems(vars);
    return problems.length ? [invalidSettingsMessage(s.module, problems, functionName)] : [];
  });
}

/** Fail the synth when a function lacks a setting that a module of its bundle requires, naming the function and the variable. */
export function checkFunctionSettings(functionName: string, entry: string, variables: Record<string, unknown>, region: string): void {
  const problems = settingsProblems(functionName, entry, variables, region);
  if (problems.length) throw new Error(problems.join('\n'));
}
