/** Cycles of an import graph, for the file-level and the module-level checks (test/unit/import-cycles.test.ts, module-cycles.test.ts). */

/**
 * One cycle per strongly connected component that has one (Tarjan), each the shortest way from
 * the component's first file (by name) back to itself, written `a -> b -> a`.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) components.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);

  return components.map((component) => {
    const members = new Set(component);
    const start = [...component].sort()[0];
    // Breadth first inside the component: the first path that comes back to start is a shortest cycle.
    const cameFrom = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      for (const next of graph.get(queue[i]) ?? []) {
        if (next === start) {
          const path = [start];
          for (let at = queue[i]; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
          return [...path, start].join(' -> ');
        }
        if (members.has(next) && !cameFrom.has(next)) {
          cameFrom.set(next, queue[i]);
          queue.push(next);
        }
      }
    }
    throw new Error(`no way back to ${start} inside its component`);
  });
}
