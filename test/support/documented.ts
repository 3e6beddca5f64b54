import { allRoutes } from '#app/registry.ts';
import { errorStatuses } from '#shared/http/contract.ts';

/**
 * A Prism validation proxy's status check over the e2e traffic, in process: the test client records the method,
 * path and status of every answer, and each file ends by holding them against what each operation documents
 * (useGateway's afterAll). The OpenAPI document lists for each operation its success and errorStatuses(route)
 * (test/unit/openapi.test.ts holds it to that), which this reads directly: generating the document costs 0.4 s a
 * file. Paths no route matches (the catch-all's 404, the gateway's own pages) are not checked.
 */
const seen = new Map<string, { method: string; path: string; status: number }>();

export function recordAnswer(method: string, url: string, status: number): void {
  const path = new URL(url, 'http://local').pathname;
  seen.set(`${method.toUpperCase()} ${path} ${status}`, { method: method.toUpperCase(), path, status });
}

interface Operation {
  method: string;
  template: string;
  segments: string[];
  /** How many segments are literal: a literal beats a parameter, as in API Gateway. */
  literals: number;
  documented: Set<number>;
}

let operations: Operation[] | undefined;
const compile = (): Operation[] =>
  allRoutes().map((route) => {
    const segments = route.path.split('/').filter(Boolean);
    const literals = segments.filter((s) => !s.startsWith('{')).length;
    return { method: route.method, template: route.path, segments, literals, documented: new Set([route.success.status, ...errorStatuses(route)]) };
  });

function operationOf(method: string, path: string): Operation | undefined {
  const parts = path.split('/').filter(Boolean);
  let best: Operation | undefined;
  for (const op of (operations ??= compile())) {
    if (op.method !== method || op.segments.length !== parts.length) continue;
    if (!op.segments.every((s, i) => s.startsWith('{') || s === parts[i])) continue;
    if (!best || op.literals > best.literals) best = op;
  }
  return best;
}

/**
 * The answers recorded since the last call whose status their operation does not document, as `METHOD template
 * status`. The next call starts afresh: a test worker runs several files in one process.
 */
export function undocumentedAnswers(): string[] {
  const found = new Set<string>();
  const answers = [...seen.values()];
  seen.clear();
  for (const { method, path, status } of answers) {
    const op = operationOf(method, path);
    if (op && !op.documented.has(status)) found.add(`${method} ${op.template} ${status}`);
  }
  return [...found].sort();
}
