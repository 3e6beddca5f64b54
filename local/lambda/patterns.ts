/**
 * EventBridge / Lambda event-filter pattern matching, for the patterns the
 * template holds (bus rules, stream filters): every key of the pattern must
 * match; a list matches when the value equals one of its literals or satisfies
 * one of its content filters (`prefix`, `exists`, `anything-but`); an object
 * recurses. A value that is itself a list matches when any element does.
 * Anything else in a pattern is refused loudly rather than matched loosely.
 */
export function matchesPattern(pattern: unknown, event: unknown): boolean {
  if (!pattern || typeof pattern !== 'object' || Array.isArray(pattern)) throw new Error(`Invalid event pattern: ${JSON.stringify(pattern)}`);
  for (const [key, rule] of Object.entries(pattern)) {
    const value = event && typeof event === 'object' ? (event as Record<string, unknown>)[key] : undefined;
    if (Array.isArray(rule)) {
      if (!matchesList(rule, value)) return false;
    } else if (rule && typeof rule === 'object') {
      if (!value || typeof value !== 'object' || !matchesPattern(rule, value)) return false;
    } else throw new Error(`Invalid event pattern at ${key}: ${JSON.stringify(rule)}`);
  }
  return true;
}

function matchesList(rules: unknown[], value: unknown): boolean {
  const values = Array.isArray(value) ? value : [value];
  return rules.some((rule) => {
    if (rule === null || typeof rule !== 'object') return value !== undefined && values.some((v) => v === rule);
    const [[op, arg]] = Object.entries(rule as Record<string, unknown>);
    switch (op) {
      case 'exists':
        return arg ? value !== undefined : value === undefined;
      case 'prefix':
        return values.some((v) => typeof v === 'string' && v.startsWith(String(arg)));
      case 'anything-but': {
        const not = Array.isArray(arg) ? arg : [arg];
        return value !== undefined && values.every((v) => !not.includes(v));
      }
      default:
        throw new Error(`Unsupported event pattern filter locally: ${op}`);
    }
  });
}
